import { parseIrn } from "../../crypto/irn.ts";
import type { ReceiptsConnector, WaitingInvoice } from "./connector.ts";
import { DeliveryError } from "./connector.ts";
import { classify, failureOf, isObject } from "./mbs-answers.ts";
import type { MbsClient, PullConfirmed } from "./mbs-client.ts";

/**
 * The most a pull's answer may be: a day of invoices for every taxpayer of the APP. Bounded so a
 * runaway answer costs a failed pull, not the worker's memory; a cut-off list is refused, never read
 * as a shorter one (invoices would be missed and the cursor moved past them).
 */
export const PULL_MAX_BYTES = 64 * 2 ** 20;

const text = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** Where the list is in a pull's answer: its shape is [unknown], so the likely places are tried. */
function listOf(body: unknown): unknown[] | undefined {
  if (Array.isArray(body)) return body;
  if (!isObject(body)) return undefined;
  const data = body.data;
  if (Array.isArray(data)) return data;
  // `{"code": 200, "data": null}`: nothing waiting, as MBS answers an empty success elsewhere.
  if (data === null) return [];
  if (isObject(data)) {
    for (const key of ["items", "invoices", "data", "content", "records", "results"]) {
      const list = data[key];
      if (Array.isArray(list)) return list;
    }
  }
  return undefined;
}

/**
 * One listed invoice: the document itself, or the document beside what the listing says of it
 * (`document` or `invoice`). An entry that is neither is handed on empty, so the checks report it
 * (no IRN) instead of it vanishing.
 */
function waitingOf(item: unknown): WaitingInvoice {
  if (!isObject(item)) return { document: {} };
  const document = isObject(item.document) ? item.document : isObject(item.invoice) ? item.invoice : item;
  const waiting: WaitingInvoice = { document };
  const irn = text(item.irn) ?? text(document.irn);
  if (irn !== undefined) waiting.irn = irn;
  const customerTin = text(item.customer_tin) ?? text(item.buyer_tin) ?? text(item.receiver_tin);
  if (customerTin !== undefined) waiting.customerTin = customerTin;
  const supplierTin = text(item.supplier_tin) ?? text(item.sender_tin);
  if (supplierTin !== undefined) waiting.supplierTin = supplierTin;
  const transmittedAt = text(item.transmitted_at);
  if (transmittedAt !== undefined) waiting.transmittedAt = transmittedAt;
  return waiting;
}

/**
 * The buyer's side of MBS: `GET transmit/pull` for what waits for this APP's taxpayers, and
 * `PATCH transmit/{IRN}` to acknowledge one, sent with `{"message": "ACKNOWLEDGED"}` ([client] a
 * 2026 integrator's body; [doc] the Swagger example sends none, which the simulator also takes).
 * Each answer is judged by mbs-answers.ts like every other call.
 */
export function mbsReceipts(client: MbsClient, confirmed: PullConfirmed = "false"): ReceiptsConnector {
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
        { maxBytes: PULL_MAX_BYTES },
      );
      const verdict = classify(answer);
      if (verdict.kind !== "ok") throw failureOf("pull", answer, verdict);
      const list = listOf(answer.body);
      if (list === undefined)
        throw new DeliveryError(
          `MBS pull answered ${answer.status} without a list of invoices where one was looked for (data, data.items, data.invoices) (request ${answer.requestId})`,
        );
      return list.map(waitingOf);
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
