import { catalogSync } from "../../documents/validation/remote-check.ts";
import { Fifo } from "../../threads/job-queue.ts";
import { failedWith, WorkerPool } from "../../threads/worker-pool.ts";
import type {
  CheckAnswer,
  CheckInput,
  Preparation,
  PreparationInput,
  PreparationJob,
  PreparationKeys,
} from "./preparation.ts";

export type Preparer = {
  prepare(input: PreparationInput): Promise<Preparation>;
  /**
   * Checks a document and, with `sign`, prepares it when it passes; `knownProducts` as for the
   * rules (the set goes to each thread once).
   */
  check(
    input: Omit<CheckInput, "products"> & { knownProducts: ReadonlySet<string> | undefined },
  ): Promise<CheckAnswer>;
  close(): Promise<void>;
};

/** The preparation thread's job as it is queued: the catalog's set rides along until it is sent. */
type Queued = PreparationInput | { check: CheckInput; knownProducts: ReadonlySet<string> | undefined };

const THREAD = new URL("./preparation-thread.ts", import.meta.url);

/**
 * The per-invoice cryptography of a sign (canonical form, sealing, QR encryption: about a fifth of
 * the sign path's time on the event loop) on a thread of its own, so it runs on another core
 * while the event loop parses, validates and writes. The inputs of one turn of the event loop go
 * over in one message; two such batches may be out at once, so the thread prepares the next batch
 * while the last one is being written. A single sign's or validate's document is checked there too
 * (`check`), with the rules' context. With `thread: false` the same work runs in place (a machine
 * with one core).
 */
export function preparer(keys: PreparationKeys, options: { thread: boolean }): Preparer {
  const queue = new Fifo<Queued, Preparation | CheckAnswer>();
  const catalog = catalogSync();
  const pool = new WorkerPool({
    entry: THREAD,
    data: keys,
    queue,
    thread: options.thread,
    batch: 64,
    inFlight: 2,
    toThread: (job: Queued, thread): PreparationJob => {
      if (!("check" in job)) return job;
      const products = catalog(thread, job.knownProducts);
      return { check: products === undefined ? job.check : { ...job.check, products } };
    },
    fail: failedWith("preparing the invoices", "the preparation thread"),
  });
  return {
    prepare(input) {
      const prepared = queue.submit(input) as Promise<Preparation>;
      pool.pump();
      return prepared;
    },
    check({ body, text, ctx, sign, owner, fingerprint, knownProducts }) {
      const answered = queue.submit({
        check: { body, text, ctx, sign, owner, fingerprint },
        knownProducts,
      }) as Promise<CheckAnswer>;
      pool.pump();
      return answered;
    },
    close: () => pool.close(new Error("the preparation thread is closed")),
  };
}
