import { threadId } from "node:worker_threads";
import type { ThreadMain } from "../../src/threads/worker-pool.ts";

/** A thread module for test/threads/worker-pool.test.ts: each job says what to do. */
export type FixtureData = { startMs?: number; failStart?: string };
export type FixtureJob =
  | { op: "echo"; value: unknown }
  | { op: "throw"; message: string }
  /** An uncaught error a moment later: the thread stops. */
  | { op: "crash" }
  /** Holds the thread: only terminating it ends the job early. */
  | { op: "spin"; ms: number }
  | { op: "sleep"; ms: number; value?: unknown }
  /** Keeps allocating: only the thread's memory limit ends it. */
  | { op: "grow" }
  /** Where the thread's module runs from, and with which Node options. */
  | { op: "where" };
export type FixtureReply = { value: unknown; threadId: number; handled: number; mains: number };

let mains = 0;

export default (async (data: FixtureData = {}) => {
  mains++;
  if (data.failStart) throw new Error(data.failStart);
  if (data.startMs) await new Promise((resolve) => setTimeout(resolve, data.startMs));
  let handled = 0;
  return async (job: FixtureJob): Promise<FixtureReply> => {
    handled++;
    if (job.op === "throw") throw new Error(job.message);
    if (job.op === "crash") {
      setImmediate(() => {
        throw new Error("the fixture crashed");
      });
      await new Promise(() => undefined);
    }
    if (job.op === "spin") {
      const end = Date.now() + job.ms;
      while (Date.now() < end);
    }
    if (job.op === "grow") {
      const held: number[][] = [];
      for (;;) held.push(Array.from({ length: 100_000 }, (_, i) => i));
    }
    if (job.op === "sleep") await new Promise((resolve) => setTimeout(resolve, job.ms));
    if (job.op === "where") {
      const value = {
        url: import.meta.url,
        words: "import.meta.url",
        execArgv: process.execArgv,
        stack: new Error("where").stack,
      };
      return { value, threadId, handled, mains };
    }
    const value = job.op === "echo" || job.op === "sleep" ? job.value : undefined;
    return { value, threadId, handled, mains };
  };
}) satisfies ThreadMain;
