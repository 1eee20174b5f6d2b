import assert from "node:assert/strict";
import { test } from "node:test";
import { PdfCache } from "../../src/documents/pdf/cache.ts";
import { FairQueue, JobDropped, QueueFull } from "../../src/threads/fair-queue.ts";

const work = { one: "job", plural: "jobs", verb: "run" };

/** Runs every waiting job in the queue's order, answering its input; the order they ran in. */
function drain(queue: FairQueue<string, string>): string[] {
  const ran: string[] = [];
  for (let job = queue.take(); job; job = queue.take()) {
    ran.push(job.input);
    job.resolve(job.input);
  }
  return ran;
}

test("the queue is served round robin by business, not first in first out", async () => {
  const queue = new FairQueue<string, string>({ share: 4, capacity: 32, work });
  const answers = [
    ...["a1", "a2", "a3", "a4"].map((job) => queue.submit("A", job)),
    ...["b1", "b2"].map((job) => queue.submit("B", job)),
    queue.submit("C", "c1"),
  ];
  assert.deepEqual(drain(queue), ["a1", "b1", "c1", "a2", "b2", "a3", "a4"]);
  assert.deepEqual(await Promise.all(answers), ["a1", "a2", "a3", "a4", "b1", "b2", "c1"]);
  assert.equal(queue.counts.ran, 7);
});

test("a business past its share is refused with its own backlog; others are not", async () => {
  const queue = new FairQueue<string, string>({ share: 2, capacity: 32, work });
  const running = queue.submit("A", "a0");
  const job = queue.take();
  const waiting = [queue.submit("A", "a1"), queue.submit("A", "a2")];
  await assert.rejects(queue.submit("A", "a3"), (err) => {
    assert.ok(err instanceof QueueFull);
    assert.equal(
      err.message,
      "this business has 2 jobs waiting to be run and 1 being run (at most 2 of one business's jobs wait their turn)",
    );
    assert.deepEqual(
      { ...err.backlog, retryAfter: undefined },
      {
        waiting: 2,
        running: 1,
        reason: "share",
        retryAfter: undefined,
      },
    );
    assert.ok(err.backlog.retryAfter >= 1 && err.backlog.retryAfter <= 60);
    return true;
  });
  const other = queue.submit("B", "b1");
  job?.resolve("a0");
  // B, not served yet, before A, whose first job is running.
  assert.deepEqual(drain(queue), ["b1", "a1", "a2"]);
  await Promise.all([running, ...waiting, other]);
  assert.equal(queue.counts.refused, 1);
});

test("a full queue makes room for a business with fewer waiting: the longest lane gives up its newest job", async () => {
  const queue = new FairQueue<string, string>({ share: 4, capacity: 4, work });
  const a = ["a1", "a2", "a3", "a4"].map((job) => queue.submit("A", job));
  const b = queue.submit("B", "b1");
  await assert.rejects(a[3] as Promise<string>, (err) => {
    assert.ok(err instanceof QueueFull);
    assert.deepEqual([err.backlog.waiting, err.backlog.reason], [4, "capacity"]);
    assert.match(
      err.message,
      /^this business has 4 jobs waiting to be run and 0 being run \(all 4 places .* its newest gave way/,
    );
    return true;
  });
  // B has 1 waiting, A 3: a second job of B's takes another of A's places.
  const b2 = queue.submit("B", "b2");
  await assert.rejects(a[2] as Promise<string>, QueueFull);
  // Now A and B have two each: a third of B's is refused, the queue being full.
  await assert.rejects(
    queue.submit("B", "b3"),
    (err) => err instanceof QueueFull && err.backlog.reason === "capacity",
  );
  assert.deepEqual(drain(queue), ["a1", "b1", "a2", "b2"]);
  await Promise.all([a[0], a[1], b, b2]);
});

test("a job whose signal fires while it waits leaves the queue and never runs; one already running is not stopped", async () => {
  const queue = new FairQueue<string, string>({ share: 4, capacity: 32, work });
  const first = new AbortController();
  const running = queue.submit("A", "a1", first.signal);
  const job = queue.take();
  const gone = new AbortController();
  const dropped = queue.submit("A", "a2", gone.signal);
  const kept = queue.submit("A", "a3");
  gone.abort();
  first.abort();
  await assert.rejects(dropped, JobDropped);
  assert.equal(queue.waiting, 1);
  job?.resolve("a1");
  assert.equal(await running, "a1");
  assert.deepEqual(drain(queue), ["a3"]);
  assert.equal(await kept, "a3");
  assert.deepEqual(queue.counts, { ran: 2, dropped: 1, refused: 0 });
  // Already aborted: refused at once, counted as dropped.
  await assert.rejects(queue.submit("A", "a4", AbortSignal.abort()), JobDropped);
  assert.equal(queue.counts.dropped, 2);
});

test("jobs without a business share one lane bounded by the capacity alone", async () => {
  const queue = new FairQueue<string, string>({ share: 1, capacity: 3, work });
  const jobs = ["x1", "x2", "x3"].map((job) => queue.submit(undefined, job));
  await assert.rejects(queue.submit(undefined, "x4"), QueueFull);
  assert.deepEqual(drain(queue), ["x1", "x2", "x3"]);
  await Promise.all(jobs);
});

test("the PDF cache keeps the most recently used PDFs within its bytes", () => {
  const cache = new PdfCache(10);
  cache.set("a", Buffer.alloc(4));
  cache.set("b", Buffer.alloc(4));
  assert.ok(cache.get("a"), "a is now the most recently used");
  cache.set("c", Buffer.alloc(4));
  assert.equal(cache.get("b"), undefined, "b, the least recently used, made room");
  assert.ok(cache.get("a") && cache.get("c"));
  assert.equal(cache.bytes, 8);
  cache.set("huge", Buffer.alloc(11));
  assert.equal(cache.get("huge"), undefined, "larger than the whole cache: not kept");
  assert.equal(cache.bytes, 8);
  // A view of a larger buffer is kept as a copy of its own bytes.
  const view = Buffer.alloc(100).subarray(0, 3);
  cache.set("view", view);
  assert.equal(cache.get("view")?.buffer.byteLength, 3);
  assert.ok(cache.bytes <= 10);
});
