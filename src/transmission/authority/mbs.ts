import canonicalize from "canonicalize";
import type { AuthorityConnector, ForwardedMessage, Receipt } from "./connector.ts";
import { DeliveryError } from "./connector.ts";
import { classify, failureOf, isObject, type MbsAnswer } from "./mbs-answers.ts";
import { type MbsSettings, mbsClient } from "./mbs-client.ts";
import { mbsDocument, mbsPaymentUpdate, mbsVatReport } from "./mbs-mapping.ts";

/** The `data` of an MBS success envelope. */
const dataOf = (answer: MbsAnswer) => (isObject(answer.body) ? answer.body.data : undefined);

/**
 * The authority's reference for a delivery: what MBS answered to the transmission. Its shape is not
 * settled (the MBS spec, section 4), so a text is kept as it is and anything else as its JSON.
 */
function referenceOf(answer: MbsAnswer, irn: string): string {
  const data = dataOf(answer);
  if (typeof data === "string" && data !== "") return data.slice(0, 500);
  if (data === undefined || data === null) return `MBS:${irn}`;
  return JSON.stringify(data).slice(0, 500);
}

/** What identifies an invoice's content: its IRN, business, date, parties and amount. */
const IDENTITY: ReadonlyArray<(doc: Record<string, unknown>) => unknown> = [
  (doc) => doc.irn,
  (doc) => doc.business_id,
  (doc) => doc.issue_date,
  (doc) => (isObject(doc.accounting_supplier_party) ? doc.accounting_supplier_party.tin : undefined),
  (doc) => (isObject(doc.accounting_customer_party) ? doc.accounting_customer_party.tin : undefined),
  (doc) => (isObject(doc.legal_monetary_total) ? doc.legal_monetary_total.payable_amount : undefined),
];

/**
 * Whether the invoice MBS holds under an IRN is the one we sent. MBS may normalise what it stores
 * or drop fields it does not know, and `download`'s shape is not settled (the MBS spec, section 9):
 * so the fields that identify an invoice are compared, each where MBS gives one, not the whole
 * document. An answer with none of them is taken for ours (an IRN is our business's service id and
 * invoice number, which this service never signs twice).
 */
function holdsOurs(answer: MbsAnswer, sent: Record<string, unknown>): boolean {
  const data = dataOf(answer);
  const held = isObject(data)
    ? isObject(data.document)
      ? data.document
      : isObject(data.invoice)
        ? data.invoice
        : data
    : {};
  return IDENTITY.every((field) => {
    const theirs = field(held);
    // Amounts compared as numbers: `693375` and `"693375.00"` are the same amount.
    const same = (a: unknown, b: unknown) =>
      typeof a === "number" || typeof b === "number"
        ? Number(a) === Number(b)
        : canonicalize(a) === canonicalize(b);
    return theirs === undefined || same(theirs, field(sent));
  });
}

/**
 * The authority's MBS API (the MBS spec). One delivery is these steps, each safe to repeat:
 * `confirm` (registered by an earlier attempt? then `download` and compare), else `validate` and
 * `sign` (a duplicate answer is resolved the same way), then `transmit/{IRN}` (POST). Payment
 * updates go to `update/{IRN}` and fiscalization reports to `vat/postPayment` through `forward`,
 * after the invoice's delivery. What each answer means is decided once, in mbs-answers.ts.
 */
