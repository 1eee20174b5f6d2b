import { Worker } from "node:worker_threads";
import { FairQueue, type Job, QueueFull } from "../threads/fair-queue.ts";
import { ImageUnreadable } from "./qr-image-decoder.ts";
import type { QrImage } from "./qr-image-guard.ts";

/** Whose image it is (its share of the queue), and the signal that drops it while it waits. */
export type ReadOptions = { business?: string | undefined; signal?: AbortSignal | undefined };

export type QrImageReader = {
  /** The QR text in an image the guard accepted; null when it holds none. */
  read(image: QrImage, options?: ReadOptions): Promise<string | null>;
  /** Throws the QrReaderBusy an image of `business` would meet now: refused before the image is read. */
  admit(business: string | undefined): void;
  /** Images decoded, dropped while waiting (client gone), refused (queue full); waiting and decoding now. */
  stats(): { decoded: number; dropped: number; refused: number; waiting: number; running: number };
  /** Decoding threads started so far: one, plus one per thread replaced (time, memory or crash). */
  threadsStarted(): number;
  close(): Promise<void>;
};

/** The business's share of the queue (or the whole queue) is taken: the caller should come back shortly. */
export class QrReaderBusy extends QueueFull {}

/** Images of one business that may wait, and images that may wait in all. */
export const QR_SHARE = 4;
export const QR_QUEUE = 16;

/** The image took longer to decode than any QR code needs; the thread decoding it was replaced. */
export class DecodeTimeLimit extends ImageUnreadable {}

/**
 * The decoding thread's JavaScript heap: the decoder's own objects are a few megabytes; the image
 * lives in WebAssembly memory, which this limit does not cover (see `memoryLimitMb`).
 */
const THREAD_LIMITS = { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 };

const THREAD = new URL("./qr-reader-thread.mjs", import.meta.url);

type Reply =
  | { ready: true }
  | { started: number }
  | { id: number; text: string | null; memory: number }
  | { id: number; refused: string }
  | { id: number; error: string };

/**
 * Decodes QR images on a thread of its own, one at a time. A decode takes 3–40 ms (a 2,000 × 2,000
 * image, more for crafted ones), time the event loop would otherwise not spend answering anyone
 * else. Images wait their turn in a queue shared fairly between businesses (src/threads/fair-queue.ts):
 * at most `share` of one business, `maxQueue` in all, taken in turn by business; a waiting image
 * whose client went away is never decoded. One that is still decoding after `timeLimitMs` is
 * answered as unreadable and its thread replaced (terminating a thread interrupts WebAssembly).
 *
 * Memory: the thread's JavaScript heap is capped (a thread that exceeds it stops, and the image is
 * answered as unreadable); WebAssembly memory grows to what the largest image needed and never
 * shrinks, so a thread whose decoder holds more than `memoryLimitMb` after an image is replaced.
 * The largest images the guard admits take about 95 MB (a 2,000 × 2,000 16-bit RGBA PNG).
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a factory: the pool's operations are its closures, each short
export function qrImageReader(
  options: { timeLimitMs?: number; maxQueue?: number; share?: number; memoryLimitMb?: number } = {},
): QrImageReader {
  const timeLimitMs = options.timeLimitMs ?? 1500;
  const memoryLimit = (options.memoryLimitMb ?? 256) * 2 ** 20;
  type Read = Job<QrImage, string | null>;
  const queue = new FairQueue<QrImage, string | null>({
    share: options.share ?? QR_SHARE,
    capacity: options.maxQueue ?? QR_QUEUE,
    work: { one: "image", plural: "images", verb: "decoded" },
    refusal: QrReaderBusy,
  });
  let worker: Worker | undefined;
  let ready = false;
  let current: { id: number; job: Read; timer?: NodeJS.Timeout } | undefined;
  let nextId = 0;
  let closed = false;
  let started = 0;

  function replace() {
    const old = worker;
    worker = undefined;
    ready = false;
    void old?.terminate();
  }

  function settle(): Read | undefined {
    if (!current) return undefined;
    clearTimeout(current.timer);
    const { job } = current;
    current = undefined;
    return job;
  }

  function start(): Worker {
    started++;
    const thread = new Worker(THREAD, { resourceLimits: THREAD_LIMITS });
    thread.on("message", (reply: Reply) => {
      if (thread !== worker) return;
      if ("ready" in reply) {
        ready = true;
      } else if ("started" in reply) {
        if (current?.id === reply.started) current.timer = limit(current.id, current.job);
        return;
      } else if (current && reply.id === current.id) {
        const job = settle();
        if ("refused" in reply) {
          job?.reject(new ImageUnreadable(reply.refused));
        } else if ("error" in reply) {
          // A decoder that threw may have aborted its WebAssembly instance: a fresh thread takes over.
          replace();
          job?.reject(new ImageUnreadable(`the image could not be decoded (${reply.error})`));
        } else {
          // The answer stands; the thread that grew past the limit gives way to a fresh one.
          if (reply.memory > memoryLimit) replace();
          job?.resolve(reply.text);
        }
      }
      pump();
    });
    thread.on("error", (err: NodeJS.ErrnoException) => {
      if (thread !== worker) return;
      replace();
      const job = settle();
      // Failing to start is the service's fault, and every waiting image would meet the same.
      if (!job) {
        queue.clear(err);
        return;
      }
      job.reject(
        new ImageUnreadable(
          err.code === "ERR_WORKER_OUT_OF_MEMORY"
            ? "the image could not be decoded within the decoder's memory limit"
            : "the image could not be decoded (the decoder stopped on it)",
        ),
      );
      pump();
    });
    thread.on("exit", () => {
      if (thread !== worker) return;
      replace();
      const job = settle();
      job?.reject(new ImageUnreadable("the image could not be decoded (the decoder stopped on it)"));
      pump();
    });
    return thread;
  }

  function pump() {
    if (closed || current || queue.waiting === 0) {
      // Idle, the thread must not keep the process alive.
      if (!current && queue.waiting === 0) worker?.unref();
      return;
    }
    if (!worker) worker = start();
    worker.ref();
    if (!ready) return;
    const job = queue.take() as Read;
    const id = nextId++;
    current = { id, job };
    worker.postMessage({ id, image: job.input });
  }

  /** From when the thread has the image: neither the queue nor the thread's start-up counts. */
  function limit(id: number, job: Read): NodeJS.Timeout {
    return setTimeout(() => {
      if (current?.id !== id) return;
      settle();
      replace();
      job.reject(
        new DecodeTimeLimit(
          `the image could not be decoded within ${timeLimitMs} ms: send the QR text, or a plain image of the code`,
        ),
      );
      pump();
    }, timeLimitMs);
  }

  return {
    read(image, { business, signal } = {}) {
      if (closed) return Promise.reject(new Error("the QR image reader is closed"));
      const read = queue.submit(business, image, signal);
      pump();
      return read;
    },
    admit: (business) => queue.admit(business),
    stats: () => ({
      decoded: queue.counts.ran,
      dropped: queue.counts.dropped,
      refused: queue.counts.refused,
      waiting: queue.waiting,
      running: queue.running,
    }),
    threadsStarted: () => started,
    async close() {
      closed = true;
      const stopping = worker;
      worker = undefined;
      const job = settle();
      const err = new Error("the QR image reader is closed");
      job?.reject(err);
      queue.clear(err);
      await stopping?.terminate();
    },
  };
}
