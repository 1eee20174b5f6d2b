import type { Sealer } from "../crypto/sealer.ts";
import type { Executor } from "../db/database.ts";
import type { InvoiceTable, StoredInvoiceStatus, StoredPaymentStatus } from "../db/schema.ts";
import { PAYMENT_STATUSES, type PaymentStatus } from "../reference/data.ts";
import type { AuthorityForwarder } from "../transmission/forward.ts";
import type { DeliveryPort } from "../transmission/port.ts";
import type { WebhookNotifier } from "../webhooks/notifier.ts";
import type { InvoiceEvent, InvoiceRepository } from "./invoice-repository.ts";
import { amountsOf, type Balance, type PaymentDecision } from "./payments/payment-decision.ts";
import { openDocument } from "./stored-document.ts";

/*
 * The invoice lifecycle: its states, the moves between them, and what each move writes (the state,
 * the history entry, the webhook notice), in the caller's transaction. Signing writes the first
 * state (see register); every later change of an invoice's state goes through here.
 *
 *   SIGNED ──transmit──▶ TRANSMITTING ──delivered──▶ TRANSMITTED (final)
 *                            │    ▲
 *                 out of attempts  └──transmit again── TRANSMISSION_FAILED
 *                            ▼                                ▲
 *                            └────────────────────────────────┘
 * Payment statuses move as payments.ts decides (PENDING → PARTIAL → PAID, PENDING → REJECTED, …).
 */

export const INVOICE_STATUSES = ["SIGNED", "TRANSMITTING", "TRANSMITTED", "TRANSMISSION_FAILED"] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];
export type { PaymentStatus };

// The rows' column types (db/schema.ts) and these lists must name the same values: each line fails
// to compile when one side gains or loses a status.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const statusesMatch: Same<InvoiceStatus, StoredInvoiceStatus> = true;
const paymentStatusesMatch: Same<PaymentStatus, StoredPaymentStatus> = true;
void statusesMatch;
void paymentStatusesMatch;

const isPaymentStatus = (value: string): value is PaymentStatus =>
  (PAYMENT_STATUSES as readonly string[]).includes(value);

/**
 * The state an invoice is signed into: queued at once when it is signed with its transmission, and
 * the payment status its document declares (validation allowed only the code list's values).
 */
export function initialState(
  transmitting: boolean,
  declared: string | undefined,
): Pick<InvoiceTable, "status" | "payment_status"> {
  if (declared !== undefined && !isPaymentStatus(declared)) {
    throw new Error(`payment_status '${declared}' passed validation but is not a payment status`);
  }
  return { status: transmitting ? "TRANSMITTING" : "SIGNED", payment_status: declared ?? "PENDING" };
}

/** The state each history entry leaves an invoice in (entries not named here leave it as it was). */
export const STATE_AFTER: Readonly<Record<string, InvoiceStatus>> = {
  signed: "SIGNED",
  transmission_queued: "TRANSMITTING",
  transmitted: "TRANSMITTED",
  transmission_failed: "TRANSMISSION_FAILED",
};

