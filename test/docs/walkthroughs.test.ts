/*
 * The walk-throughs of README.md and docs/ run as a reader would paste them: each shell block marked
 * `<!-- walkthrough: NAME -->` … `<!-- /walkthrough -->` runs in bash against a fresh sandbox
 * (`einvoice serve` on a new data folder, as `npm start` makes it), and the answers it shows are
 * compared with the answers it gets.
 *
 * A block runs in a temporary folder that stands for the repository's root: its `data/` is the
 * sandbox's data folder (sandbox-credentials.json is there), and `src/` leads to the sources (the
 * sample invoices of /docs). The sandbox answers on the port the block names (8080), replaced by the
 * test's own free port.
 *
 * What a block shows as an answer: the comment lines right after a command, when the first of them
 * starts as an answer does (`{`, `[`, `HTTP/` or a status code); a line starting `#  ` (two spaces)
 * goes on from the one before it. `…` stands for any text. Other comments explain, and are not
 * compared.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startServer } from "../cli/run.ts";
import { tempDir } from "../helpers.ts";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const run = promisify(execFile);

type Block = { file: string; name: string; script: string };
type Step = { command: string; shown: string };

/** The walk-through blocks of README.md and docs/*.md, in their files' order. */
function walkthroughs(): Block[] {
  const docs = fs
    .readdirSync(path.join(REPO_ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => path.join("docs", name));
  const blocks: Block[] = [];
  for (const file of ["README.md", ...docs]) {
    const text = fs.readFileSync(path.join(REPO_ROOT, file), "utf8");
    const marked = /<!-- walkthrough: ([\w-]+) -->\s*```(?:sh|bash)\n([\s\S]*?)```\s*<!-- \/walkthrough -->/g;
    for (const match of text.matchAll(marked)) {
      blocks.push({ file, name: match[1] as string, script: match[2] as string });
    }
  }
  return blocks;
}

const ANSWER = /^# (\{|\[|HTTP\/|[1-5]\d\d\b)/;

/** The commands of a block with the answers it shows, each command with the lines before it. */
function steps(script: string): Step[] {
  const lines = script.split("\n");
  const found: Step[] = [];
  let command: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    command.push(line);
    const next = lines[i + 1];
    if (line.startsWith("#") || next === undefined || !ANSWER.test(next)) continue;
    let shown = "";
    while (
      lines[i + 1] !== undefined &&
      (ANSWER.test(lines[i + 1] as string) || (lines[i + 1] as string).startsWith("#  "))
    ) {
      i++;
      const answer = lines[i] as string;
      shown += answer.startsWith("#  ") ? answer.slice(3) : answer.slice(2);
    }
    found.push({ command: command.join("\n"), shown });
    command = [];
  }
  if (command.some((line) => line.trim() !== "" && !line.startsWith("#"))) {
    found.push({ command: command.join("\n"), shown: "" });
  }
  return found;
}

/** `shown` as a pattern: `…` any text, the rest as written. */
function pattern(shown: string): RegExp {
  const parts = shown.split("…").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join("[\\s\\S]*?")}$`);
}

const MARK = "--walkthrough-step--";

test("the walk-throughs are found: at least the front page's first invoice", () => {
  const names = walkthroughs().map((block) => `${block.file}#${block.name}`);
  assert.ok(names.includes("README.md#first-invoice"), names.join(", "));
  const first = walkthroughs().find((block) => block.name === "first-invoice") as Block;
  const shown = steps(first.script).filter((step) => step.shown !== "");
  assert.equal(shown.length, 3, "validate, sign and lookup show their answers");
  assert.match(shown[0]?.shown ?? "", /^\{"status":true,"code":200/);
});

for (const block of walkthroughs()) {
  test(`${block.file}, walk-through ${block.name}: pasted into bash against a fresh sandbox, it answers as shown`, async (t) => {
    const dir = tempDir(t);
    const data = path.join(dir, "data");
    fs.mkdirSync(data);
    fs.symlinkSync(path.join(REPO_ROOT, "src"), path.join(dir, "src"));
    const server = await startServer(t, {
      EINVOICE_DATA_DIR: data,
      EINVOICE_DATABASE_URL: `sqlite:${path.join(data, "einvoice.db")}`,
      EINVOICE_LOG_LEVEL: "warn",
    });
    const plan = steps(block.script);
    // Each step's output ends at a mark of its own, so that each answer is compared with its own.
    const script = plan
      .map(
        (step, i) =>
          `${step.command.replaceAll(/(localhost|127\.0\.0\.1):8080/g, `127.0.0.1:${server.port}`)}\necho ${MARK}${i}`,
      )
      .join("\n");
    const { stdout, stderr } = await run("bash", ["-c", script], { cwd: dir, timeout: 60_000 }).catch(
      (err: { stdout?: string; stderr?: string; message: string }) =>
        assert.fail(`the block failed: ${err.message}\n${err.stdout ?? ""}\n${err.stderr ?? ""}`),
    );
    const outputs = stdout.split(new RegExp(`${MARK}\\d+\\n`));
    plan.forEach((step, i) => {
      if (step.shown === "") return;
      const got = (outputs[i] ?? "").trim();
      assert.match(got, pattern(step.shown), `the answer to\n${step.command}\n(stderr: ${stderr})`);
    });
  });
}
