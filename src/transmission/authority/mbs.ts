import { setTimeout as sleep } from "node:timers/promises";
import canonicalize from "canonicalize";
import type { AuthorityConnector, ForwardedMessage, ProbeAnswer, Receipt } from "./connector.ts";
import { DeliveryError } from "./connector.ts";
import {
  classify,
  describe,
  failureOf,
  isCredentialRefusal,
  isObject,
  type MbsAnswer,
} from "./mbs-answers.ts";
import { type MbsClient, type MbsSettings, mbsClient } from "./mbs-client.ts";
import { mbsDocument, mbsPaymentUpdate, mbsVatReports } from "./mbs-mapping.ts";
import { mbsReceipts } from "./mbs-receipts.ts";

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

/** A VAT report: the integrators' form first; the documented one only if MBS has no route for it. */
async function vatReport(
  client: MbsClient,
  body: ReturnType<typeof mbsVatReports>,
  signal: AbortSignal,
): Promise<void> {
  const live = await client.call("vat/postpayment", "POST", "/api/v1/vat/postpayment", signal, body.live);
  const verdict = classify(live);
  if (verdict.kind === "ok") return;
  // [recorded] the documented path answered the no-route 404; integrators use /api/v1/vat/postpayment.
  if (live.status === 404 && verdict.kind === "configuration") {
    const documented = await client.call(
      "vat/postPayment",
      "POST",
      "/v1/vat/postPayment",
      signal,
      body.documented,
    );
    const again = classify(documented);
    if (again.kind === "ok") return;
    throw failureOf("vat/postPayment", documented, again);
  }
  throw failureOf("vat/postpayment", live, verdict);
}

/**
 * The credential's probe: entity search, one entry of the first page ([doc] paged by `page` and
 * `size`). It needs the credential and carries no tenant's content: [recorded] MBS answered a
 * placeholder credential on entity search with its credential 400 ("unable to validate api key"),
 * while the reference lists (`resources/*`) and the health check answered without any credential,
 * so their answers cannot tell a refused credential from a good one. A fixed, valid query and no id:
 * MBS answered a malformed entity id before it checked the credential [recorded]. What it lists is
 * not kept.
 */
export const PROBE_PATH = "/api/v1/entity?page=1&size=1";
const PROBE_STEP = "credential probe (entity search)";

async function probeOf(client: MbsClient, signal: AbortSignal): Promise<ProbeAnswer> {
  const answer = await client.call(PROBE_STEP, "GET", PROBE_PATH, signal);
  if (classify(answer).kind === "ok") return { outcome: "passed" };
  // A 403 too: to a call without content, a firewall refusing this service refuses every call.
  if (isCredentialRefusal(answer)) return { outcome: "refused", message: describe(PROBE_STEP, answer) };
  // A 5xx, a proxy's page, a no-route 404: nothing said of the credential.
  return { outcome: "unanswered", message: describe(PROBE_STEP, answer) };
}

/** What `confirm` says of an IRN: held there, not held, or no answer worth acting on (thrown). */
type Registration = "registered" | "not_registered";

/**
 * The authority's MBS API (the MBS spec). One delivery follows the spec's section 4, which tells a
 * duplicate from a refusal by asking MBS, never by its words (its refusals all carry the same
 * "…confirm this is not a duplicate request", and its duplicate answer says "try again later"):
 *
 * 1. `confirm/{IRN}` on every attempt (an earlier sign's fate is never assumed). Registered → 5.
 * 2. `validate`: a 4xx (other than a refused credential or a missing route) is the refusal, its
 *    words kept verbatim: step 1 has just shown the IRN is not registered.
 * 3. `sign`: 2xx → registered; 5xx, timeout, reset → the outcome is unknown, the next attempt
 *    starts at step 1; any other 4xx → 4.
 * 4. `confirm` again. Registered → 5. Not registered → `sign` is repeated after a pause, at most
 *    `signRepeats` times (in case the 4xx was a real transient fault), then it is a refusal with
 *    the sign answer's words.
 * 5. Registered: `download`, compare what identifies the invoice; ours → `transmit/{IRN}`, another
 *    document → refused, the IRN clashes.
 *
 * Payment updates go to `update/{IRN}` and VAT reports to `vat/postpayment` through `forward`,
 * after the invoice's delivery. What each answer means is decided once, in mbs-answers.ts.
 */
