import { Worker } from "node:worker_threads";
import { batcher } from "../../batcher.ts";
import { type Preparation, type PreparationInput, type PreparationKeys, preparation } from "./preparation.ts";

export type Preparer = {
  prepare(input: PreparationInput): Promise<Preparation>;
  close(): Promise<void>;
};

const THREAD = new URL("./preparation-thread.mjs", import.meta.url);

/**
 * The per-invoice cryptography of a sign (canonical form, sealing, QR encryption: about a fifth of
 * the sign path's time on the event loop) on a thread of its own, so it runs on another core
 * while the event loop parses, validates and writes. The inputs of one turn of the event loop go
 * over in one message; two such batches may be out at once, so the thread prepares the next batch
 * while the last one is being written. With `thread: false` the same work runs in place (a machine
 * with one core).
 */
export function preparer(keys: PreparationKeys, options: { thread: boolean }): Preparer {
  if (!options.thread) {
    const prepare = preparation(keys);
    return { prepare: async (input) => prepare(input), close: async () => {} };
  }
  let worker: Worker | undefined;
  let nextId = 0;
  const waiting = new Map<number, { resolve(results: Preparation[]): void; reject(err: Error): void }>();

  function failAll(err: Error) {
    for (const { reject } of waiting.values()) reject(err);
    waiting.clear();
  }

  // Started on the first sign, and again after a crash: a process that never signs never pays for it.
  function thread(): Worker {
    if (worker) return worker;
    const started = new Worker(THREAD, { workerData: keys });
    started.on("message", (message: { id: number; results?: Preparation[]; error?: string }) => {
      const pending = waiting.get(message.id);
      waiting.delete(message.id);
      // Idle, the thread must not keep the process alive; while a batch is out, it must.
      if (waiting.size === 0) started.unref();
      if (!pending) return;
      if (message.results) pending.resolve(message.results);
      else pending.reject(new Error(`preparing the invoices failed: ${message.error}`));
    });
    started.on("error", (err) => failAll(err));
    started.on("exit", (code) => {
      if (worker === started) worker = undefined;
      failAll(new Error(`the preparation thread stopped (exit code ${code})`));
    });
    worker = started;
    return started;
  }

  const run = (inputs: PreparationInput[]) =>
    new Promise<Preparation[]>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      const target = thread();
      target.ref();
      target.postMessage({ id, inputs });
    });
  const batches = batcher<PreparationInput, Preparation>(
    async (inputs) => (await run(inputs)).map((value) => ({ ok: true, value })),
    { maxBatch: 64, concurrency: 2 },
  );

  return {
    prepare: (input) => batches.submit(input),
    async close() {
      const stopping = worker;
      worker = undefined;
      await stopping?.terminate();
    },
  };
}
