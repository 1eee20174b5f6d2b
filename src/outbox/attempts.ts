import { setMaxListeners } from "node:events";
import type { OutboxJob } from "../db/schema.ts";
import { JobFailure } from "./failure.ts";

export type OutboxSettings = {
  maxAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  leaseMs: number;
  deliveryTimeoutMs: number;
};

export const iso = (ms: number) => new Date(ms).toISOString();

/** The most an attempt leaves of its lease for recording its outcome. */
const LEASE_MARGIN_MS = 1000;

/** An attempt number past any budget: its backoff is the longest, EINVOICE_RETRY_MAX_MS (held jobs wait that long). */
export const SLOWEST_ATTEMPT = 64;

/** Exponential backoff with jitter: half the step fixed, half random, so retries spread out. */
export function backoffMs(
  attempt: number,
  settings: Pick<OutboxSettings, "retryBaseMs" | "retryMaxMs">,
): number {
  const step = Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(step / 2 + Math.random() * (step / 2));
}

/**
 * Runs `work` with a signal that aborts it after `ms`; then it fails as a retryable failure, made by
 * `timedOut`: a sender gives its own kind, so what it does with its retryable failures midway (the
 * MBS connector marks a transmit cut short as REGISTERED) it does with this one too.
 */
export async function withTimeout<T>(
  ms: number,
  work: (signal: AbortSignal) => Promise<T>,
  timedOut: (message: string) => Error = (message) => new JobFailure(message),
): Promise<T> {
  const controller = new AbortController();
  // One attempt to MBS makes up to ~8 calls, each listening on this signal with its own time limit.
  setMaxListeners(32, controller.signal);
  const timer = setTimeout(() => controller.abort(timedOut(`no answer within ${ms} ms`)), ms);
  try {
    return await work(controller.signal);
  } catch (err) {
    if (controller.signal.aborted) throw timedOut(`no answer within ${ms} ms`);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * How long an attempt may run: its own limit, but never past its lease (less a moment to record
 * the outcome). Once the lease ends another worker may take the job over, and a delivery still
 * under way here would then be made twice at once.
 */
export function timeLimit(
  job: Pick<OutboxJob, "lease_expires_at">,
  timeoutMs: number,
  settings: Pick<OutboxSettings, "leaseMs">,
): number {
  if (!job.lease_expires_at) return timeoutMs;
  const margin = Math.min(LEASE_MARGIN_MS, settings.leaseMs / 10);
  return Math.max(1, Math.min(timeoutMs, Date.parse(job.lease_expires_at) - margin - Date.now()));
}

/**
 * The claim counts the attempt before it runs: a count past the budget means the last attempt the
 * budget allowed never finished (its worker died or lost the lease mid-delivery), and the job is
 * not tried again.
 */
export const outOfAttempts = (
  job: Pick<OutboxJob, "attempts">,
  settings: Pick<OutboxSettings, "maxAttempts">,
) => job.attempts > settings.maxAttempts;

/** The reason recorded for such a job. */
export const cutOffReason = (settings: Pick<OutboxSettings, "maxAttempts">) =>
  `the delivery did not complete: attempt ${settings.maxAttempts} of ${settings.maxAttempts} was cut off (its worker stopped or lost its lease mid-delivery)`;

/** A claim past the retry budget: the last attempt it allowed never finished. */
export class OutOfAttempts extends Error {}

/** Throws OutOfAttempts, with its reason, for a claim past the retry budget: nothing is sent then. */
export function refuseOutOfAttempts(
  job: Pick<OutboxJob, "attempts">,
  settings: Pick<OutboxSettings, "maxAttempts">,
): void {
  if (outOfAttempts(job, settings)) throw new OutOfAttempts(cutOffReason(settings));
}
