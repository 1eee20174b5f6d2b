import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { threadId, Worker } from "node:worker_threads";
import { Fifo } from "../../src/threads/job-queue.ts";
import { withoutLoaders } from "../../src/threads/thread-bundle.ts";
import {
  outOfMemory,
  ThreadFailure,
  WorkerPool,
  type WorkerPoolOptions,
} from "../../src/threads/worker-pool.ts";
import type { FixtureData, FixtureJob, FixtureReply } from "./fixture-thread.ts";

const ENTRY = new URL("./fixture-thread.ts", import.meta.url);

type Options = Omit<WorkerPoolOptions<FixtureJob, FixtureReply>, "entry" | "queue"> & { data?: FixtureData };

/** A pool over the fixture module, closed when the test ends; `run` submits and pumps. */
function fixturePool(t: { after(fn: () => unknown): void }, options: Options = {}) {
  const queue = new Fifo<FixtureJob, FixtureReply>();
  const pool = new WorkerPool<FixtureJob, FixtureReply>({ entry: ENTRY, queue, ...options });
  t.after(() => pool.close(new Error("the test is over")));
  const run = (job: FixtureJob) => {
    const answer = queue.submit(job);
    pool.pump();
    return answer;
  };
  return { pool, run };
}

/** Asserts a rejection with a ThreadFailure of `kind`; returns it. */
async function failure(answer: Promise<unknown>, kind: "threw" | "stopped" | "time"): Promise<ThreadFailure> {
  const err = await answer.then(
    (value) => assert.fail(`expected a failure, got ${JSON.stringify(value)}`),
    (reason: unknown) => reason,
  );
  assert.ok(err instanceof ThreadFailure, String(err));
  assert.equal(err.failure.kind, kind, err.message);
  return err;
}

test("the thread starts with the first job, not before, and stays for the next", async (t) => {
  const { pool, run } = fixturePool(t);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(pool.threadsStarted, 0, "a pool never used starts no thread");
  const first = await run({ op: "echo", value: "one" });
  assert.equal(first.value, "one");
  assert.notEqual(first.threadId, threadId, "answered on another thread");
  const second = await run({ op: "echo", value: "two" });
  assert.deepEqual([second.threadId, second.handled, second.mains], [first.threadId, 2, 1]);
  assert.equal(pool.threadsStarted, 1);
});

test("the thread runs its module from one bundle: import.meta.url is the module's own file, stack traces name the entry, loaders are not inherited", async (t) => {
  const { run } = fixturePool(t);
  const { value } = await run({ op: "where" });
  const where = value as { url: string; words: string; execArgv: string[]; stack: string };
  assert.equal(where.url, ENTRY.href, "what the module finds beside itself, it finds as under tsx");
  assert.equal(where.words, "import.meta.url", "the words in a string are left alone");
  // Threads need no loader, and each would start a thread of its own: the process's are not passed on.
  assert.ok(!where.execArgv.some((arg) => /^--(import|require|loader)/.test(arg)), where.execArgv.join(" "));
  assert.deepEqual(
    withoutLoaders([
      "--import",
      "tsx",
      "--max-old-space-size=64",
      "--import=./a.mjs",
      "--require",
      "b",
      "--loader",
      "c",
      "--enable-source-maps",
    ]),
    ["--max-old-space-size=64", "--enable-source-maps"],
  );
  // A stack trace names the bundle by its entry, not by the whole data: URL of its code.
  assert.ok(!where.stack.includes("data:"), where.stack.slice(0, 300));
  assert.match(where.stack, /fixture-thread\.ts\?thread-bundle:\d+:\d+/);
});

test("a job that throws fails alone; a crash fails the running job, and the jobs behind it run on a new thread", async (t) => {
  const { pool, run } = fixturePool(t);
  const thrown = await failure(run({ op: "throw", message: "no such invoice" }), "threw");
  assert.equal(thrown.message, "no such invoice");
  const before = await run({ op: "echo", value: 1 });
  assert.equal(pool.threadsStarted, 1, "a job that throws does not cost the thread");

  const crashing = run({ op: "crash" });
  const behind = run({ op: "echo", value: "behind" });
  const crashed = await failure(crashing, "stopped");
  assert.equal(crashed.failure.error?.message, "the fixture crashed");
  const after = await behind;
  assert.equal(after.value, "behind");
  assert.notEqual(after.threadId, before.threadId, "a new thread");
  assert.equal(after.handled, 1);
  assert.equal(pool.threadsStarted, 2);
});

