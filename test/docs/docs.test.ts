/*
 * The documentation stays complete and its links stay whole: the front page short, every setting the
 * service reads and every command the CLI has named in docs/, and every local link and anchor of
 * README.md and docs/*.md leading somewhere. The names come from the code (the environment's schema,
 * the CLI's program as built), so a setting or a command added without its documentation fails here.
 * No database, no server: the CLI's program is built, never run.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { einvoiceProgram } from "../../src/cli/program.ts";
import { RESOURCES_VARIABLE } from "../../src/cli/simulate.ts";
import { Env } from "../../src/config/env.ts";
import { escapeRegExp } from "./walkthrough-blocks.ts";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const DOCS = path.join(REPO_ROOT, "docs");
const README = path.join(REPO_ROOT, "README.md");
const FRONT_PAGE_LINES = 150;

const read = (file: string) => fs.readFileSync(file, "utf8");
const guides = () =>
  fs
    .readdirSync(DOCS)
    .filter((name) => name.endsWith(".md"))
    .map((name) => path.join(DOCS, name));
/** Every guide's text, one after the other: a name is documented when any guide has it. */
const docsText = () => guides().map(read).join("\n");

/** The lines of a markdown text outside its fenced code blocks (``` or ~~~, indented in lists too). */
function outsideFences(text: string): string[] {
  const kept: string[] = [];
  let fence: string | undefined;
  for (const line of text.split("\n")) {
    const opening = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined) {
      if (opening) fence = opening;
      else kept.push(line);
    } else if (opening !== undefined && opening[0] === fence[0] && opening.length >= fence.length) {
      fence = undefined;
    }
  }
  return kept;
}

/**
 * The anchor GitHub gives a heading: its text as rendered (code spans' content, links' text, no
 * emphasis markers), in lower case, without any character but letters, marks, digits, `_`, `-` and
 * spaces, each space a hyphen. A repeated anchor gets -1, -2, … in `seen`'s order.
 */
