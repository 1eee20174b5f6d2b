import { parseIrn } from "../crypto/irn.ts";
import type { Executor } from "../db/database.ts";
import type { JobHandler, Plan, Verdict } from "../outbox/verdict.ts";
import { DeliveryError, type ReceiptsConnector } from "./authority/connector.ts";
import { type AuthorityHold, authorityVerdict } from "./authority-hold.ts";
import type { ReceiptPort } from "./port.ts";

/**
 * A received invoice's acknowledgement, told to the authority (MBS `PATCH transmit/{IRN}`), queued
 * in the transaction of the buyer's decision. Repeating it is harmless (MBS acknowledges an IRN
 * once), so the outbox may send it again after an ambiguous failure. What the authority answered is
 * kept in the received invoice's history, done or failed for good.
 */
export function acknowledgementHandler(deps: {
  receipts: ReceiptsConnector | undefined;
  inbox: ReceiptPort;
  /** Opened when the authority refuses our credential, closed by any other answer. */
  hold: Pick<AuthorityHold, "passed" | "failed">;
}): JobHandler {
  const { receipts, inbox, hold } = deps;
  return async (job, attempt): Promise<Verdict> => {
    const { receivedId } = JSON.parse(job.payload ?? "{}") as { receivedId?: number };
    if (!receipts || !job.irn || typeof receivedId !== "number")
      return { outcome: "skip", reason: "nothing to acknowledge to this authority" };
    const irn = job.irn;
    const actor = `outbox:${attempt.owner}`;
    // A received IRN is the supplier's text: stored with its warning, but never put in a request to
    // the authority with our credential unless it is an IRN (`..` made the PATCH another path).
    // Nothing will change that, so the job fails for good at once, saying why, and no call is made.
    const parsed = parseIrn(irn);
    if ("error" in parsed) {
      const error = `not told to the authority: the received invoice's IRN is not an IRN (${parsed.error})`;
      const report = (plan: Plan, tx: Executor) => inbox.told(receivedId, { plan, actor }, tx);
      return { outcome: "failed", error, permanent: true, cutOff: false, report };
    }
    try {
      const answer = await attempt.send(
        (signal) => receipts.acknowledge(irn, signal),
        (message) => new DeliveryError(message),
      );
      const report = async (plan: Plan, tx: Executor) => {
        await hold.passed(tx);
        await inbox.told(receivedId, { plan, actor, answer: { data: answer } }, tx);
      };
      return { outcome: "done", report };
    } catch (err) {
      const report = async (plan: Plan, tx: Executor) => {
        await hold.failed(err, plan.at, tx);
        if (plan.final) {
          const answer = err instanceof DeliveryError ? err.answer : undefined;
          await inbox.told(receivedId, { plan, actor, ...(answer ? { answer: { ...answer } } : {}) }, tx);
        }
      };
      return { ...authorityVerdict(err), report };
    }
  };
}
