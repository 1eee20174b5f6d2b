import { Worker } from "node:worker_threads";
import { type InvoicePdfInput, renderInvoicePdf } from "./render.ts";

export type PdfRenderer = {
  render(input: InvoicePdfInput): Promise<Buffer>;
  close(): Promise<void>;
};

/** More PDFs are waiting than the thread should queue: the caller answers 503 and a retry delay. */
export class PdfRendererBusy extends Error {}

const THREAD = new URL("./thread.mjs", import.meta.url);

/**
 * Renders PDFs on a thread of its own. A full invoice takes ~20 ms, a 300-line one ~80 ms (p95
 * 140 ms, bench/RESULTS.md): on the event loop that would hold up every other request for as long.
 * One at a time, at most `maxQueue` waiting; one still rendering after `timeLimitMs` fails and its
 * thread is replaced. With `thread: false` the work runs in place (a machine with one core).
 */
export function pdfRenderer(options: {
  thread: boolean;
  maxQueue?: number;
  timeLimitMs?: number;
}): PdfRenderer {
  if (!options.thread) return { render: renderInvoicePdf, close: async () => {} };
  const maxQueue = options.maxQueue ?? 32;
  const timeLimitMs = options.timeLimitMs ?? 10_000;
  type Job = { id: number; input: InvoicePdfInput; resolve(pdf: Buffer): void; reject(err: Error): void };
  const queue: Job[] = [];
  // The thread a job runs on: a replaced thread's exit must not fail the next thread's job.
  let current: { job: Job; timer: NodeJS.Timeout; on: Worker } | undefined;
  let worker: Worker | undefined;
  let nextId = 0;

  function finish(id: number, outcome: { pdf?: Uint8Array; error?: string }) {
    if (current?.job.id !== id) return;
    clearTimeout(current.timer);
    const { job } = current;
    current = undefined;
    if (outcome.pdf)
      job.resolve(Buffer.from(outcome.pdf.buffer, outcome.pdf.byteOffset, outcome.pdf.byteLength));
    else job.reject(new Error(`rendering the PDF failed: ${outcome.error ?? "the thread stopped"}`));
    next();
  }

  // Started on the first PDF, and again after a crash or a time-out: a process that never renders never pays for it.
  function thread(): Worker {
    if (worker) return worker;
    const started = new Worker(THREAD);
    started.on("message", (message: { id: number; pdf?: Uint8Array; error?: string }) =>
      finish(message.id, message),
    );
    started.on("error", () => undefined);
    started.on("exit", () => {
      if (worker === started) worker = undefined;
      if (current?.on === started) finish(current.job.id, { error: "the rendering thread stopped" });
    });
    worker = started;
    return started;
  }

  function next() {
    const job = queue.shift();
    if (!job) {
      worker?.unref();
      return;
    }
    const target = thread();
    target.ref();
    const timer = setTimeout(() => {
      const stuck = worker;
      worker = undefined;
      finish(job.id, { error: `no PDF within ${timeLimitMs} ms` });
      void stuck?.terminate();
    }, timeLimitMs);
    current = { job, timer, on: target };
    target.postMessage({ id: job.id, input: job.input });
  }

  return {
    render(input) {
      if (queue.length >= maxQueue) {
        return Promise.reject(new PdfRendererBusy(`${queue.length} PDFs are waiting to be rendered`));
      }
      return new Promise<Buffer>((resolve, reject) => {
        queue.push({ id: nextId++, input, resolve, reject });
        if (!current) next();
      });
    },
    async close() {
      const stopping = worker;
      worker = undefined;
      for (const job of queue.splice(0)) job.reject(new Error("the PDF renderer is closed"));
      await stopping?.terminate();
    },
  };
}
