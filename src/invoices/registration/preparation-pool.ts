import { Fifo } from "../../threads/job-queue.ts";
import { failedWith, WorkerPool } from "../../threads/worker-pool.ts";
import type { Preparation, PreparationInput, PreparationKeys } from "./preparation.ts";

export type Preparer = {
  prepare(input: PreparationInput): Promise<Preparation>;
  close(): Promise<void>;
};

const THREAD = new URL("./preparation-thread.ts", import.meta.url);

/**
 * The per-invoice cryptography of a sign (canonical form, sealing, QR encryption: about a fifth of
 * the sign path's time on the event loop) on a thread of its own, so it runs on another core
 * while the event loop parses, validates and writes. The inputs of one turn of the event loop go
 * over in one message; two such batches may be out at once, so the thread prepares the next batch
 * while the last one is being written. With `thread: false` the same work runs in place (a machine
 * with one core).
 */
export function preparer(keys: PreparationKeys, options: { thread: boolean }): Preparer {
  const queue = new Fifo<PreparationInput, Preparation>();
  const pool = new WorkerPool({
    entry: THREAD,
    data: keys,
    queue,
    thread: options.thread,
    batch: 64,
    inFlight: 2,
    fail: failedWith("preparing the invoices", "the preparation thread"),
  });
  return {
    prepare(input) {
      const prepared = queue.submit(input);
      pool.pump();
      return prepared;
    },
    close: () => pool.close(new Error("the preparation thread is closed")),
  };
}
