import type { InvoiceTable } from "../db/schema.ts";
import type { AuthorityForwarder } from "../transmission/forward.ts";
import type { Notice } from "../webhooks/notifier.ts";
import type { InvoiceEvent } from "./invoice-repository.ts";
import { amountsOf, type Balance, type PaymentDecision } from "./payments/payment-decision.ts";

/*
 * What each move of an invoice leaves to be written besides its row, decided here without a
 * database: its history entries, its webhook notices, the messages the authority is told and the
 * deliveries to queue. The lifecycle (lifecycle.ts) makes the move and writes these in the same
 * transaction; callers never write them themselves, so no move can forget one.
 */

type ForwardedMessage = Parameters<AuthorityForwarder["forward"]>[0];

export type Effects = {
  history: Array<{ irn: string; event: InvoiceEvent }>;
  notices: Notice[];
  /** Messages for the authority about invoices it holds (payment updates), queued in the outbox. */
  forwards: Array<{ message: ForwardedMessage; businessId: string; at: string }>;
  /** Invoices whose delivery to the authority is to be queued. */
  deliveries: Array<{ irn: string; businessId: string }>;
};

export const noEffects = (): Effects => ({ history: [], notices: [], forwards: [], deliveries: [] });

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

/**
 * Invoices signed together: each one's `signed` entry, its `invoice.signed` notice and, when it was
 * signed with its transmission (TRANSMITTING), its `transmission_queued` entry and its delivery.
 */
export function signedEffects(signed: ReadonlyArray<{ row: InvoiceTable; actor: string }>): Effects {
  const effects = noEffects();
  for (const { row, actor } of signed) {
    const at = row.signed_at;
    effects.history.push({
      irn: row.irn,
      event: { at, type: "signed", actor, detail: { payment_status: row.payment_status } },
    });
    if (row.status === "TRANSMITTING") {
      effects.history.push({ irn: row.irn, event: { at, type: "transmission_queued", actor, detail: {} } });
      effects.deliveries.push({ irn: row.irn, businessId: row.business_id });
    }
    effects.notices.push({ businessId: row.business_id, type: "invoice.signed", data: eventData(row), at });
  }
  return effects;
}

/** An invoice queued for the authority again (transmit, or the operator's re-queue). */
export function queuedEffects(
  row: Pick<InvoiceTable, "irn" | "business_id">,
  actor: string,
  at: string,
  openDelivery: boolean,
): Effects {
  const effects = noEffects();
  effects.history.push({ irn: row.irn, event: { at, type: "transmission_queued", actor, detail: {} } });
  // A delivery still open (its job outlived a failure being recorded) is reused, not doubled.
  if (!openDelivery) effects.deliveries.push({ irn: row.irn, businessId: row.business_id });
  return effects;
}

/** A payment move decided by payment-decision.ts: its entry, the authority's update and the notice. */
export function paymentEffects(
  row: InvoiceTable,
  decision: Extract<PaymentDecision, { kind: "move" }>,
  actor: string,
  at: string,
): Effects {
  const effects = noEffects();
  effects.history.push({
    irn: row.irn,
    event: { at, type: "payment_updated", actor, detail: decision.detail },
  });
  const { amount, payment_update_date } = decision.detail as {
    amount?: number;
    payment_update_date?: string;
  };
  effects.forwards.push({
    businessId: row.business_id,
    at,
    message: {
      kind: "payment_update",
      irn: row.irn,
      update: {
        payment_status: decision.to,
        reference: decision.payment_reference,
        ...(amount === undefined ? {} : { amount }),
        ...(payment_update_date === undefined ? {} : { payment_update_date }),
      },
    },
  });
  effects.notices.push({
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
  });
  return effects;
}
