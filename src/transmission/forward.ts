import { type Db, type Executor, writeTransaction } from "../db/database.ts";
import type { OutboxJob } from "../db/schema.ts";
import { DomainError } from "../errors.ts";
import {
  backoffMs,
  type OutboxSettings,
  OutOfAttempts,
  refuseOutOfAttempts,
  SLOWEST_ATTEMPT,
  timeLimit,
  withTimeout,
} from "./attempts.ts";
import {
  type AuthorityAnswer,
  type AuthorityConnector,
  DeliveryError,
  type ForwardedMessage,
} from "./authority/connector.ts";
import type { AuthorityHold } from "./authority-hold.ts";
import { iso, type JobHandler, type JobSettling, type Outcome } from "./jobs.ts";
import type { OutboxRepository } from "./outbox-repository.ts";
import type { DeliveryPort } from "./port.ts";

/** When a business whose forwards are at their bound may try again: some will be done by then. */
export const QUEUE_FULL_RETRY_AFTER_S = 60;

/**
 * What the authority is told after an invoice's delivery, when it keeps such things (MBS: payment
 * updates, VAT reports). Queued in the transaction of the change it reports, only when the
 * connector forwards at all. A business has at most `maxQueued` waiting: past that the change is
 * refused (429), and its transaction, the change with it, rolled back.
 */
export function authorityForwarder(deps: {
  outbox: Pick<OutboxRepository, "enqueue" | "queuedForwards">;
  authority: Pick<AuthorityConnector, "forward">;
  maxQueued: number;
}) {
  const { outbox, authority, maxQueued } = deps;
  return {
    async forward(message: ForwardedMessage, businessId: string, at: string, tx: Executor): Promise<void> {
      if (!authority.forward) return;
      // Counted in the change's transaction but not under a lock of the business: changes of several
      // invoices at once may each find room for one more (the bound is passed by at most as many).
      if ((await outbox.queuedForwards(businessId, maxQueued, tx)) >= maxQueued) {
        throw new DomainError("forward_queue_full", {
          message: "Too many requests",
          details: `this business has ${maxQueued} messages waiting to be sent to the tax authority, the most it may have: nothing was recorded; retry after ${QUEUE_FULL_RETRY_AFTER_S} s`,
          retryAfter: QUEUE_FULL_RETRY_AFTER_S,
        });
      }
      await outbox.enqueue(
        {
          kind: "forward",
          irn: message.irn,
          business_id: businessId,
          payload: JSON.stringify(message),
          state: "pending",
          next_attempt_at: at,
          created_at: at,
          updated_at: at,
        },
        tx,
      );
    },
  };
}

export type AuthorityForwarder = ReturnType<typeof authorityForwarder>;

/**
 * Runs a forwarded message. It waits (without using up its attempts) until the invoice is
 * delivered, since the authority updates only invoices it holds, and until the messages queued
 * before it for the same invoice are done, so a PARTIAL payment never arrives after the PAID one.
 */
export function forwardHandler(deps: {
  db: Db;
  outbox: Pick<OutboxRepository, "settle" | "earlierOpen">;
  settling: Pick<JobSettling, "write" | "skip">;
  invoices: Pick<DeliveryPort, "isDelivered" | "forwarded">;
  authority: Pick<AuthorityConnector, "forward">;
  /** Opened when the authority refuses our credential, closed by any other answer. */
  hold: Pick<AuthorityHold, "refused" | "passed">;
  settings: OutboxSettings;
}): JobHandler {
  const { db, outbox, settling, invoices, authority, hold, settings } = deps;

  /**
   * Pending again: `counted` false gives the claim's count back (nothing was attempted, or not our
   * fault); `refused`: the authority refused our credential, and the hold it opens is recorded too.
   */
  const again = (
    job: OutboxJob,
    owner: string,
    reason: string,
    wait: number,
    counted: boolean,
    refused = false,
  ) =>
    settling.write(async (tx) => {
      const at = new Date().toISOString();
      const change = {
        state: "pending" as const,
        attempts: counted ? job.attempts : job.attempts - 1,
        last_error: reason,
        next_attempt_at: iso(Date.now() + wait),
        updated_at: at,
      };
      const settled = await outbox.settle(job.id, owner, change, tx);
      if (settled && refused) await hold.refused(reason, at, tx);
      return settled;
    });

  /** Done or failed for good: settled, and told to the invoice's history, in one transaction. */
  const end = (
    job: OutboxJob & { irn: string },
    owner: string,
    message: ForwardedMessage,
    outcome: { state: "done" | "failed"; attempts: number; error: string | null; answer?: AuthorityAnswer },
  ) =>
    writeTransaction(db, async (tx) => {
      const at = new Date().toISOString();
      const { state, attempts, error } = outcome;
      const settled = await outbox.settle(
        job.id,
        owner,
        { state, attempts, last_error: error, updated_at: at },
        tx,
      );
      if (!settled) return false;
      if (outcome.state === "done" || outcome.answer) await hold.passed(tx);
      await invoices.forwarded(
        job.irn,
        {
          at,
          actor: `outbox:${owner}`,
          kind: message.kind,
          delivered: state === "done",
          attempts,
          ...(error === null ? {} : { error }),
          ...(outcome.answer ? { authorityAnswer: outcome.answer } : {}),
        },
        tx,
      );
      return true;
    });

  return async (job, owner, timeoutMs): Promise<Outcome> => {
    const forward = authority.forward;
    if (!forward || !job.payload || !job.irn) return settling.skip(job, owner, "nothing to forward");
    const claimed = { ...job, irn: job.irn };
    const message = JSON.parse(job.payload) as ForwardedMessage;
    // An invoice not delivered yet may stay so for long (never transmitted): looked at again at the
    // slowest pace. An earlier message is on its way: soon.
    if (!(await invoices.isDelivered(job.irn))) {
      const reason = "waiting for the invoice's delivery to the authority";
      return (await again(job, owner, reason, backoffMs(SLOWEST_ATTEMPT, settings), false))
        ? "retry"
        : "lost";
    }
    if (await outbox.earlierOpen(job)) {
      const reason = "waiting for an earlier message about the same invoice";
      return (await again(job, owner, reason, backoffMs(1, settings), false)) ? "retry" : "lost";
    }
    try {
      refuseOutOfAttempts(job, settings);
      await withTimeout(timeLimit(job, timeoutMs, settings), (signal) => forward(message, signal));
      const done = await end(claimed, owner, message, { state: "done", attempts: job.attempts, error: null });
      return done ? "delivered" : "lost";
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      const failure = err instanceof DeliveryError ? err : undefined;
      // Our credential refused: waits on the authority hold, due again as soon as it lifts.
      if (failure?.credential)
        return (await again(job, owner, error, backoffMs(1, settings), false, true)) ? "retry" : "lost";
      if (failure?.hold) {
        return (await again(job, owner, error, backoffMs(SLOWEST_ATTEMPT, settings), false))
          ? "retry"
          : "lost";
      }
      const cutOff = err instanceof OutOfAttempts;
      if (cutOff || failure?.permanent || job.attempts >= settings.maxAttempts) {
        const made = cutOff ? settings.maxAttempts : job.attempts;
        const outcome = { state: "failed" as const, attempts: made, error, answer: failure?.answer };
        return (await end(claimed, owner, message, outcome)) ? "failed" : "lost";
      }
      return (await again(job, owner, error, backoffMs(job.attempts, settings), true)) ? "retry" : "lost";
    }
  };
}
