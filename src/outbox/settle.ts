import type { OutboxJob } from "../db/schema.ts";
import { backoffMs, iso, type OutboxSettings, SLOWEST_ATTEMPT } from "./attempts.ts";
import type { OutboxRepository } from "./outbox-repository.ts";
import type { Outcome, Pace, Plan, Verdict } from "./verdict.ts";
import type { Write } from "./write.ts";

/** The attempt whose backoff each pace of a held job waits. */
const PACE: Record<Pace, number> = {
  // A buyer who has not enabled receiving, an invoice never transmitted: it may last for days.
  slowest: SLOWEST_ATTEMPT,
  // Claims pass over the job while the authority hold stands; the probe that lifts it comes long
  // after this short wait, so the job is due at once then.
  hold: 1,
  soon: 1,
};

/**
 * The single retry policy of the outbox: what becomes of a claimed job, given its handler's verdict.
 * Done and skipped jobs are final; a held one is pending again at its pace and gives the claim's
 * count back (it is not the job's fault); a failed one is counted, and final when refused for good,
 * when it was the last attempt of the budget, or when it was cut off (the claim found the last
 * attempt the budget allowed never finished: that one is recorded, and this claim made none).
 * Otherwise it is due again after the backoff of its attempt, with jitter.
 */
export function decide(
  job: Pick<OutboxJob, "attempts">,
  verdict: Verdict,
  settings: Pick<OutboxSettings, "maxAttempts" | "retryBaseMs" | "retryMaxMs">,
  now = Date.now(),
): Plan {
  const at = iso(now);
  switch (verdict.outcome) {
    case "done":
      return { at, state: "done", attempts: job.attempts, final: true, error: null, outcome: "delivered" };
    case "skip":
      return {
        at,
        state: "done",
        attempts: job.attempts - 1,
        final: true,
        error: verdict.reason,
        outcome: "skipped",
      };
    case "held":
      return {
        at,
        state: "pending",
        attempts: job.attempts - 1,
        final: false,
        error: verdict.error,
        next: iso(now + backoffMs(PACE[verdict.pace], settings)),
        outcome: "retry",
      };
    case "failed": {
      const attempts = verdict.cutOff ? settings.maxAttempts : job.attempts;
      if (verdict.cutOff || verdict.permanent || job.attempts >= settings.maxAttempts)
        return { at, state: "failed", attempts, final: true, error: verdict.error, outcome: "failed" };
      return {
        at,
        state: "pending",
        attempts,
        final: false,
        error: verdict.error,
        next: iso(now + backoffMs(job.attempts, settings)),
        outcome: "retry",
      };
    }
  }
}

/**
 * Settles claimed jobs by the policy (`decide`): the job's row, and the verdict's report of the
 * outcome in the same transaction. Only the holder of the claim settles: once the lease passed to
 * another worker, the outcome here is "lost" and nothing of it is written or reported.
 */
export function outboxSettler(deps: {
  outbox: Pick<OutboxRepository, "settle">;
  write: Write;
  settings: Pick<OutboxSettings, "maxAttempts" | "retryBaseMs" | "retryMaxMs">;
}) {
  const { outbox, write, settings } = deps;
  return {
    async settle(
      job: Pick<OutboxJob, "id" | "attempts" | "lease_owner">,
      verdict: Verdict,
    ): Promise<Outcome> {
      const owner = job.lease_owner;
      // A job under no claim is no one's to settle.
      if (owner === null) return "lost";
      const plan = decide(job, verdict, settings);
      const report = verdict.outcome === "skip" ? undefined : verdict.report;
      const change = {
        state: plan.state,
        attempts: plan.attempts,
        last_error: plan.error,
        updated_at: plan.at,
        ...(plan.next === undefined ? {} : { next_attempt_at: plan.next }),
      };
      return write(
        async (tx) => {
          if (!(await outbox.settle(job.id, owner, change, tx))) return "lost";
          await report?.(plan, tx);
          return plan.outcome;
        },
        report ? "several" : "one",
      );
    },
  };
}

export type OutboxSettler = ReturnType<typeof outboxSettler>;
