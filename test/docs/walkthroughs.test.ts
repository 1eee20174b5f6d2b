/*
 * The walk-throughs of README.md and docs/ run as a reader would paste them (what a walk-through is,
 * and how its shown answers are compared: walkthrough-blocks.ts), each in bash with job control on,
 * as an interactive shell is.
 *
 * Each runs in a temporary folder that stands for a fresh clone: `package.json`, `bin/`, `src/` and
 * `node_modules/` lead to this repository's, so `npm start` and `npx einvoice` work there; `data/` is
 * its own, empty until a sandbox starts; `../shared` leads to the shared sample data. Every port the
 * text names for a local server (`localhost:8080`, `--port 8090`, `PORT=8081`) is replaced by a free
 * one. A walk-through that starts its own servers must stop them: a job still running at its end
 * fails it (and is stopped).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { cleanEnv, freePort, startServer } from "../cli/run.ts";
import { REPO_ROOT, SHARED_DIR, tempDir } from "../helpers.ts";
import {
  markdownFiles,
  steps,
  unmarkedAnswers,
  unmatched,
  type Walkthrough,
  walkthroughs,
  walkthroughsOf,
} from "./walkthrough-blocks.ts";

const MARK = "--walkthrough-step--";
const LEFT = "--walkthrough-jobs-left--";
const PORT = /(localhost:|127\.0\.0\.1:|--port |PORT=)(80\d\d)\b/g;

test("a walk-through's blocks join in order, and its answers are lines of the output in order", () => {
  const text = [
    "<!-- walkthrough: pay -->",
    "```sh",
    "A=1",
    "curl -s x",
    '# {"a":1,',
    '#  "b":2}',
    "# The next step:",
    "```",
    "<!-- /walkthrough -->",
    "Prose between the steps.",
    "1. A step in a list:",
    "   <!-- walkthrough: pay -->",
    "   ```sh",
    "   curl -si y",
    "   # HTTP/1.1 400 Bad Request",
    "   # einvoice-identical-document: …",
    '   # {"status":false,…}',
    "   ```",
    "   <!-- /walkthrough -->",
    "<!-- walkthrough: sim, own servers -->",
    "```bash",
    "echo hi",
    "```",
    "<!-- /walkthrough -->",
  ].join("\n");
  const [pay, sim, ...rest] = walkthroughsOf("x.md", text);
  assert.equal(rest.length, 0);
  assert.deepEqual(
    { name: pay?.name, own: pay?.ownServers, simOwn: sim?.ownServers },
    { name: "pay", own: false, simOwn: true },
  );
  const [first, second] = steps(pay?.script ?? "");
  assert.deepEqual(first?.shown, ['{"a":1,\n"b":2}']);
  assert.equal(first?.command, "A=1\ncurl -s x");
  assert.deepEqual(second?.shown, [
    "HTTP/1.1 400 Bad Request",
    "einvoice-identical-document: …",
    '{"status":false,…}',
  ]);
  assert.match(second?.command ?? "", /The next step:\ncurl -si y$/);
  const output =
    'HTTP/1.1 400 Bad Request\r\ncontent-type: x\r\neinvoice-identical-document: signed-at=1\r\n\r\n{"status":false,"code":400}';
  assert.equal(unmatched(second?.shown ?? [], output), undefined);
  // Out of order, or a line that is only part of an output line, does not match.
  assert.equal(
    unmatched(['{"status":false,…}', "HTTP/1.1 400 Bad Request"], output),
    "HTTP/1.1 400 Bad Request",
  );
  assert.equal(unmatched(['"status":false'], output), '"status":false');
  // Where a line was wrapped, the output may have a space or none.
  assert.equal(unmatched(['{"a":\n"b"}'], '{"a": "b"}\n{"a":"b"}'), undefined);
  assert.equal(unmatched(['{"a":\n"b"}'], '{"a":  "b"}'), '{"a":\n"b"}');
});

test("the walk-throughs are found: the front page's first invoice and the guides' ones", () => {
  const found = walkthroughs(REPO_ROOT);
  const names = found.map((block) => `${block.file}#${block.name}`);
  for (const name of [
    "README.md#first-invoice",
    "docs/getting-started.md#step-by-step",
    "docs/integrating.md#payments",
    "docs/integrating.md#idempotency",
    "docs/integrating.md#buyers-copy",
    "docs/integrating.md#inbox",
    "docs/authority.md#simulator",
    "docs/ubl.md#peppol",
  ]) {
    assert.ok(names.includes(name), `${name} is not among ${names.join(", ")}`);
  }
  const first = found.find((block) => block.name === "first-invoice") as Walkthrough;
  const shown = steps(first.script).filter((step) => step.shown.length > 0);
  assert.equal(shown.length, 3, "validate, sign and lookup show their answers");
  assert.match(shown[0]?.shown[0] ?? "", /^\{"status":true,"code":200/);
});

test("every shell block of README.md and docs/ that shows answers is a walk-through the suite runs", () => {
  const unmarked = markdownFiles(REPO_ROOT).flatMap((file) =>
    unmarkedAnswers(fs.readFileSync(path.join(REPO_ROOT, file), "utf8")).map((line) => `${file}:${line}`),
  );
  assert.deepEqual(unmarked, [], "mark each as a walk-through, or show no answers in it");
  // The check itself: a block with an answer and no mark is found, a marked one is not.
  const sample =
    '```sh\ncurl -s x\n# {"a":1}\n```\n<!-- walkthrough: w -->\n```sh\ncurl y\n# {}\n```\n<!-- /walkthrough -->';
  assert.deepEqual(unmarkedAnswers(sample), [1]);
});

for (const walkthrough of walkthroughs(REPO_ROOT)) {
  const how = walkthrough.ownServers ? "starting its own servers" : "against a fresh sandbox";
  test(`${walkthrough.file}, walk-through ${walkthrough.name}: pasted into bash ${how}, it answers as shown`, async (t) => {
    const top = tempDir(t);
    const dir = path.join(top, "einvoice");
    fs.mkdirSync(path.join(dir, "data"), { recursive: true });
    for (const entry of ["package.json", "bin", "src", "node_modules"]) {
      fs.symlinkSync(path.join(REPO_ROOT, entry), path.join(dir, entry));
    }
    fs.symlinkSync(SHARED_DIR, path.join(top, "shared"));
    const ports = new Map<string, string>();
    if (!walkthrough.ownServers) {
      const data = path.join(dir, "data");
      const sandbox = await startServer(t, {
        EINVOICE_DATA_DIR: data,
        EINVOICE_DATABASE_URL: `sqlite:${path.join(data, "einvoice.db")}`,
        EINVOICE_LOG_LEVEL: "warn",
      });
      ports.set("8080", String(sandbox.port));
    }
    for (const [, , port] of walkthrough.script.matchAll(PORT)) {
      if (!ports.has(port as string)) ports.set(port as string, String(await freePort()));
    }
    const plan = steps(walkthrough.script);
    // Each step's output ends at a mark of its own, so that each answer is compared with its own.
    const script = [
      "set -m",
      // Stopped for taking too long, it stops the jobs it started too (each a process group of its own).
      `trap 'for job in $(jobs -p); do kill -KILL -- -$job 2> /dev/null; done; exit 143' TERM`,
      ...plan.map(
        (step, i) =>
          `${step.command.replaceAll(PORT, (_, at, port) => `${at}${ports.get(port)}`)}\necho ${MARK}${i}`,
      ),
      `echo ${LEFT}$(jobs -p | tr '\\n' ' ')`,
    ].join("\n");
    const shell = spawn("bash", ["-c", script], {
      cwd: dir,
      env: cleanEnv({ EINVOICE_LOG_LEVEL: "warn" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    shell.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    shell.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const timer = setTimeout(() => shell.kill("SIGTERM"), 120_000);
    const [code] = await once(shell, "close");
    clearTimeout(timer);
    // Whatever the walk-through left running is stopped, its process group at once.
    const left = (stdout.split(LEFT)[1] ?? "").trim().split(/\s+/).filter(Boolean);
    for (const job of left) {
      try {
        process.kill(-Number(job), "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    const outputs = stdout.split(new RegExp(`${MARK}\\d+\\n`));
    assert.equal(code, 0, `the walk-through failed (${code}) after:\n${outputs.at(-1)}\nstderr: ${stderr}`);
    plan.forEach((step, i) => {
      if (step.shown.length === 0) return;
      const missing = unmatched(step.shown, outputs[i] ?? "");
      assert.equal(
        missing,
        undefined,
        `the answer to\n${step.command}\nwas\n${outputs[i]}\nwithout the line\n${missing}\n(stderr: ${stderr})`,
      );
    });
    assert.deepEqual(left, [], "the walk-through stops the servers it started");
  });
}
