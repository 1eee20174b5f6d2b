import type { Executor } from "../db/database.ts";
import type { AuthorityAnswer, AuthorityState } from "./authority/connector.ts";

/** What every report of an attempt says: whose invoice, when, by whom, which attempt, to whom. */
type Attempt = { businessId: string; at: string; actor: string; attempt: number; authority: string };

/**
 * What the deliveries need of the invoices they deliver, and how they report what became of them.
 * Transmission knows the authority and what its answers mean; what a delivery means for an invoice
 * (its state, its history, its notices) is the invoice lifecycle's, behind this port.
 */
export type DeliveryPort = {
  /** The document to deliver and whose it is, or why there is nothing to deliver. */
  target(
    irn: string,
  ): Promise<{ businessId: string; document: Record<string, unknown> } | { skip: string | null }>;
  /** The authority confirmed the invoice. In the outbox's transaction. */
  delivered(
    irn: string,
    report: Attempt & {
      durationMs: number;
      reference: string;
      /** The document delivered, as `target` gave it. */
      document: Record<string, unknown>;
    },
    tx: Executor,
  ): Promise<void>;
  /** An attempt failed; `final` when no other will be made. In the outbox's transaction. */
  attemptFailed(
    irn: string,
    report: Attempt & {
      /** held: not counted against the budget (see DeliveryError's `hold`). */
      outcome: "error" | "rejected" | "incomplete" | "held";
      error: string;
      /** What the authority said of the invoice's state there, and its own words, verbatim. */
      authorityState?: AuthorityState;
      authorityAnswer?: AuthorityAnswer;
      hold?: "configuration" | "buyer";
      durationMs?: number;
      nextAttemptAt?: string;
      final: boolean;
    },
    tx: Executor,
  ): Promise<void>;
};

/**
 * What the later messages to the authority about an invoice (payment updates, VAT reports) need of
 * it, and how they report what became of them: the invoice lifecycle's side, as for deliveries.
 */
export type ForwardingPort = {
  /** Whether the authority has the invoice (its delivery is done): what is forwarded waits for it. */
  isDelivered(irn: string): Promise<boolean>;
  /** A later message done or failed for good. In the outbox's transaction. */
  forwarded(
    irn: string,
    report: {
      at: string;
      actor: string;
      kind: "payment_update" | "vat_report";
      delivered: boolean;
      attempts: number;
      error?: string;
      authorityAnswer?: AuthorityAnswer;
    },
    tx: Executor,
  ): Promise<void>;
};

/** How the acknowledgement of a received invoice reports what became of it: the inbox's side. */
export type ReceiptPort = {
  /** Told, or failed for good. In the outbox's transaction. */
  told(
    receivedId: number,
    report: {
      plan: { at: string; state: string; attempts: number; error: string | null };
      actor: string;
      answer?: Record<string, unknown>;
    },
    tx: Executor,
  ): Promise<void>;
};
