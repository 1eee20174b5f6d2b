import { Worker } from "node:worker_threads";
import { FairQueue, type Job, QueueFull } from "../../../threads/fair-queue.ts";
import { type InvoicePdfInput, renderInvoicePdf } from "./render.ts";

/** Whose PDF it is (its share of the queue), and the signal that drops it while it waits. */
export type RenderOptions = { business?: string | undefined; signal?: AbortSignal | undefined };

export type PdfRenderer = {
  render(input: InvoicePdfInput, options?: RenderOptions): Promise<Buffer>;
  /** Throws the PdfRendererBusy a PDF of `business` would meet now: refused before its invoice is read. */
  admit(business: string | undefined): void;
  /** PDFs rendered, dropped while waiting (client gone), refused (queue full); waiting and rendering now. */
  stats(): { rendered: number; dropped: number; refused: number; waiting: number; running: number };
  close(): Promise<void>;
};

/** The business's share of the queue is used: the caller answers 503, naming its backlog, and a retry delay. */
export class PdfRendererBusy extends QueueFull {}

const THREAD = new URL("./thread.mjs", import.meta.url);

/** PDFs of one business that may wait, and PDFs that may wait in all. */
export const PDF_SHARE = 4;
export const PDF_QUEUE = 32;

/**
 * Renders PDFs on a thread of its own. A full invoice takes ~20 ms, a 300-line one ~80 ms (p95
 * 140 ms, bench/RESULTS.md), the heaviest one a 1 MiB body holds seconds: on the event loop that
 * would hold up every other request for as long. One at a time, from a queue shared fairly between
 * businesses (src/threads/fair-queue.ts): at most `share` PDFs of one business wait, at most
 * `maxQueue` in all, taken in turn by business; a waiting PDF whose client went away is never
 * rendered. One still rendering `timeLimitMs` after the thread took it fails and its thread is
 * replaced (a thread that does not take it within as long, too). With
 * `thread: false` the work runs in place (a machine with one core), from the same queue.
 */
export function pdfRenderer(options: {
  thread: boolean;
  maxQueue?: number;
  share?: number;
  timeLimitMs?: number;
}): PdfRenderer {
  const timeLimitMs = options.timeLimitMs ?? 10_000;
  const queue = new FairQueue<InvoicePdfInput, Buffer>({
    share: options.share ?? PDF_SHARE,
    capacity: options.maxQueue ?? PDF_QUEUE,
    work: { one: "PDF", plural: "PDFs", verb: "rendered" },
    refusal: PdfRendererBusy,
  });
  // The thread a job runs on: a replaced thread's exit must not fail the next thread's job.
  let current:
    | { id: number; job: Job<InvoicePdfInput, Buffer>; timer?: NodeJS.Timeout; on?: Worker }
    | undefined;
  let worker: Worker | undefined;
  let nextId = 0;
  let closed = false;

  function finish(id: number, outcome: { pdf?: Uint8Array; error?: string }) {
    if (current?.id !== id) return;
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
    started.on(
      "message",
      (message: { started: number } | { id: number; pdf?: Uint8Array; error?: string }) => {
        if ("started" in message) {
          if (current?.id === message.started) current.timer = limit(message.started, timeLimitMs);
        } else finish(message.id, message);
      },
    );
    started.on("error", () => undefined);
    started.on("exit", () => {
      if (worker === started) worker = undefined;
      if (current?.on === started) finish(current.id, { error: "the rendering thread stopped" });
    });
    worker = started;
    return started;
  }

  function next() {
    if (current || closed) return;
    const job = queue.take();
    if (!job) {
      worker?.unref();
      return;
    }
    const id = nextId++;
    if (!options.thread) {
      current = { id, job };
      renderInvoicePdf(job.input).then(
        (pdf) => finish(id, { pdf }),
        (err: unknown) => finish(id, { error: err instanceof Error ? err.message : String(err) }),
      );
      return;
    }
    const target = thread();
    target.ref();
    // Until the thread takes it (a new thread starts first), then from when it does (see `thread`).
    current = { id, job, timer: limit(id, timeLimitMs), on: target };
    target.postMessage({ id, input: job.input });
  }

  /** Fails job `id` unless it is done within `ms`, and replaces the thread stuck on it. */
  function limit(id: number, ms: number): NodeJS.Timeout {
    clearTimeout(current?.timer);
    return setTimeout(() => {
      const stuck = worker;
      worker = undefined;
      finish(id, { error: `no PDF within ${ms} ms` });
      void stuck?.terminate();
    }, ms);
  }

  return {
    render(input, { business, signal } = {}) {
      if (closed) return Promise.reject(new Error("the PDF renderer is closed"));
      const rendered = queue.submit(business, input, signal);
      next();
      return rendered;
    },
    admit: (business) => queue.admit(business),
    stats: () => ({
      rendered: queue.counts.ran,
      dropped: queue.counts.dropped,
      refused: queue.counts.refused,
      waiting: queue.waiting,
      running: queue.running,
    }),
    async close() {
      closed = true;
      const stopping = worker;
      worker = undefined;
      queue.clear(new Error("the PDF renderer is closed"));
      await stopping?.terminate();
    },
  };
}
