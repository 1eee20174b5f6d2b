/*
 * What a walk-through is, read from the markdown a reader reads: the shell blocks marked
 * `<!-- walkthrough: NAME -->` … `<!-- /walkthrough -->`. The blocks of one NAME in one file are one
 * walk-through, run in their order as one shell session (a step-by-step guide's variables carry from
 * one step's block to the next). Its first mark says who starts the servers: by default the test
 * starts a fresh sandbox for it (as `npm start` in another terminal); `<!-- walkthrough: NAME, own
 * servers -->` starts and stops its own, as the reader does in the same shell.
 *
 * The answers a block shows are the comment lines right after a command, when the first of them looks
 * like an answer (`{`, `[`, `HTTP/`, a status code, `%PDF`). Each further line `# name: value` (a
 * header) or one that looks like an answer is one more line of it; a line starting `#  ` (two spaces)
 * goes on from the one before it, with a space between them or none (an answer wrapped to fit the page).
 * Other comments explain, and are not compared. The shown lines must be lines of the output, in
 * their order (others may come between them: the headers not shown); `…` stands for any text.
 */
import fs from "node:fs";
import path from "node:path";

export type Walkthrough = { file: string; name: string; ownServers: boolean; script: string };
export type Step = { command: string; shown: string[] };

const MARKED =
  /<!-- walkthrough: ([\w-]+)(, own servers)? -->\s*?\n( *)```(?:sh|bash)\n([\s\S]*?)\n\3```\s*<!-- \/walkthrough -->/g;

/** A block indented under a list item, as it runs: without its indentation. */
function unindented(body: string, indent: string): string {
  return body
    .split("\n")
    .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
    .join("\n");
}

/** The walk-throughs of one markdown text, in the order of their first block. */
export function walkthroughsOf(file: string, text: string): Walkthrough[] {
  const byName = new Map<string, Walkthrough>();
  for (const match of text.matchAll(MARKED)) {
    const [, name = "", own, indent = "", body = ""] = match;
    const script = unindented(body, indent);
    const known = byName.get(name);
    if (known) known.script += `\n${script}`;
    else byName.set(name, { file, name, ownServers: own !== undefined, script });
  }
  return [...byName.values()];
}

/** README.md and docs/*.md, relative to `root`: where walk-throughs are written. */
export function markdownFiles(root: string): string[] {
  const docs = fs
    .readdirSync(path.join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => path.join("docs", name));
  return ["README.md", ...docs];
}

/** The walk-throughs of README.md and docs/*.md, in their files' order. */
export function walkthroughs(root: string): Walkthrough[] {
  return markdownFiles(root).flatMap((file) =>
    walkthroughsOf(file, fs.readFileSync(path.join(root, file), "utf8")),
  );
}

/**
 * The shell blocks of a markdown text that show answers but are not marked as a walk-through, by
 * the line they start on: shown answers that nothing runs drift from what the service answers.
 */
export function unmarkedAnswers(text: string): number[] {
  const lines: number[] = [];
  for (const match of text.matchAll(
    /(<!-- walkthrough[^\n]*-->\s*?\n)?( *)```(?:sh|bash)\n([\s\S]*?)\n\2```/g,
  )) {
    if (match[1] !== undefined) continue;
    const script = unindented(match[3] ?? "", match[2] ?? "");
    if (steps(script).some((step) => step.shown.length > 0)) {
      lines.push(text.slice(0, match.index).split("\n").length);
    }
  }
  return lines;
}

const FIRST = /^# (\{|\[|HTTP\/|[1-5]\d\d\b|%PDF)/;
const FURTHER = /^# ([a-z][a-z0-9-]*: |\{|\[|HTTP\/|[1-5]\d\d\b)/;

/** The commands of a script with the answers it shows, each command with the lines before it. */
export function steps(script: string): Step[] {
  const lines = script.split("\n");
  const found: Step[] = [];
  let command: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    command.push(line);
    if (line.startsWith("#") || !FIRST.test(lines[i + 1] ?? "")) continue;
    const shown: string[] = [];
    for (;;) {
      const next = lines[i + 1];
      if (next === undefined) break;
      if (shown.length > 0 && next.startsWith("#  "))
        shown[shown.length - 1] += `\n${next.slice(3).trimStart()}`;
      else if (shown.length === 0 || FURTHER.test(next)) shown.push(next.slice(2));
      else break;
      i++;
    }
    found.push({ command: command.join("\n"), shown });
    command = [];
  }
  if (command.some((line) => line.trim() !== "" && !line.startsWith("#"))) {
    found.push({ command: command.join("\n"), shown: [] });
  }
  return found;
}

/** `text` as a regular expression that matches it as written. */
export const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A shown line as a pattern of one whole output line: `…` any text, a space or none where it was
 * wrapped, the rest as written.
 */
function pattern(shown: string): RegExp {
  const wrapped = shown.split("…").map((part) => part.split("\n").map(escapeRegExp).join(" ?"));
  return new RegExp(`^${wrapped.join(".*?")}$`);
}

/** The first shown line that is not a line of `output` after the ones before it, or none. */
export function unmatched(shown: string[], output: string): string | undefined {
  const lines = output.split("\n").map((line) => line.replace(/\r$/, "").trim());
  let at = 0;
  for (const line of shown) {
    const wanted = pattern(line);
    while (at < lines.length && !wanted.test(lines[at] as string)) at++;
    if (at === lines.length) return line;
    at++;
  }
  return undefined;
}