test("a job that outgrows the thread's memory limit fails alone, said so; its thread is replaced and the jobs behind it run", async (t) => {
  const { pool, run } = fixturePool(t, { resourceLimits: { maxOldGenerationSizeMb: 32 } });
  const before = await run({ op: "echo", value: "before" });
  const started = performance.now();
  const growing = run({ op: "grow" });
  const behind = [run({ op: "echo", value: "behind" }), run({ op: "sleep", ms: 10, value: "later" })];
  const grown = await failure(growing, "stopped");
  assert.ok(outOfMemory(grown.failure), `${grown.failure.message} (${grown.failure.error?.message})`);
  // Stopped by its own limit, not by the process's (GBs) nor by a time limit (there is none).
  assert.ok(performance.now() - started < 30_000, "the limit, not the machine, stopped it");
  const answers = await Promise.all(behind);
  assert.deepEqual(
    answers.map((answer) => answer.value),
    ["behind", "later"],
    "the queue went on",
  );
  assert.notEqual(answers[0]?.threadId, before.threadId, "on a new thread");
  assert.equal(pool.threadsStarted, 2);
  // A crash is not mistaken for the limit.
  assert.ok(!outOfMemory((await failure(run({ op: "crash" }), "stopped")).failure));
});

test("the time limit counts from when the thread starts a job; past it the job fails and its thread is replaced", async (t) => {
  // The thread takes 1 s to start, longer than the limit: the first job is not charged for it.
  const { pool, run } = fixturePool(t, { timeLimitMs: 400, data: { startMs: 1000 } });
  const first = await run({ op: "echo", value: "first" });
  assert.equal(first.value, "first");

  const started = performance.now();
  const stuck = run({ op: "spin", ms: 60_000 });
  const behind = run({ op: "echo", value: "behind" });
  const timedOut = await failure(stuck, "time");
  assert.equal(timedOut.failure.ms, 400);
  const waited = performance.now() - started;
  assert.ok(waited < 20_000, `failed after ${waited.toFixed(0)} ms, not when the thread was done`);
  const after = await behind;
  assert.equal(after.value, "behind");
  assert.notEqual(after.threadId, first.threadId, "the stuck thread was replaced");
  assert.equal(pool.threadsStarted, 2);
});

test("a thread not ready within the start limit is replaced and its job fails", async (t) => {
  const { pool, run } = fixturePool(t, { startLimitMs: 200, data: { startMs: 30_000 } });
  const timedOut = await failure(run({ op: "echo", value: 1 }), "time");
  assert.equal(timedOut.failure.ms, 200);
  await failure(run({ op: "echo", value: 2 }), "time");
  assert.equal(pool.threadsStarted, 2, "each job had a thread of its own");
});

test("a thread whose module fails to start fails every waiting job with its error; the next job tries again", async (t) => {
  const { pool, run } = fixturePool(t, { data: { failStart: "no keys to start with" } });
  const answers = await Promise.allSettled([1, 2, 3].map((value) => run({ op: "echo", value })));
  for (const answer of answers) {
    assert.equal(answer.status, "rejected");
    const reason = (answer as PromiseRejectedResult).reason as Error;
    assert.ok(!(reason instanceof ThreadFailure), "the error itself: the service's fault, not the job's");
    assert.equal(reason.message, "no keys to start with");
  }
  assert.equal(pool.threadsStarted, 1, "one thread, not one per job");
  await assert.rejects(run({ op: "echo", value: 4 }), /no keys to start with/);
  assert.equal(pool.threadsStarted, 2);
});

