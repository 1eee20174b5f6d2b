import { JobFailure } from "../../outbox/failure.ts";

/** `attempt`: which attempt this is (1 the first); a later one may ask what the earlier ones did. */
export type Delivery = {
  irn: string;
  businessId: string;
  document: Record<string, unknown>;
  attempt?: number;
};
export type Receipt = { reference: string; at: string };

/**
 * Where an invoice stands at the authority after an attempt that did not deliver it, when the
 * authority says more than "not yet": REGISTERED (signed there, the transmission still to be made),
 * AWAITING_BUYER (the buyer has not enabled receiving; only the buyer can change that).
 */
export type AuthorityState = "REGISTERED" | "AWAITING_BUYER";

/** The authority's own words about a refusal, kept verbatim for the history and the lookup. */
export type AuthorityAnswer = {
  status: number;
  id?: string;
  handler?: string;
  details?: string;
  public_message?: string;
  sub_message?: string;
};

/**
 * A delivery that did not happen, as the authority's connectors say it: the outbox's retryable
 * failure (JobFailure: `permanent` ones, where the authority refused the invoice itself, are not
 * retried; all others, network, timeouts, 5xx, 429, refused credentials, are), with what the
 * authority said more. `hold` marks a failure that is not the invoice's: "configuration" (the
 * authority refused our credentials: the attempt is not counted against the invoice) and "buyer"
 * (waiting on the buyer: retried slowly).
 */
export class DeliveryError extends JobFailure {
  readonly state?: AuthorityState;
  readonly answer?: AuthorityAnswer;
  readonly hold?: "configuration" | "buyer";
  /**
   * The authority answered as it answers a refused credential (401, 403, MBS's credential 400).
   * Every delivery and forward would then be refused alike, so the outbox pauses them all and
   * probes (authority-hold.ts), not each invoice: but only on evidence that carries no tenant's
   * content. A call that carried a tenant's content (a document, an IRN) is answered so by what
   * stands in front of the authority too (a web firewall refusing a note), so such an answer is
   * judged by the connector's content-free `probe` before it means this (credential-probe.ts).
   */
  readonly credential: boolean;
  constructor(
    message: string,
    permanent = false,
    more: {
      state?: AuthorityState;
      answer?: AuthorityAnswer;
      hold?: "configuration" | "buyer";
      credential?: boolean;
    } = {},
  ) {
    super(message, permanent);
    this.name = "DeliveryError";
    this.state = more.state;
    this.answer = more.answer;
    this.hold = more.hold;
    this.credential = more.credential === true;
  }
}

/**
 * An invoice the authority holds for one of this APP's taxpayers as its buyer: its document, and
 * what the listing says of it besides (the buyer's TIN where the document references its party by
 * id only, when it was transmitted).
 */
export type WaitingInvoice = {
  document: Record<string, unknown>;
  irn?: string;
  customerTin?: string;
  supplierTin?: string;
  transmittedAt?: string;
  /** Why the listed entry is not read (it breaks a bound, or is not JSON): reported, never stored. */
  setAside?: string;
};

/** A day's list, its entries parsed a slice at a time as they are stored (pull-answer.ts). */
export type WaitingList = {
  length: number;
  /** Where a slice from `start` ends: at most `maxEntries`, and `maxBytes` of text unless one entry is more. */
  sliceEnd(start: number, maxEntries: number, maxBytes: number): number;
  read(start: number, end: number): Promise<WaitingInvoice[]>;
  /**
   * A digest of the answer's text up to the end of entry `end - 1`: the same when a day's list is
   * listed again with the same first `end` entries, so a pull going on where it stopped knows it.
   */
  prefixDigest(end: number): string;
};

/**
 * The buyer's side of an authority that relays invoices between access points (MBS): the invoices
 * waiting for this APP's taxpayers, and the receipt of one told back. Both must be safe to repeat:
 * a pull lists again what it listed, an acknowledgement is sent again after an ambiguous failure.
 */
export type ReceiptsConnector = {
  /** The invoices transmitted to this APP's taxpayers between two days (YYYY-MM-DD, both included). */
  pull(window: { from: string; to: string }, signal: AbortSignal): Promise<WaitingList>;
  /** Tells the authority the buyer has the invoice; what it answered, as it answered it. */
  acknowledge(irn: string, signal: AbortSignal): Promise<unknown>;
};

/**
 * What a content-free call that needs the credential says of it: it passed (the credential works),
 * it was refused as a credential is (401, 403, MBS's credential 400: `message` says so, in the
 * authority's words about that call alone), or nothing can be told (no answer, a 5xx, a time limit).
 */
export type ProbeAnswer =
  | { outcome: "passed" }
  | { outcome: "refused"; message: string }
  | { outcome: "unanswered"; message: string };

/**
 * Where a signed invoice goes to be fiscalized. Delivery must be idempotent on the IRN: the outbox
 * retries after ambiguous failures, so the same invoice may arrive twice and is fiscalized once.
 */
export type AuthorityConnector = {
  name: string;
  deliver(delivery: Delivery, signal: AbortSignal): Promise<Receipt>;
  /**
   * Connectors with credentials ask the authority one call that needs them and carries no tenant's
   * content: the only evidence a refused credential is judged on (credential-probe.ts).
   */
  probe?: (signal: AbortSignal) => Promise<ProbeAnswer>;
  /**
   * Connectors whose authority also keeps payment statuses and VAT reports (MBS) forward them; the
   * others keep them here only. Each must be idempotent: the outbox repeats after ambiguous failures.
   */
  forward?: (message: ForwardedMessage, signal: AbortSignal) => Promise<void>;
  /** Authorities that relay invoices to buyers' access points (MBS) let this one collect its taxpayers'. */
  receipts?: ReceiptsConnector;
};

/** A change the authority is told of after the invoice's delivery, as an outbox job's payload. */
export type ForwardedMessage =
  | { kind: "payment_update"; irn: string; update: PaymentUpdate }
  | { kind: "vat_report"; irn: string; report: Record<string, unknown> };

/** A payment status change as this service recorded it. */
export type PaymentUpdate = {
  payment_status: string;
  reference?: string | null;
  /** PARTIAL: the amount of this payment, and the day it was made. */
  amount?: number;
  payment_update_date?: string;
};