export function mbsAuthority(settings: MbsSettings): AuthorityConnector {
  const client = mbsClient(settings);
  const path = (prefix: string, irn: string) => `/api/v1/invoice/${prefix}${encodeURIComponent(irn)}`;
  const signRepeats = settings.signRepeats ?? 1;
  const signRepeatDelayMs = settings.signRepeatDelayMs ?? 2000;

  /** MBS holds the IRN: delivered there if it is our document; refused for good if it is another. */
  async function reconcile(irn: string, sent: Record<string, unknown>, signal: AbortSignal): Promise<void> {
    const held = await client.call("download", "GET", path("download/", irn), signal);
    const verdict = classify(held);
    // MBS has just said it holds the IRN: a download that cannot find it is MBS catching up, not a refusal.
    if (verdict.kind === "refused" && held.status === 404)
      throw new DeliveryError(`${describe("download", held)}: MBS holds ${irn} but did not find it yet`);
    if (verdict.kind !== "ok") throw failureOf("download", held, verdict);
    if (!holdsOurs(held, sent)) {
      throw new DeliveryError(
        `MBS holds IRN ${irn} with a different document (download compared on IRN, business, issue date, both TINs and payable amount): the IRN clashes with an invoice registered there`,
        true,
        { answer: { status: held.status } },
      );
    }
  }

  /**
   * Whether MBS holds the IRN. "Not registered" is a 404, or a 400 that is not a credential
   * refusal: the spec's section 4; the real answer for an unknown IRN is not recorded.
   */
  async function registration(irn: string, signal: AbortSignal): Promise<Registration> {
    const confirmed = await client.call("confirm", "GET", path("confirm/", irn), signal);
    const verdict = classify(confirmed);
    if (verdict.kind === "ok") return "registered";
    if (verdict.kind === "refused" && (confirmed.status === 404 || confirmed.status === 400))
      return "not_registered";
    throw failureOf("confirm", confirmed, verdict);
  }

  const pause = (ms: number, signal: AbortSignal) =>
    sleep(ms, undefined, { signal }).catch(() => {
      throw new DeliveryError(`the delivery's time ran out while waiting to repeat MBS sign`);
    });

  /** Registers the invoice unless an earlier attempt did (steps 1 to 5). */
  async function register(irn: string, sent: Record<string, unknown>, signal: AbortSignal) {
    if ((await registration(irn, signal)) === "registered") return reconcile(irn, sent, signal);
    const validated = await client.call("validate", "POST", "/api/v1/invoice/validate", signal, sent);
    const verdict = classify(validated);
    if (verdict.kind !== "ok") throw failureOf("validate", validated, verdict);
    for (let repeat = 0; ; repeat++) {
      const signed = await client.call("sign", "POST", "/api/v1/invoice/sign", signal, sent);
      const signVerdict = classify(signed);
      if (signVerdict.kind === "ok") return;
      if (signVerdict.kind !== "refused") throw failureOf("sign", signed, signVerdict);
      // A 4xx: a duplicate (ours or another's) and a refusal read the same; MBS is asked.
      if ((await registration(irn, signal)) === "registered") return reconcile(irn, sent, signal);
      if (repeat >= signRepeats) throw failureOf("sign", signed, signVerdict);
      await pause(signRepeatDelayMs, signal);
    }
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
    if (verdict.kind === "ok") return { reference: referenceOf(sent, irn), at: new Date().toISOString() };
    const failure = failureOf("transmit", sent, verdict);
    // The IRN was registered in this attempt or confirmed in it: a 404 here is MBS catching up.
    const catchingUp = verdict.kind === "refused" && sent.status === 404;
    if ((failure.permanent && !catchingUp) || failure.state || failure.hold) throw failure;
    throw new DeliveryError(failure.message, false, { answer: failure.answer, state: "REGISTERED" });
  }

  async function forward(message: ForwardedMessage, signal: AbortSignal): Promise<void> {
    if (message.kind === "payment_update") {
      const body = mbsPaymentUpdate(message.update);
      const answer = await client.call("update", "PATCH", path("update/", message.irn), signal, body);
      const verdict = classify(answer);
      if (verdict.kind === "ok") return;
      throw failureOf("update", answer, verdict);
    }
    return vatReport(client, mbsVatReports(message.report, settings.serviceId), signal);
  }

  return {
    name: "mbs",
    async deliver(delivery, signal) {
      const sent = mbsDocument(delivery.document);
      await register(delivery.irn, sent, signal);
      return transmit(delivery.irn, signal);
    },
    forward,
    receipts: mbsReceipts(client, settings.pullConfirmed, settings.pullMaxBytes),
    probe: (signal) => probeOf(client, signal),
  };
}
