import type { Executor } from "../db/database.ts";
import { DomainError } from "../errors.ts";
import type { OutboxRepository } from "../outbox/outbox-repository.ts";
import type { JobHandler, Plan, Verdict } from "../outbox/verdict.ts";
import { type AuthorityConnector, DeliveryError, type ForwardedMessage } from "./authority/connector.ts";
import { type AuthorityHold, authorityVerdict } from "./authority-hold.ts";
import type { ForwardingPort } from "./port.ts";

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
        "forward",
        [{ irn: message.irn, businessId, payload: JSON.stringify(message) }],
        at,
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
  outbox: Pick<OutboxRepository, "earlierOpen">;
  invoices: ForwardingPort;
  authority: Pick<AuthorityConnector, "forward">;
  /** Opened when the authority refuses our credential, closed by any other answer. */
  hold: Pick<AuthorityHold, "passed" | "failed">;
}): JobHandler {
  const { outbox, invoices, authority, hold } = deps;

  return async (job, attempt): Promise<Verdict> => {
    const forward = authority.forward;
    if (!forward || !job.payload || !job.irn) return { outcome: "skip", reason: "nothing to forward" };
    const irn = job.irn;
    const message = JSON.parse(job.payload) as ForwardedMessage;
    // An invoice not delivered yet may stay so for long (never transmitted): looked at again at the
    // slowest pace. An earlier message is on its way: soon.
    if (!(await invoices.isDelivered(irn)))
      return {
        outcome: "held",
        error: "waiting for the invoice's delivery to the authority",
        pace: "slowest",
      };
    if (await outbox.earlierOpen(job))
      return {
        outcome: "held",
        error: "waiting for an earlier message about the same invoice",
        pace: "soon",
      };

    /** Done or failed for good: told to the invoice's history. */
    const told = (plan: Plan, tx: Executor, answer?: DeliveryError["answer"]) =>
      invoices.forwarded(
        irn,
        {
          at: plan.at,
          actor: `outbox:${attempt.owner}`,
          kind: message.kind,
          delivered: plan.state === "done",
          attempts: plan.attempts,
          ...(plan.error === null ? {} : { error: plan.error }),
          ...(answer ? { authorityAnswer: answer } : {}),
        },
        tx,
      );
    try {
      await attempt.send(
        (signal) => forward(message, signal),
        (text) => new DeliveryError(text),
      );
      const report = async (plan: Plan, tx: Executor) => {
        await hold.passed(tx);
        await told(plan, tx);
      };
      return { outcome: "done", report };
    } catch (err) {
      const report = async (plan: Plan, tx: Executor) => {
        await hold.failed(err, plan.at, tx);
        if (plan.final) await told(plan, tx, err instanceof DeliveryError ? err.answer : undefined);
      };
      return { ...authorityVerdict(err), report };
    }
  };
}
