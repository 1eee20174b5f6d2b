import { FairQueue, QueueFull } from "../threads/fair-queue.ts";
import { WorkerPool } from "../threads/worker-pool.ts";
import { ImageUnreadable } from "./qr-image-decoder.ts";
import type { QrImage } from "./qr-image-guard.ts";
import type { QrReply } from "./qr-reader-thread.ts";

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

const THREAD = new URL("./qr-reader-thread.ts", import.meta.url);

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
export function qrImageReader(
  options: { timeLimitMs?: number; maxQueue?: number; share?: number; memoryLimitMb?: number } = {},
): QrImageReader {
  const timeLimitMs = options.timeLimitMs ?? 1500;
  const memoryLimit = (options.memoryLimitMb ?? 256) * 2 ** 20;
  const queue = new FairQueue<QrImage, string | null>({
    share: options.share ?? QR_SHARE,
    capacity: options.maxQueue ?? QR_QUEUE,
    work: { one: "image", plural: "images", verb: "decoded" },
    refusal: QrReaderBusy,
  });
  const pool = new WorkerPool({
    entry: THREAD,
    queue,
    timeLimitMs,
    resourceLimits: THREAD_LIMITS,
    fromThread: (value) => {
      const reply = value as QrReply;
      if ("refused" in reply) throw new ImageUnreadable(reply.refused);
      return reply.text;
    },
    // A decoder that threw may have aborted its WebAssembly instance; one that grew past the limit
    // keeps that memory: either way a fresh thread takes over, once the answer is given.
    retire: (answer) => !answer.ok || ((answer.value as { memory?: number }).memory ?? 0) > memoryLimit,
    fail: ({ kind, message, error }) => {
      if (kind === "time") {
        return new DecodeTimeLimit(
          `the image could not be decoded within ${timeLimitMs} ms: send the QR text, or a plain image of the code`,
        );
      }
      if (kind === "threw") return new ImageUnreadable(`the image could not be decoded (${message})`);
      return new ImageUnreadable(
        (error as NodeJS.ErrnoException | undefined)?.code === "ERR_WORKER_OUT_OF_MEMORY"
          ? "the image could not be decoded within the decoder's memory limit"
          : "the image could not be decoded (the decoder stopped on it)",
      );
    },
  });

  return {
    read(image, { business, signal } = {}) {
      const read = queue.submit(business, image, signal);
      pool.pump();
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
    threadsStarted: () => pool.threadsStarted,
    close: () => pool.close(new Error("the QR image reader is closed")),
  };
}
