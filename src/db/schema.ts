import type { Generated, Insertable, Selectable } from "kysely";

/** Row types of every table; repositories are the only readers and writers. */
export interface BusinessTable {
  id: string;
  name: string;
  tin: string;
  service_id: string;
  certificate: string;
  created_at: string;
  /** `signature.hash` of the business's latest signed invoice: the head of its hash chain. */
  chain_head: Generated<string | null>;
  chain_length: Generated<number>;
}

export interface ApiKeyTable {
  api_key: string;
  business_id: string;
  /** HMAC-SHA256(pepper, secret), hex: the secret itself is never stored. */
  secret_hash: string;
  created_at: string;
  revoked_at: string | null;
}

/**
 * The values the service stores in invoices.status and invoices.payment_status. Their meaning and
 * moves belong to invoices/lifecycle.ts, which fails to compile unless its lists are these.
 */
export type StoredInvoiceStatus = "SIGNED" | "TRANSMITTING" | "TRANSMITTED" | "TRANSMISSION_FAILED";
export type StoredPaymentStatus = "PENDING" | "PARTIAL" | "PAID" | "REJECTED";

export interface InvoiceTable {
  irn: string;
  business_id: string;
  status: StoredInvoiceStatus;
  payment_status: StoredPaymentStatus;
  payment_reference: string | null;
  invoice_type_code: string;
  issue_date: string;
  supplier_tin: string | null;
  customer_tin: string | null;
  /** The submitted document as JSON, without the fields kept in the encrypted column. */
  document: string;
  /** AES-256-GCM ciphertext of the document's confidential fields (note, payment_terms_note). */
  sealed: string | null;
  signed_at: string;
  transmitted_at: string | null;
  authority_reference: string | null;
  /** The QR text printed on the invoice, fixed at signing. */
  qr_code: string;
  updated_at: string;
  /** Position in the business's hash chain, from 1. */
  chain_seq: number | null;
  previous_hash: string | null;
  /** Hex SHA-256 of the signed payload. */
  hash: string | null;
  /** base64url Ed25519 signature of the signed payload. */
  signature: string | null;
  kid: string | null;
  /**
   * `legal_monetary_total.payable_amount` and the amount paid so far, in the currency's minor units
   * (0008). Integers: bigint on PostgreSQL, which pg returns as text; the repository converts.
   */
  payable_minor: number;
  paid_minor: number;
  /** The minor-unit digits of the document currency the two amounts are counted in (NGN 2). */
  currency_digits: number;
}

export interface InvoiceEventTable {
  id: Generated<number>;
  irn: string;
  at: string;
  type: string;
  /** Who acted: `key:<api key>`, `outbox:<worker>`, `cli`, … (null only on rows older than 0004). */
  actor: string | null;
  detail: string;
}

/** Changes that are not about one invoice: businesses, credentials, webhooks, keys. */
export interface AuditLogTable {
  id: Generated<number>;
  at: string;
  actor: string;
  action: string;
  business_id: string | null;
  subject: string;
  detail: string;
}

export interface FiscalizationReportTable {
  id: Generated<number>;
  irn: string;
  business_id: string;
  report: string;
  created_at: string;
  /**
   * The report's place among its invoice's reports, from 1 (0015): the authority knows it by it.
   * Unique per invoice; null only on a row written by a process older than 0015.
   */
  number: number | null;
}

/**
 * One payment recorded on an invoice (0015): each `payment_updated` entry with an amount, kept where
 * an update finds a retried PARTIAL and counts the payments by index, not by reading the history.
 */
export interface InvoicePaymentTable {
  irn: string;
  /** The payment's place among the invoice's payments, from 1. */
  seq: number;
  /** The reference the update came with (the one a retry repeats), or null. */
  reference: string | null;
  /** In the currency's minor units: bigint on PostgreSQL, which pg returns as text. */
  amount_minor: number;
  at: string;
}

export interface ProductTable {
  hscode: string;
  description: string;
  section: string;
  chapter: string;
  product_category: string;
}

export interface ServiceTable {
  code: string;
  description: string;
  section: string;
  division: string;
  service_category: string;
}

