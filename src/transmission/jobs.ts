import { type Db, type Executor, engineOf, writeTransaction } from "../db/database.ts";
import type { OutboxJob } from "../db/schema.ts";
import type { OutboxRepository } from "./outbox-repository.ts";

export type Outcome = "delivered" | "retry" | "failed" | "lost" | "skipped";

/**
 * Runs one claimed job of a kind (an invoice's delivery, a webhook's event) and settles it under the
 * claim: the outbox (outbox.ts) claims and dispatches, each kind's handler knows what to send and
 * what its outcome means. "lost": the claim had expired and another worker took the job over.
 */
export type JobHandler = (job: OutboxJob, owner: string, timeoutMs: number) => Promise<Outcome>;

export const iso = (ms: number) => new Date(ms).toISOString();

/** What every handler does with the outbox besides its own attempt. */
export function jobSettling(deps: { db: Db; outbox: Pick<OutboxRepository, "settle"> }) {
  const { db, outbox } = deps;

  /**
   * Writes outside a caller's transaction. On SQLite they wait for another process's write lock
   * without blocking the event loop (see writeTransaction); PostgreSQL waits on the server anyway.
   */
  const write = <T>(work: (tx: Executor) => Promise<T>): Promise<T> =>
    engineOf(db) === "postgres" ? work(db) : writeTransaction(db, work);

  return {
    write,
    /** A job with nothing left to do: done, and the claim's count taken back, since nothing was attempted. */
    async skip(job: OutboxJob, owner: string, reason: string | null): Promise<Outcome> {
      const settled = await write((tx) =>
        outbox.settle(
          job.id,
          owner,
          {
            state: "done",
            attempts: job.attempts - 1,
            last_error: reason,
            updated_at: new Date().toISOString(),
          },
          tx,
        ),
      );
      return settled ? "skipped" : "lost";
    },
  };
}

export type JobSettling = ReturnType<typeof jobSettling>;
