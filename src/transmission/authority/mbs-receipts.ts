import { parseIrn } from "../../crypto/irn.ts";
import type { ReceiptsConnector, WaitingList } from "./connector.ts";
import { DeliveryError } from "./connector.ts";
import { classify, failureOf, isObject } from "./mbs-answers.ts";
import type { MbsClient, PullConfirmed } from "./mbs-client.ts";
import { pulledList } from "./pull-answer.ts";

/**
 * The most a pull's answer may be by default (EINVOICE_MBS_PULL_MAX_MB): a day of invoices for
 * every taxpayer of the APP, some 10,000 of 3 kB. Bounded so a runaway answer costs a failed pull,
 * not the worker's memory; a cut-off list is refused, never read as a shorter one (invoices would be
 * missed). Its entries are bounded too, each on its own (pull-answer.ts).
 */
export const PULL_MAX_BYTES = 32 * 2 ** 20;

/**
 * The buyer's side of MBS: `GET transmit/pull` for what waits for this APP's taxpayers, and
 * `PATCH transmit/{IRN}` to acknowledge one, sent with `{"message": "ACKNOWLEDGED"}` ([client] a
 * 2026 integrator's body; [doc] the Swagger example sends none, which the simulator also takes).
 * Each answer is judged by mbs-answers.ts like every other call.
 */
export function mbsReceipts(
  client: MbsClient,
  confirmed: PullConfirmed = "false",
  maxBytes = PULL_MAX_BYTES,
): ReceiptsConnector {
  return {
    async pull(window, signal) {
      const query = new URLSearchParams({
        ...(confirmed === "omit" ? {} : { confirmed }),
        from: window.from,
        to: window.to,
      });
      const answer = await client.call(
        "pull",
        "GET",
        `/api/v1/invoice/transmit/pull?${query}`,
        signal,
        undefined,
        { maxBytes, readOk: (text, mask) => pulledList(text, mask) },
      );
      const verdict = classify(answer);
      if (verdict.kind !== "ok") throw failureOf("pull", answer, verdict);
      return answer.body as WaitingList;
    },

    async acknowledge(irn, signal) {
      // A second guard (the acknowledgement job checks first): an IRN received from elsewhere goes
      // into the path of a call made with our credential only when it is an IRN.
      const parsed = parseIrn(irn);
      if ("error" in parsed) throw new DeliveryError(`MBS acknowledge not sent: ${parsed.error}`, true);
      const answer = await client.call(
        "acknowledge",
        "PATCH",
        `/api/v1/invoice/transmit/${encodeURIComponent(irn)}`,
        signal,
        { message: "ACKNOWLEDGED" },
      );
      const verdict = classify(answer);
      if (verdict.kind !== "ok") throw failureOf("acknowledge", answer, verdict);
      return isObject(answer.body) ? (answer.body.data ?? null) : null;
    },
  };
}