function githubSlug(heading: string, seen: Map<string, number> = new Map()): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`([^`]*)`/g, "$1")
    .replace(/(\*\*|__|\*)/g, "")
    .replace(/<[^>]+>/g, "");
  const base = text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}_\- ]/gu, "")
    .replace(/ /g, "-");
  const count = seen.get(base) ?? 0;
  seen.set(base, count + 1);
  return count === 0 ? base : `${base}-${count}`;
}

/** The anchors of a markdown file's headings (ATX headings outside fenced code blocks). */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of outsideFences(read(file))) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading !== undefined) anchors.add(githubSlug(heading, seen));
  }
  return anchors;
}

/** The targets of a markdown file's links and images, outside code blocks and code spans. */
function linkTargets(text: string): string[] {
  // A code span may go on over a line break, not over a blank line.
  const prose = outsideFences(text)
    .join("\n")
    .replace(/`(?:[^`\n]|\n(?!\s*\n))*`/g, "");
  return [...prose.matchAll(/!?\[(?:[^\]\n]|\n(?!\n))*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map(
    (m) => m[1] as string,
  );
}

/** Each link of `file` that leads nowhere: a missing file, or an anchor no heading of it has. */
function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  for (const target of linkTargets(read(file))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http(s), mailto and any other scheme
    const [pathPart = "", anchor] = target.split("#", 2);
    const destination = pathPart === "" ? file : path.resolve(path.dirname(file), decodeURI(pathPart));
    const name = `${path.relative(REPO_ROOT, file)}: (${target})`;
    if (!fs.existsSync(destination)) {
      broken.push(`${name}: no file ${path.relative(REPO_ROOT, destination)}`);
      continue;
    }
    if (anchor === undefined || anchor === "") continue;
    if (!destination.endsWith(".md")) {
      broken.push(`${name}: an anchor into a file that is not markdown`);
      continue;
    }
    if (!anchorsOf(destination).has(decodeURIComponent(anchor)))
      broken.push(
        `${name}: no heading of ${path.relative(REPO_ROOT, destination)} has the anchor #${anchor}`,
      );
  }
  return broken;
}

/** Every command of the program, each as its path below `einvoice` ("invoices validate"). */
function commandPaths(command: Command, above: string[] = []): string[] {
  return command.commands.flatMap((sub) => {
    const here = [...above, sub.name()];
    return [here.join(" "), ...commandPaths(sub, here)];
  });
}

test("GitHub's anchors come out of real headings: code spans, punctuation, accents, dashes and repeats", () => {
  const seen = new Map<string, number>();
  assert.equal(githubSlug("Payments and `PARTIAL`"), "payments-and-partial");
  assert.equal(
    githubSlug("The buyer's copy: PDF and verification QR"),
    "the-buyers-copy-pdf-and-verification-qr",
  );
  assert.equal(githubSlug("Invoices in UBL 2.1"), "invoices-in-ubl-21");
  assert.equal(githubSlug("The authority simulator (MBS)"), "the-authority-simulator-mbs");
  assert.equal(githubSlug("Worker threads: a share per business"), "worker-threads-a-share-per-business");
  assert.equal(
    githubSlug("einvoice — the e-invoicing API v1 for Nigeria"),
    "einvoice--the-e-invoicing-api-v1-for-nigeria",
  );
  assert.equal(githubSlug("Ọ̀yọ́ Foods Ltd, `EINVOICE_MBS_URL`"), "ọ̀yọ́-foods-ltd-einvoice_mbs_url");
  assert.equal(githubSlug("[The way in](ubl.md) **now**"), "the-way-in-now");
  assert.deepEqual(
    ["Docker", "Docker", "Docker"].map((h) => githubSlug(h, seen)),
    ["docker", "docker-1", "docker-2"],
  );
});

test("every setting the service reads (the environment's schema) is documented in docs/", () => {
  const text = docsText();
  // A name counts where it stands whole: EINVOICE_MBS_URL inside EINVOICE_MBS_URL_X would not.
  const names = [...Object.keys(Env.properties), RESOURCES_VARIABLE];
  const undocumented = names.filter((name) => !new RegExp(`(?<![A-Z0-9_])${name}(?![A-Z0-9_])`).test(text));
  assert.ok(names.length > 50, `${names.length} settings read: the schema was not found whole`);
  assert.deepEqual(undocumented, [], "settings the service reads that no guide in docs/ names");
});

test("every command and subcommand of the CLI is documented in docs/ as `einvoice <command>`", () => {
  const text = docsText();
  const paths = commandPaths(einvoiceProgram());
  // Documented: the word `einvoice` and then the command's whole path, as a reader types it
  // (`npx einvoice invoices validate …`), in prose, a code span or a code block, its words apart by
  // any white space; the path must end there, so `einvoice verify` is not found in
  // `einvoice verify-qr`, nor `einvoice key` in `einvoice keys`.
  const undocumented = paths.filter(
    (command) =>
      !new RegExp(`\\beinvoice\\s+${command.split(" ").map(escapeRegExp).join("\\s+")}(?![\\w-])`).test(text),
  );
  assert.ok(paths.includes("invoices validate") && paths.includes("simulate mbs"), paths.join(", "));
  assert.deepEqual(undocumented, [], "commands that no guide in docs/ names as `einvoice <command>`");
});

test(`the front page, README.md, has at most ${FRONT_PAGE_LINES} lines`, () => {
  const text = read(README);
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  assert.ok(lines <= FRONT_PAGE_LINES, `README.md has ${lines} lines`);
});

test("every local link and anchor of README.md and docs/*.md leads to a file and a heading", () => {
  const files = [README, ...guides()];
  assert.ok(linkTargets(read(README)).some((target) => target.startsWith("docs/")));
  assert.deepEqual(files.flatMap(brokenLinks), []);
});