/**
 * delivery: an invoice to the authority; webhook: an event; forward: a later message to the
 * authority; acknowledgement: a received invoice's receipt, told to the authority; pull: one day of
 * the invoices the authority holds for this service's businesses as buyers (0018).
 */
export type JobKind = "delivery" | "webhook" | "forward" | "acknowledgement" | "pull";
export type JobState = "pending" | "done" | "failed";

/** The durable outbox: deliveries to the authority and webhook events, each retried until done. */
export interface OutboxJobTable {
  id: Generated<number>;
  kind: JobKind;
  irn: string | null;
  business_id: string;
  /** Webhooks: the event body, fixed at enqueue so every retry sends the same bytes. */
  payload: string | null;
  /** `pending` jobs with an unexpired lease are in flight. */
  state: JobState;
  attempts: Generated<number>;
  next_attempt_at: string;
  lease_owner: string | null;
  lease_expires_at: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookTable {
  business_id: string;
  url: string;
  /** Sealed: it must be readable to sign deliveries, so it is encrypted, not hashed. */
  secret: string;
  created_at: string;
}

/**
 * A business's Idempotency-Key: claimed by the request that first sent it (`status` null while it
 * runs), then holding that request's answer, replayed to any retry for 24 hours.
 */
export interface IdempotencyKeyTable {
  business_id: string;
  idempotency_key: string;
  /** `METHOD /path pattern` the key was used on. */
  route: string;
  /** Hex SHA-256 of the RFC 8785 form of the request body. */
  fingerprint: string;
  /** A random token naming the request that holds the key: only it may store the answer. */
  claim: string;
  /** When the key was claimed (again, after a takeover); its 24 hours run from here. */
  created_at: string;
  /** The answer's HTTP status; null while the request is in flight. */
  status: number | null;
  /** The answer's Retry-After, in seconds, when it had one. */
  retry_after: number | null;
  /** The answer's body, byte for byte as it was sent, when it is at most 1 KiB. */
  response: string | null;
  /** A larger answer, gzip-compressed, when that takes at most 64 KiB (0014). */
  response_gzip: Buffer | null;
  /** The size of the answer as it was sent, in bytes, when it is not in `response` (0014). */
  response_bytes: number | null;
  /** Hex SHA-256 of the answer as it was sent, when it is not in `response` (0014). */
  response_sha256: string | null;
  /**
   * An answer too large to keep (0014): `rerun` when its request changed nothing, so a retry runs it
   * again; `refuse` when it did, so a retry is refused (409). Null when the answer is kept.
   */
  replay: "rerun" | "refuse" | null;
}

/**
 * The bytes of answers a business's Idempotency-Keys keep, by the 15-minute slot they were stored
 * in (0014): the slots of the last 24 hours are what its quota counts.
 */
export interface IdempotencyUsageTable {
  business_id: string;
  /** Milliseconds since the epoch / 900,000. */
  slot: number;
  /** bigint on PostgreSQL, which pg returns as text. */
  bytes: number | string;
}

/** One row: the data key `keys rotate-data-key` made current (null: the first configured one). */
export interface DataKeyStateTable {
  id: number;
  kid: string | null;
  rotated_at: string | null;
}

/** Requests counted under one rate-limit key in one 10-second bucket, by every API process together. */
export interface RateLimitHitTable {
  /**
   * `credential:…`, `auth-failures:…`, `public:…` or a route's own limit, then the key or address;
   * `key-failures:<API key>@<address>` for an existing key's wrong secrets from one address.
   */
  key: string;
  /** Milliseconds since the epoch / 10,000. */
  bucket: number;
  hits: number;
}

/** An authority refusing this service's credential: its deliveries wait, one probe at a time. */
export interface AuthorityHoldTable {
  authority: string;
  since: string;
  /** The refusal, as the attempt that met it recorded it (the authority's words, no credential). */
  reason: string;
  /** When the next probe may be claimed; each claim of one moves it on by the probe interval. */
  next_probe_at: string;
  probes: Generated<number>;
}

/** The last dashboard sign-out (one row, id 1): every session issued until then has ended. */
export interface DashboardSessionTable {
  id: number;
  /** ISO 8601, milliseconds: sessions issued at or before it are refused. */
  not_before: string;
}

/**
 * One row: a counter the triggers on `api_keys` move with every change to it, in the same
 * transaction (migration-0019.ts, active-keys.ts).
 */
export interface CredentialChangesTable {
  id: number;
  version: number | string;
}

/** RECEIVED until the buyer acknowledges or rejects it (inbox/). */
export type ReceivedStatus = "RECEIVED" | "ACKNOWLEDGED" | "REJECTED";
/**
 * Where telling the authority of the buyer's acknowledgement stands: none asked yet, queued, done,
 * failed for good, or not needed (the invoice came from another business of this service).
 */
export type AcknowledgementState = "none" | "queued" | "sent" | "failed" | "not_needed";

/** An invoice one of this service's businesses received as the buyer (0017). */
export interface ReceivedInvoiceTable {
  id: Generated<number>;
  /** The buyer: the business whose TIN the invoice's customer party carries. */
  business_id: string;
  irn: string;
  /** `mbs` (pulled from the authority) or `builtin` (signed by another business of this service). */
  source: string;
  supplier_tin: string | null;
  supplier_name: string | null;
  customer_tin: string;
  issue_date: string | null;
  invoice_type_code: string | null;
  currency: string | null;
  /** `legal_monetary_total.payable_amount` as received, as text (a supplier's number is not rounded). */
  payable_amount: string | null;
  /** The document as received, JSON, without its confidential fields (as invoices.document). */
  document: string;
  /** AES-256-GCM ciphertext of the confidential fields, as invoices.sealed. */
  sealed: string | null;
  /** JSON list of what the checks found ({path, rule, message}): warnings, never a reason to drop it. */
  checks: string;
  /** How many findings `checks` lists, for the inbox's pages (0018). */
  warnings: number;
  status: ReceivedStatus;
  acknowledgement: AcknowledgementState;
  /** Why the buyer rejected it. */
  reason: string | null;
  received_at: string;
  decided_at: string | null;
  updated_at: string;
}

export interface ReceivedInvoiceEventTable {
  id: Generated<number>;
  received_id: number;
  at: string;
  type: string;
  actor: string;
  detail: string;
}

/**
 * Where collecting from a source stands (0017): one row per source. Its cursor and next time are
 * the schedule the workers queue each day's pull job by (0018: the outbox's lease and retry policy
 * run the pulls); the rest says what the pulls did.
 */
export interface InboxPullTable {
  source: string;
  /** The last day (YYYY-MM-DD) queued; the next collection queues from the day before it. */
  cursor_day: string | null;
  next_pull_at: string | null;
  last_pulled_at: string | null;
  last_error: string | null;
  /** JSON: what the last day pulled did (listed, stored, already, set aside), 0018. */
  last_outcome: string | null;
  pulls: Generated<number>;
  received: Generated<number>;
}

export interface Database {
  businesses: BusinessTable;
  api_keys: ApiKeyTable;
  invoices: InvoiceTable;
  invoice_events: InvoiceEventTable;
  fiscalization_reports: FiscalizationReportTable;
  invoice_payments: InvoicePaymentTable;
  products: ProductTable;
  services: ServiceTable;
  outbox_jobs: OutboxJobTable;
  audit_log: AuditLogTable;
  webhooks: WebhookTable;
  idempotency_keys: IdempotencyKeyTable;
  idempotency_usage: IdempotencyUsageTable;
  data_key_state: DataKeyStateTable;
  rate_limit_hits: RateLimitHitTable;
  authority_holds: AuthorityHoldTable;
  dashboard_sessions: DashboardSessionTable;
  received_invoices: ReceivedInvoiceTable;
  received_invoice_events: ReceivedInvoiceEventTable;
  inbox_pulls: InboxPullTable;
  credential_changes: CredentialChangesTable;
}

export type Business = Selectable<BusinessTable>;
export type NewBusinessRow = Insertable<BusinessTable>;
export type OutboxJob = Selectable<OutboxJobTable>;
