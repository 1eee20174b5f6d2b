import type { Executor } from "../db/database.ts";
import type { JobState, OutboxJob } from "../db/schema.ts";
import { OutOfAttempts } from "./attempts.ts";
import { JobFailure, messageOf } from "./failure.ts";

/** What became of a claimed job. "lost": the claim had expired and another worker took the job over. */
export type Outcome = "delivered" | "retry" | "failed" | "lost" | "skipped";

/** What the outbox decided of an attempt (settle.ts), as the report of its outcome reads it. */
export type Plan = {
  /** When it was settled: the job's `updated_at`. */
  at: string;
  state: JobState;
  /** The attempts recorded on the job. */
  attempts: number;
  /** No other attempt will be made: done, or failed for good. */
  final: boolean;
  /** The job's last error; none once it is done. */
  error: string | null;
  /** Pending again: when it is due. */
  next?: string;
  outcome: Exclude<Outcome, "lost">;
};

/**
 * Tells the side that queued the job what became of it (an invoice's state and history, the
 * authority hold), in the transaction that settles the job, so the two never disagree. Not called
 * when the claim was lost: the outcome of whoever holds it now is the one told.
 */
export type Report = (plan: Plan, tx: Executor) => Promise<void>;

/**
 * How soon a held job is due again: "slowest", at the slowest backoff (nothing says when what
 * holds it will pass); "hold", as soon as the authority hold lifts; "soon", at the shortest
 * backoff (what it waits for is on its way).
 */
export type Pace = "slowest" | "hold" | "soon";

/** A handler's account of its attempt, from which the outbox's single retry policy settles the job. */
export type Verdict =
  /** Sent and accepted. */
  | { outcome: "done"; report?: Report }
  /** Nothing to send (what the job was for is gone or done): done, and the claim's count given back. */
  | { outcome: "skip"; reason: string | null }
  /** Not tried, or failed through no fault of the job's: pending again, not counted against the budget. */
  | { outcome: "held"; error: string; pace: Pace; report?: Report }
  /** A failed attempt, counted: final when refused for good, cut off, or the last the budget allowed. */
  | { outcome: "failed"; error: string; permanent: boolean; cutOff: boolean; report?: Report };

/** What a handler makes its attempt with. */
export type Attempt = {
  /** Who holds the claim (a worker, or a request waiting on it): the actor of what the attempt reports. */
  owner: string;
  /**
   * Runs the sending within the attempt's time limit, never past its lease; `timedOut` makes the
   * failure it ends with then (see withTimeout). A claim past the retry budget sends nothing: it
   * fails with OutOfAttempts.
   */
  send<T>(work: (signal: AbortSignal) => Promise<T>, timedOut?: (message: string) => Error): Promise<T>;
};

/**
 * Runs one claimed job of a kind (an invoice's delivery, a later message to the authority, a
 * webhook's event): it knows what to send and what the answer means, and says so in a verdict. The
 * outbox claims, dispatches and settles (outbox-service.ts).
 */
export type JobHandler = (job: OutboxJob, attempt: Attempt) => Promise<Verdict>;

/** The verdict of an attempt that threw: cut off past the budget, refused for good, or to be tried again. */
export function failedWith(err: unknown, report?: Report): Verdict {
  return {
    outcome: "failed",
    error: messageOf(err),
    permanent: err instanceof JobFailure && err.permanent,
    cutOff: err instanceof OutOfAttempts,
    ...(report ? { report } : {}),
  };
}
