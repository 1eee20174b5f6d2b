import { FairQueue, orBusy, QueueFull } from "../../threads/fair-queue.ts";
import { failedWith, WorkerPool } from "../../threads/worker-pool.ts";
import type { UblReadAnswer, UblReadInput } from "./ubl-read.ts";
import type { UblThreadData } from "./ubl-read-thread.ts";

const THREAD = new URL("./ubl-read-thread.ts", import.meta.url);

/**
 * One business's share of the UBL thread's queue, and the queue's bound. Every UBL body waits here,
 * not only large ones: an ERP with 50 requests at once is served (a short invoice takes about 1 ms,
 * 64 waiting about 60 ms), and what waits is bounded (64 bodies of at most 1 MiB each, the parse's
 * bound: a body past the reader's is refused on the thread after its parse).
 */
export const UBL_SHARE = 64;
export const UBL_QUEUE = 256;

/** The business's share of the UBL thread's queue is used: the caller answers 503. */
export class UblBusy extends QueueFull {}

export type ReadUbl = (input: UblReadInput) => Promise<UblReadAnswer>;

/**
 * UBL bodies read off the event loop. Reading one is all CPU (parse, schema, mapping: about 1 ms
 * for a short invoice, 60 ms at the 512 KiB bound), three quarters of what a UBL sign cost the event
 * loop, where it held up every other request; on a thread of its own it uses the second core, and
 * the event loop keeps HTTP, authentication, validation and signing. The thread starts with the
 * first UBL body and takes one business's documents in turn with the others' (fair-queue.ts). With
 * `thread: false` (one core) the same module reads in place.
 */
export function ublReadPool(options: {
  thread: boolean;
  schemas: string | undefined;
  maxMemoryMb?: number;
  share?: number;
  maxQueue?: number;
}) {
  const queue = new FairQueue<UblReadInput, UblReadAnswer>({
    share: options.share ?? UBL_SHARE,
    capacity: options.maxQueue ?? UBL_QUEUE,
    work: { one: "document", plural: "documents", verb: "read" },
    refusal: UblBusy,
  });
  const data: UblThreadData = { schemas: options.schemas };
  const pool = new WorkerPool<UblReadInput, UblReadAnswer>({
    entry: THREAD,
    data,
    queue,
    thread: options.thread,
    // The documents of one turn of the event loop go over together and come back together: their
    // signs then commit as one batch, as JSON signs arriving together do (one at a time, each
    // sign was a transaction and an fsync of its own). The next batch starts on the thread while
    // the event loop takes the last one's answers.
    batch: 8,
    // Up to 256 KiB of bodies a batch (a large invoice goes alone): what waits behind a batch is
    // then at most about 25 ms of reading.
    batchWeight: {
      most: 256 * 1024,
      of: (input) => (typeof input.body === "string" ? input.body.length : input.body.byteLength),
    },
    inFlight: 2,
    // Exactly the body's bytes: a Buffer read off a socket is a view of a larger block, which a
    // message to a thread would copy whole.
    toThread: (input) =>
      typeof input.body === "string" ? input : { ...input, body: new Uint8Array(input.body) },
    resourceLimits: { maxOldGenerationSizeMb: options.maxMemoryMb ?? 256 },
    fail: failedWith("reading the UBL document", "the UBL thread"),
  });

  const read: ReadUbl = (input) => {
    const submitted = queue.submit(input.signer.businessId, input);
    pool.pump();
    return orBusy(submitted, "the UBL thread");
  };

  return { read, close: () => pool.close(new Error("the UBL thread is closed")) };
}

export type UblReadPool = ReturnType<typeof ublReadPool>;
