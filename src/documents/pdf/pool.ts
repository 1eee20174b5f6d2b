import { FairQueue, QueueFull } from "../../threads/fair-queue.ts";
import { outOfMemory, WorkerPool } from "../../threads/worker-pool.ts";
import type { PdfInput } from "./render.ts";

/** Whose PDF it is (its share of the queue), and the signal that drops it while it waits. */
export type RenderOptions = { business?: string | undefined; signal?: AbortSignal | undefined };

export type PdfRenderer = {
  render(input: PdfInput, options?: RenderOptions): Promise<Buffer>;
  /** Throws the PdfRendererBusy a PDF of `business` would meet now: refused before its invoice is read. */
  admit(business: string | undefined): void;
  /** PDFs rendered, dropped while waiting (client gone), refused (queue full); waiting and rendering now. */
  stats(): { rendered: number; dropped: number; refused: number; waiting: number; running: number };
  /** Rendering threads started so far: one, plus one per thread replaced (time, memory or crash). */
  threadsStarted(): number;
  close(): Promise<void>;
};

/** The business's share of the queue is used: the caller answers 503, naming its backlog, and a retry delay. */
export class PdfRendererBusy extends QueueFull {}

/** The rendering outgrew the thread's memory limit: the invoice is too large to print. Its thread was replaced. */
export class PdfOutOfMemory extends Error {
  constructor(readonly limitMb: number) {
    super(`rendering the PDF failed: it needed more than the rendering thread's ${limitMb} MB of memory`);
  }
}

/** No PDF within the time limit: its thread was replaced. */
export class PdfTimeLimit extends Error {
  constructor(readonly ms: number) {
    super(`rendering the PDF failed: no PDF within ${ms} ms`);
  }
}

/**
 * The rendering thread's JavaScript heap. A PDF keeps all its pages until the last is drawn (each
 * page's footer says "page n of N"), about 30 KB a line: the largest invoice that prints (bounds.ts:
 * 10,000 short lines, 1.4 MB of JSON) ran out at 256 MB and rendered at 320 MB, taking twice as
 * long at 384 MB as at 512 MB, where the collector no longer works near the limit. Without a limit
 * the thread took the process's (GBs): a 100,000-line document grew it by 1.8 GB.
 */
export const PDF_THREAD_MEMORY_MB = 512;

const THREAD = new URL("./thread.ts", import.meta.url);

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
 * replaced (a thread not started within as long, too); one that outgrows `maxMemoryMb` of heap
 * stops its thread alone, fails as PdfOutOfMemory, and the next PDF gets a new thread. What is too
 * large to print is refused before it is queued (bounds.ts). With `thread: false` the work runs in
 * place (a machine with one core), from the same queue, without a memory limit of its own.
 */
export function pdfRenderer(options: {
  thread: boolean;
  maxQueue?: number;
  share?: number;
  timeLimitMs?: number;
  maxMemoryMb?: number;
}): PdfRenderer {
  const timeLimitMs = options.timeLimitMs ?? 10_000;
  const memoryMb = options.maxMemoryMb ?? PDF_THREAD_MEMORY_MB;
  const queue = new FairQueue<PdfInput, Buffer>({
    share: options.share ?? PDF_SHARE,
    capacity: options.maxQueue ?? PDF_QUEUE,
    work: { one: "PDF", plural: "PDFs", verb: "rendered" },
    refusal: PdfRendererBusy,
  });
  const pool = new WorkerPool({
    entry: THREAD,
    queue,
    thread: options.thread,
    timeLimitMs,
    startLimitMs: timeLimitMs,
    resourceLimits: { maxOldGenerationSizeMb: memoryMb },
    // Copied over from the thread as a Uint8Array (a Buffer in place): a Buffer over the same bytes.
    fromThread: (value) => {
      const pdf = value as Uint8Array;
      return Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
    },
    fail: (failure) => {
      if (outOfMemory(failure)) return new PdfOutOfMemory(memoryMb);
      if (failure.kind === "time") return new PdfTimeLimit(failure.ms ?? timeLimitMs);
      return new Error(
        `rendering the PDF failed: ${failure.kind === "threw" ? failure.message : "the rendering thread stopped"}`,
      );
    },
  });

  return {
    render(input, { business, signal } = {}) {
      const rendered = queue.submit(business, input, signal);
      pool.pump();
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
    threadsStarted: () => pool.threadsStarted,
    close: () => pool.close(new Error("the PDF renderer is closed")),
  };
}