export function mbsAuthority(settings: MbsSettings): AuthorityConnector {
  const client = mbsClient(settings);
  const path = (prefix: string, irn: string) => `/api/v1/invoice/${prefix}${encodeURIComponent(irn)}`;

  /** MBS holds the IRN: delivered there if it is our document; refused for good if it is another. */
  async function reconcile(irn: string, sent: Record<string, unknown>, signal: AbortSignal): Promise<void> {
    const held = await client.call("download", "GET", path("download/", irn), signal);
    const verdict = classify(held);
    // MBS has just said it holds the IRN: a download that cannot find it is MBS catching up, not a refusal.
    if (verdict.kind === "not_found") throw new DeliveryError(`MBS download did not find ${irn} yet`, false);
    if (verdict.kind !== "ok") throw failureOf("download", held, verdict);
    if (!holdsOurs(held, sent)) {
      throw new DeliveryError(`MBS holds IRN ${irn} with a different document`, true);
    }
  }

  /** Whether an earlier attempt registered the IRN (asked before repeating a sign whose fate is unknown). */
  async function registered(irn: string, signal: AbortSignal): Promise<boolean> {
    const confirmed = await client.call("confirm", "GET", path("confirm/", irn), signal);
    const verdict = classify(confirmed);
    if (verdict.kind === "ok") return true;
    if (verdict.kind === "not_found") return false;
    throw failureOf("confirm", confirmed, verdict);
  }

  /**
   * Registers the invoice unless an earlier attempt did. `confirm` is asked first on every attempt:
   * the fate of an earlier sign (timed out, its answer lost, its worker killed, an attempt held and
   * given back) is never assumed, and what MBS answers a repeated sign is not settled.
   */
  async function register(irn: string, sent: Record<string, unknown>, signal: AbortSignal) {
    if (await registered(irn, signal)) return reconcile(irn, sent, signal);
    const validated = await client.call("validate", "POST", "/api/v1/invoice/validate", signal, sent);
    const verdict = classify(validated);
    // MBS may answer a document whose IRN it holds as a duplicate at validate already.
    if (verdict.kind === "duplicate") return reconcile(irn, sent, signal);
    if (verdict.kind !== "ok") throw failureOf("validate", validated, verdict);
    const signed = await client.call("sign", "POST", "/api/v1/invoice/sign", signal, sent);
    const signVerdict = classify(signed);
    if (signVerdict.kind === "duplicate") return reconcile(irn, sent, signal);
    if (signVerdict.kind !== "ok") throw failureOf("sign", signed, signVerdict);
  }

  async function transmit(irn: string, signal: AbortSignal): Promise<Receipt> {
    let sent: MbsAnswer;
    try {
      sent = await client.call("transmit", "POST", path("transmit/", irn), signal);
    } catch (err) {
      // Registered, and the transmission's fate unknown: say so; the next attempt transmits again.
      if (err instanceof DeliveryError && !err.permanent)
        throw new DeliveryError(err.message, false, { state: "REGISTERED" });
      throw err;
    }
    const verdict = classify(sent);
    // A transmission MBS made already (an earlier attempt's answer lost) is this one's success.
    if (verdict.kind === "ok" || verdict.kind === "duplicate") {
      return { reference: referenceOf(sent, irn), at: new Date().toISOString() };
    }
    const failure = failureOf("transmit", sent, verdict);
    // The IRN was registered in this attempt or confirmed in it: "not found" here is MBS catching up.
    const refused = failure.permanent && verdict.kind !== "not_found";
    if (refused || failure.state || failure.hold) throw failure;
    throw new DeliveryError(failure.message, false, { answer: failure.answer, state: "REGISTERED" });
  }

  async function forward(message: ForwardedMessage, signal: AbortSignal): Promise<void> {
    if (message.kind === "payment_update") {
      const body = mbsPaymentUpdate(message.update);
      const answer = await client.call("update", "PATCH", path("update/", message.irn), signal, body);
      const verdict = classify(answer);
      // A repeat of an update MBS applied already (its answer lost) is no failure.
      if (verdict.kind === "ok" || verdict.kind === "duplicate") return;
      throw failureOf("update", answer, verdict);
    }
    const body = mbsVatReport(message.report);
    const answer = await client.call("vat/postPayment", "POST", "/v1/vat/postPayment", signal, body);
    if (classify(answer).kind === "ok") return;
    // The collection's path has no /api prefix; integrators also reach it under /api (the MBS spec, section 2).
    if (answer.status === 404) {
      const again = await client.call("vat/postpayment", "POST", "/api/v1/vat/postpayment", signal, body);
      const verdict = classify(again);
      if (verdict.kind === "ok" || verdict.kind === "duplicate") return;
      throw failureOf("vat/postpayment", again, verdict);
    }
    const verdict = classify(answer);
    if (verdict.kind === "duplicate") return;
    throw failureOf("vat/postPayment", answer, verdict);
  }

  return {
    name: "mbs",
    async deliver(delivery, signal) {
      const sent = mbsDocument(delivery.document);
      await register(delivery.irn, sent, signal);
      return transmit(delivery.irn, signal);
    },
    forward,
  };
}