test("the jobs of one turn go over in batches, with no more messages out than allowed", async (t) => {
  const { run } = fixturePool(t, { batch: 4, inFlight: 2 });
  // Its thread started, so that what follows counts the messages of one turn, not of the start.
  await run({ op: "echo", value: "started" });
  const posted: number[] = [];
  const postMessage = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (this: Worker, value: unknown, transfer?: never) {
    posted.push((value as { inputs: unknown[] }).inputs.length);
    return postMessage.call(this, value, transfer);
  };
  t.after(() => {
    Worker.prototype.postMessage = postMessage;
  });
  const answers = Array.from({ length: 10 }, (_, i) => run({ op: "sleep", ms: 50, value: i }));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(posted, [4, 4], "two batches out, the rest waiting for one to come back");
  const replies = await Promise.all(answers);
  assert.deepEqual(
    replies.map((reply) => reply.value),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
  assert.deepEqual(posted, [4, 4, 2]);
});

test("an answer can retire its thread: the next job gets a fresh one", async (t) => {
  const { pool, run } = fixturePool(t, {
    retire: (answer) => answer.ok && (answer.value as FixtureReply).value === "grown",
  });
  const first = await run({ op: "echo", value: "small" });
  assert.equal(
    (await run({ op: "echo", value: "grown" })).threadId,
    first.threadId,
    "answered before it goes",
  );
  const next = await run({ op: "echo", value: "small" });
  assert.notEqual(next.threadId, first.threadId);
  assert.equal(pool.threadsStarted, 2);
});

test("close fails the running and waiting jobs, and any later one, without waiting for the thread", async (t) => {
  const { pool, run } = fixturePool(t);
  await run({ op: "echo", value: "up" });
  const answers = Promise.allSettled([
    run({ op: "spin", ms: 60_000 }),
    run({ op: "echo", value: "waiting" }),
  ]);
  await new Promise((resolve) => setTimeout(resolve, 100));
  const reason = new Error("shutting down");
  const started = performance.now();
  await pool.close(reason);
  assert.ok(performance.now() - started < 10_000, "the spinning thread was terminated");
  assert.deepEqual(await answers, [
    { status: "rejected", reason },
    { status: "rejected", reason },
  ]);
  await assert.rejects(run({ op: "echo", value: "late" }), (err) => err === reason);
  assert.equal(pool.threadsStarted, 1);
});

test("an idle thread does not keep the process alive; a busy one does", () => {
  // A process of its own, which nothing else keeps alive: it must end by itself once the answer is in.
  const code = `
    const { Fifo } = await import(${JSON.stringify(new URL("../../src/threads/job-queue.ts", import.meta.url).href)});
    const { WorkerPool } = await import(${JSON.stringify(new URL("../../src/threads/worker-pool.ts", import.meta.url).href)});
    const queue = new Fifo();
    const pool = new WorkerPool({ entry: new URL(${JSON.stringify(ENTRY.href)}), queue });
    const answer = queue.submit({ op: "sleep", ms: 300, value: "answered" });
    pool.pump();
    console.log((await answer).value);
  `;
  const dir = mkdtempSync(path.join(os.tmpdir(), "worker-pool-"));
  const script = path.join(dir, "idle.mjs");
  writeFileSync(script, code);
  const child = spawnSync(process.execPath, ["--import", "tsx", script], {
    encoding: "utf8",
    timeout: 60_000,
  });
  rmSync(dir, { recursive: true, force: true });
  assert.equal(child.signal, null, "the process exited by itself, without close()");
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout.trim(), "answered", "the thread kept the process alive while it had a job");
});

test("in place (thread: false): the same module, the same queue and the same failures, on this thread", async (t) => {
  const fail = (f: { kind: string; message: string }) => new Error(`${f.kind}: ${f.message}`);
  const inPlace = fixturePool(t, { thread: false, fail });
  const threaded = fixturePool(t, { fail });
  const answers = await Promise.all([1, 2, 3].map((value) => inPlace.run({ op: "echo", value })));
  assert.deepEqual(
    answers.map((answer) => [answer.value, answer.threadId, answer.handled]),
    [
      [1, threadId, 1],
      [2, threadId, 2],
      [3, threadId, 3],
    ],
  );
  assert.equal(answers[2]?.mains, 1, "the module's main ran once");
  assert.equal(inPlace.pool.threadsStarted, 0);
  const job: FixtureJob = { op: "throw", message: "no such invoice" };
  await assert.rejects(inPlace.run(job), { message: "threw: no such invoice" });
  await assert.rejects(threaded.run(job), { message: "threw: no such invoice" });
});
