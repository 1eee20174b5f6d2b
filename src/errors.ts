/*
 * The service's errors and findings, shared by every layer: domains throw DomainError and report
 * Violations; only src/http turns them into answers.
 */

/** One violation of a rule, addressed by a JSON path such as `invoice_line[0].price.price_amount`. */
export type Violation = {
  path: string;
  rule: string;
  message: string;
  expected?: unknown;
  actual?: unknown;
  /** For rules across fields: the other fields the finding depends on. */
  related?: string[];
  /** For a document sent as UBL: the element (or attribute) the finding is about, as an XPath. */
  xpath?: string;
};

/**
 * What can go wrong, in the service's own terms: a closed set, so the HTTP layer maps each one to a
 * status and nothing else decides it.
 */
export const DOMAIN_CODES = [
  /** A request the service cannot read: malformed JSON, a bad parameter, an unusable key. */
  "invalid_request",
  /** An invoice document that breaks the rules; `violations` lists them. */
  "validation_failed",
  "irn_exists",
  "irn_invalid",
  "invoice_not_found",
  "business_not_found",
  /** A page or feature of the operator dashboard that is not there (or is switched off). */
  "page_not_found",
  /** Anything else the framework could not find. */
  "resource_not_found",
  "route_not_found",
  "method_not_allowed",
  /** The authority refused the invoice, or it cannot be sent in its state. */
  "transmission_refused",
  /** Signed and queued for the authority: a final answer, unlike `service_unavailable`. */
  "transmission_queued",
  "requeue_refused",
  "payment_transition_refused",
  "batch_refused",
  "report_refused",
  /** A received invoice acknowledged or rejected already, the other way. */
  "inbox_decision_refused",
  "qr_code_invalid",
  "qr_code_refused",
  /** An Idempotency-Key sent again with another body or to another route. */
  "idempotency_key_reused",
  /** Another request with the same Idempotency-Key is still being processed. */
  "request_in_progress",
  /** An Idempotency-Key's request was done, but its answer was too large to keep for replay. */
  "idempotency_answer_not_kept",
  /** The answers a business's Idempotency-Keys keep fill its quota: retry later, or without a key. */
  "idempotency_quota_exceeded",
  "unauthenticated",
  /** A dashboard form without its session's token or from another origin. */
  "form_refused",
  "signed_out",
  "payload_too_large",
  /**
   * A stored or received invoice whose PDF is not rendered: more lines (or characters) than a signed
   * invoice may have, or its rendering outgrew the PDF thread's memory. The request was fine.
   */
  "too_large_to_print",
  /** A stored or received invoice that UBL (EN 16931) cannot state: a tax that is not VAT, say. */
  "ubl_not_expressible",
  "unsupported_media_type",
  "rate_limited",
  /** A business's messages waiting for the authority are as many as it may have: retry later. */
  "forward_queue_full",
  /** A dependency is away for a moment (the database, a thread, a key): retry after a delay. */
  "service_unavailable",
  "internal",
] as const;

export type DomainCode = (typeof DOMAIN_CODES)[number];

/**
 * The most violations (or warnings) one answer lists: a document of 10,000 empty lines has 70,000,
 * and no one reads past the first few hundred. The answer says how many there were in all.
 */
export const MAX_VIOLATIONS = 200;

/**
 * The first `limit` findings of a list, and how many were found in all: the list's and `beyond`,
 * those counted where they were found but never listed.
 */
export function capViolations(
  list: readonly Violation[],
  limit = MAX_VIOLATIONS,
  beyond = 0,
): { shown: Violation[]; total: number } {
  return { shown: list.slice(0, limit), total: list.length + beyond };
}

export type DomainErrorOptions = {
  /** The envelope's `message`, fixed by the spec for each operation. */
  message: string;
  /** What went wrong, precisely enough for an integrator to fix it. */
  details: string;
  publicMessage?: string;
  violations?: Violation[];
  /** How many violations were found, when `violations` lists only the first of them. */
  violationsTotal?: number;
  /** Seconds, for 429 and 503. */
  retryAfter?: number;
  /**
   * A 503 that is load, not failure: a full queue's refusal, or a job dropped because its client
   * went away. Logged at warn, not error (a flood would otherwise fill the error log).
   */
  busy?: boolean;
  /**
   * For `irn_exists`: the IRN holds this very document, signed at this time (a retry whose first
   * answer was lost). The answer stays the spec's; a header says it (see the error mapper).
   */
  identicalSignedAt?: string;
};

/**
 * The one error type the service throws. It says what went wrong in the domain's terms; the HTTP
 * error mapper (src/http/error-mapper.ts) alone decides the status and the envelope.
 */
export class DomainError extends Error {
  readonly code: DomainCode;
  readonly details: string;
  readonly publicMessage: string | undefined;
  readonly violations: Violation[] | undefined;
  readonly violationsTotal: number | undefined;
  readonly retryAfter: number | undefined;
  readonly busy: boolean;
  readonly identicalSignedAt: string | undefined;

  constructor(code: DomainCode, options: DomainErrorOptions) {
    super(options.message);
    this.name = "DomainError";
    this.code = code;
    this.details = options.details;
    this.publicMessage = options.publicMessage;
    this.violations = options.violations;
    this.violationsTotal = options.violationsTotal;
    this.retryAfter = options.retryAfter;
    this.busy = options.busy ?? false;
    this.identicalSignedAt = options.identicalSignedAt;
  }
}

/** A one-line summary naming the first violations, for `error.details`. */
export function summarize(violations: readonly Violation[], limit = 3, total = violations.length): string {
  const head = violations
    .slice(0, limit)
    .map((v) => `${v.path} ${v.message}`)
    .join("; ");
  const more = total > limit ? ` (and ${total - limit} more, see error.violations)` : "";
  return `${head}${more}`;
}
