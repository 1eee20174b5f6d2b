import type { Executor } from "../db/database.ts";
import type { JobHandler, Plan, Verdict } from "../outbox/verdict.ts";
import { type AuthorityConnector, DeliveryError } from "./authority/connector.ts";
import { type AuthorityHold, authorityVerdict } from "./authority-hold.ts";
import type { DeliveryPort } from "./port.ts";

/**
 * An invoice's delivery to the authority. The IRN is the idempotency key, so a delivery repeated
 * after an ambiguous failure is fiscalized once. The handler sends and says what the answer means;
 * the outbox settles the job by its retry policy, and the report here tells the invoices side (the
 * port) and the authority hold what became of it, in the same transaction.
 */
export function deliveryHandler(deps: {
  /** The invoices side of a delivery: what to send, and what its outcome means (see port.ts). */
  invoices: DeliveryPort;
  authority: AuthorityConnector;
  /** Opened when the authority refuses our credential, closed by any other answer. */
  hold: Pick<AuthorityHold, "passed" | "failed">;
}): JobHandler {
  const { invoices, authority, hold } = deps;

  return async (job, attempt): Promise<Verdict> => {
    const irn = job.irn as string;
    const target = await invoices.target(irn);
    if ("skip" in target) return { outcome: "skip", reason: target.skip };
    const { businessId } = target;
    const actor = `outbox:${attempt.owner}`;
    const started = Date.now();
    try {
      const receipt = await attempt.send(
        (signal) => authority.deliver({ irn, businessId, document: target.document }, signal),
        (message) => new DeliveryError(message),
      );
      const report = async (plan: Plan, tx: Executor) => {
        await hold.passed(tx);
        const durationMs = Date.now() - started;
        await invoices.delivered(
          irn,
          {
            businessId,
            at: receipt.at,
            actor,
            attempt: plan.attempts,
            durationMs,
            authority: authority.name,
            reference: receipt.reference,
            document: target.document,
          },
          tx,
        );
      };
      return { outcome: "done", report };
    } catch (err) {
      const verdict = authorityVerdict(err);
      const failure = err instanceof DeliveryError ? err : undefined;
      const held = verdict.outcome === "held";
      const cutOff = verdict.outcome === "failed" && verdict.cutOff;
      const permanent = verdict.outcome === "failed" && verdict.permanent;
      const report = async (plan: Plan, tx: Executor) => {
        await hold.failed(err, plan.at, tx);
        await invoices.attemptFailed(
          irn,
          {
            businessId,
            at: plan.at,
            actor,
            // The history numbers a held attempt as the claim did, though the budget does not count it.
            attempt: held ? job.attempts : plan.attempts,
            outcome: cutOff ? "incomplete" : permanent ? "rejected" : held ? "held" : "error",
            error: verdict.error,
            ...(failure?.state ? { authorityState: failure.state } : {}),
            ...(failure?.answer ? { authorityAnswer: failure.answer } : {}),
            ...(failure?.hold ? { hold: failure.hold } : {}),
            ...(cutOff ? {} : { durationMs: Date.now() - started }),
            ...(plan.next ? { nextAttemptAt: plan.next } : {}),
            authority: authority.name,
            final: plan.final,
          },
          tx,
        );
      };
      return { ...verdict, report };
    }
  };
}