/** What webhook events say about an invoice: its state, never its content. */
export function eventData(
  row: Pick<InvoiceTable, "irn" | "business_id" | "status" | "payment_status"> & Balance,
) {
  return {
    irn: row.irn,
    business_id: row.business_id,
    status: row.status,
    payment_status: row.payment_status,
    ...amountsOf(row),
  };
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a factory: each transition is a closure of its own
export function invoiceLifecycle(deps: {
  invoices: Pick<
    InvoiceRepository,
    "findByIrn" | "setStatus" | "changeStatusIf" | "changePaymentIf" | "addEvent" | "addEvents" | "events"
  >;
  notifier: Pick<WebhookNotifier, "notify">;
  sealer: Pick<Sealer, "open">;
  /** Tells the authority of payment changes, when it keeps them (MBS). */
  forwarder: Pick<AuthorityForwarder, "forward">;
}) {
  const { invoices, notifier, sealer, forwarder } = deps;

  /** Whether the invoice's last attempt was held the same way, in the same state at the authority. */
  async function sameHold(irn: string, detail: Record<string, unknown>, tx: Executor): Promise<boolean> {
    const last = (await invoices.events(irn, tx, "transmission_attempt")).at(-1)?.detail;
    return last?.hold === detail.hold && last?.authority_state === detail.authority_state;
  }

  /** What the outbox reports of a delivery, written as the invoice's state, history and notices. */
  const delivery: DeliveryPort = {
    async target(irn) {
      const invoice = await invoices.findByIrn(irn);
      if (!invoice) return { skip: "invoice not found" };
      if (invoice.status === "TRANSMITTED") return { skip: null };
      return { businessId: invoice.business_id, document: openDocument(invoice, sealer) };
    },

    async isDelivered(irn) {
      return (await invoices.findByIrn(irn))?.status === "TRANSMITTED";
    },

    async forwarded(irn, report, tx) {
      const { at, actor, kind, delivered, attempts } = report;
      await invoices.addEvent(
        irn,
        {
          at,
          // authority_payment_update, authority_vat_report; _failed when it could not be told.
          type: `authority_${kind}${delivered ? "" : "_failed"}`,
          actor,
          detail: {
            attempts,
            ...(report.error === undefined ? {} : { error: report.error }),
            ...(report.authorityAnswer ? { authority_error: report.authorityAnswer } : {}),
          },
        },
        tx,
      );
    },

    async delivered(irn, report, tx) {
      const { at, actor } = report;
      await invoices.setStatus(
        irn,
        { status: "TRANSMITTED", transmitted_at: at, authority_reference: report.reference, updated_at: at },
        tx,
      );
      // The attempt and the transmission, in one statement.
      await invoices.addEvents(
        [
          {
            irn,
            event: {
              at,
              type: "transmission_attempt",
              actor,
              detail: { attempt: report.attempt, outcome: "delivered", duration_ms: report.durationMs },
            },
          },
          {
            irn,
            event: {
              at,
              type: "transmitted",
              actor,
              detail: { authority: report.authority, reference: report.reference },
            },
          },
        ],
        tx,
      );
      await notifier.notify(
        {
          businessId: report.businessId,
          type: "invoice.transmitted",
          data: {
            irn,
            business_id: report.businessId,
            status: "TRANSMITTED",
            transmitted_at: at,
            authority_reference: report.reference,
          },
          at,
        },
        tx,
      );
    },

    async attemptFailed(irn, report, tx) {
      const { at, actor, attempt, error } = report;
      const tried: InvoiceEvent = {
        at,
        type: "transmission_attempt",
        actor,
        detail: {
          attempt,
          outcome: report.outcome,
          error,
          ...(report.durationMs === undefined ? {} : { duration_ms: report.durationMs }),
          ...(report.nextAttemptAt ? { next_attempt_at: report.nextAttemptAt } : {}),
          ...(report.hold ? { hold: report.hold } : {}),
          ...(report.authorityState ? { authority_state: report.authorityState } : {}),
          ...(report.authorityAnswer ? { authority_error: report.authorityAnswer } : {}),
        },
      };
      if (!report.final) {
        // A hold repeats every few minutes for as long as it lasts (a buyer may take days): the
        // history keeps the first attempt of a run of the same hold, and the lookup still reads it.
        if (report.hold && (await sameHold(irn, tried.detail, tx))) return;
        await invoices.addEvent(irn, tried, tx);
        return;
      }
      await invoices.setStatus(irn, { status: "TRANSMISSION_FAILED", updated_at: at }, tx);
      // The attempt and the failure, in one statement.
      await invoices.addEvents(
        [
          { irn, event: tried },
          {
            irn,
            event: {
              at,
              type: "transmission_failed",
              actor,
              detail: {
                authority: report.authority,
                attempts: attempt,
                error,
                ...(report.authorityAnswer ? { authority_error: report.authorityAnswer } : {}),
              },
            },
          },
        ],
        tx,
      );
      await notifier.notify(
        {
          businessId: report.businessId,
          type: "invoice.transmission_failed",
          data: {
            irn,
            business_id: report.businessId,
            status: "TRANSMISSION_FAILED",
            attempts: attempt,
            error,
            // The authority's own words about the refusal, verbatim, as in the lookup.
            ...(report.authorityAnswer ? { authority_error: report.authorityAnswer } : {}),
          },
          at,
        },
        tx,
      );
    },
  };

  return {
    delivery,

    /**
     * Queues the invoice for the authority: TRANSMITTING, by compare-and-set from one of `from`, with
     * its history entry. False when the invoice was not in one of those states.
     */
    async queued(
      irn: string,
      from: readonly InvoiceStatus[],
      actor: string,
      at: string,
      tx: Executor,
    ): Promise<boolean> {
      if (!(await invoices.changeStatusIf(irn, from, { status: "TRANSMITTING", updated_at: at }, tx)))
        return false;
      await invoices.addEvent(irn, { at, type: "transmission_queued", actor, detail: {} }, tx);
      return true;
    },

    /**
     * A payment move decided by payments.ts, recorded by compare-and-set on the status and the amount
     * paid the decision was made against, with its history entry and notice. False when another
     * update got in between.
     */
    async paymentMoved(
      row: InvoiceTable,
      decision: Extract<PaymentDecision, { kind: "move" }>,
      actor: string,
      at: string,
      tx: Executor,
    ): Promise<boolean> {
      const moved = await invoices.changePaymentIf(
        row.irn,
        row,
        {
          payment_status: decision.to,
          payment_reference: decision.payment_reference,
          paid_minor: decision.paid_minor,
          updated_at: at,
        },
        tx,
      );
      if (!moved) return false;
      await invoices.addEvent(row.irn, { at, type: "payment_updated", actor, detail: decision.detail }, tx);
      const { amount, payment_update_date } = decision.detail as {
        amount?: number;
        payment_update_date?: string;
      };
      await forwarder.forward(
        {
          kind: "payment_update",
          irn: row.irn,
          update: {
            payment_status: decision.to,
            reference: decision.payment_reference,
            ...(amount === undefined ? {} : { amount }),
            ...(payment_update_date === undefined ? {} : { payment_update_date }),
          },
        },
        row.business_id,
        at,
        tx,
      );
      await notifier.notify(
        {
          businessId: row.business_id,
          type: "invoice.payment_updated",
          data: {
            ...eventData({ ...row, payment_status: decision.to, paid_minor: decision.paid_minor }),
            payment_reference: decision.payment_reference,
            // This update's payment (none for REJECTED) and the date it was made.
            amount: decision.detail.amount ?? null,
            payment_update_date: decision.detail.payment_update_date,
          },
          at,
        },
        tx,
      );
      return true;
    },
  };
}

export type InvoiceLifecycle = ReturnType<typeof invoiceLifecycle>;
