import { type Db, writeTransaction } from "../db/database.ts";
import type { OutboxJob } from "../db/schema.ts";
import {
  backoffMs,
  type OutboxSettings,
  OutOfAttempts,
  refuseOutOfAttempts,
  SLOWEST_ATTEMPT,
  timeLimit,
  withTimeout,
} from "./attempts.ts";
import { type AuthorityConnector, DeliveryError } from "./authority/connector.ts";
import type { AuthorityHold } from "./authority-hold.ts";
import { iso, type JobHandler, type JobSettling, type Outcome } from "./jobs.ts";
import type { OutboxRepository } from "./outbox-repository.ts";
import type { DeliveryPort } from "./port.ts";

/**
 * What becomes of a delivery attempt that failed: the single retry policy of deliveries. Permanent
 * refusals and the last attempt of the budget are final; holds (not the invoice's fault) give the
 * claim's count back and wait at the slowest pace, except a refused credential, which waits on the
 * authority hold (authority-hold.ts) and is due again as soon as the probe lifts it.
 */
export function failurePlan(err: unknown, attempt: number, settings: OutboxSettings) {
  const error = err instanceof Error ? err.message : String(err);
  const failure = err instanceof DeliveryError ? err : undefined;
  const permanent = failure?.permanent === true;
  const cutOff = err instanceof OutOfAttempts;
  const held = failure?.hold !== undefined;
  const credential = failure?.credential === true;
  // The attempt that was cut off is the one recorded; the claim that found it made none.
  const made = cutOff ? settings.maxAttempts : held ? attempt - 1 : attempt;
  const final = !held && (permanent || cutOff || attempt >= settings.maxAttempts);
  const wait = credential
    ? backoffMs(1, settings)
    : held
      ? backoffMs(SLOWEST_ATTEMPT, settings)
      : backoffMs(attempt, settings);
  const next = final ? undefined : iso(Date.now() + wait);
  return { error, failure, permanent, cutOff, held, credential, made, final, next };
}

/**
 * An invoice's delivery to the authority. The IRN is the idempotency key, so a delivery repeated
 * after an ambiguous failure is fiscalized once; the outcome is settled on the job and reported to
 * the invoices side (the port) in one transaction.
 */
export function deliveryHandler(deps: {
  db: Db;
  outbox: Pick<OutboxRepository, "settle">;
  settling: Pick<JobSettling, "skip">;
  /** The invoices side of a delivery: what to send, and what its outcome means (see port.ts). */
  invoices: DeliveryPort;
  authority: AuthorityConnector;
  /** Opened when the authority refuses our credential, closed by any other answer. */
  hold: Pick<AuthorityHold, "refused" | "passed">;
  settings: OutboxSettings;
}): JobHandler {
  const { db, outbox, settling, invoices, authority, hold, settings } = deps;
  const skip = settling.skip;

  async function deliver(job: OutboxJob, owner: string, timeoutMs: number): Promise<Outcome> {
    const irn = job.irn as string;
    const target = await invoices.target(irn);
    const attempt = job.attempts;
    const now = () => new Date().toISOString();
    if ("skip" in target) return skip(job, owner, target.skip);
    const actor = `outbox:${owner}`;
    const started = Date.now();
    try {
      refuseOutOfAttempts(job, settings);
      const receipt = await withTimeout(timeLimit(job, timeoutMs, settings), (signal) =>
        authority.deliver({ irn, businessId: target.businessId, document: target.document }, signal),
      );
      return await writeTransaction(db, async (tx) => {
        const settled = await outbox.settle(
          job.id,
          owner,
          { state: "done", attempts: attempt, updated_at: receipt.at },
          tx,
        );
        if (!settled) return "lost";
        await hold.passed(tx);
        await invoices.delivered(
          irn,
          {
            businessId: target.businessId,
            at: receipt.at,
            actor,
            attempt,
            durationMs: Date.now() - started,
            authority: authority.name,
            reference: receipt.reference,
          },
          tx,
        );
        return "delivered";
      });
    } catch (err) {
      const { error, failure, permanent, cutOff, held, credential, made, final, next } = failurePlan(
        err,
        attempt,
        settings,
      );
      const at = now();
      return writeTransaction(db, async (tx) => {
        const settled = await outbox.settle(
          job.id,
          owner,
          final
            ? { state: "failed", attempts: made, last_error: error, updated_at: at }
            : {
                state: "pending",
                attempts: made,
                last_error: error,
                next_attempt_at: next as string,
                updated_at: at,
              },
          tx,
        );
        if (!settled) return "lost";
        // An answer other than a credential refusal shows the authority takes our credential again.
        if (credential) await hold.refused(error, at, tx);
        else if (failure?.answer) await hold.passed(tx);
        await invoices.attemptFailed(
          irn,
          {
            businessId: target.businessId,
            at,
            actor,
            attempt: held ? attempt : made,
            outcome: cutOff ? "incomplete" : permanent ? "rejected" : held ? "held" : "error",
            error,
            ...(failure?.state ? { authorityState: failure.state } : {}),
            ...(failure?.answer ? { authorityAnswer: failure.answer } : {}),
            ...(failure?.hold ? { hold: failure.hold } : {}),
            ...(cutOff ? {} : { durationMs: Date.now() - started }),
            ...(next ? { nextAttemptAt: next } : {}),
            authority: authority.name,
            final,
          },
          tx,
        );
        return final ? "failed" : "retry";
      });
    }
  }

  return deliver;
}
