import type { Sealer } from "../crypto/sealer.ts";
import { executeTogether, type Statement } from "../db/batch-statements.ts";
import type { Executor } from "../db/database.ts";
import type { InvoiceTable, StoredInvoiceStatus, StoredPaymentStatus } from "../db/schema.ts";
import { openDocument } from "../documents/stored.ts";
import { PAYMENT_STATUSES, type PaymentStatus } from "../reference/data.ts";
import type { AuthorityForwarder } from "../transmission/forward.ts";
import type { DeliveryPort, ForwardingPort } from "../transmission/port.ts";
import type { WebhookNotifier } from "../webhooks/notifier.ts";
import type { InvoiceEvent, InvoiceRepository } from "./invoice-repository.ts";
import type { PaymentDecision } from "./payments/payment-decision.ts";
import { type Effects, paymentEffects, queuedEffects, signedEffects } from "./transitions.ts";

/*
 * The invoice lifecycle: its states, the moves between them, and what each move writes (the state,
 * and what transitions.ts decides goes with it: history entries, webhook notices, messages to the
 * authority, deliveries), in the caller's transaction. Every write of an invoice's state is made
 * here, from the state it is signed into on (scripts/check-state-writes.mjs holds it so).
 *
 *   SIGNED ──transmit──▶ TRANSMITTING ──delivered──▶ TRANSMITTED (final)
 *                            │    ▲
 *                 out of attempts  └──transmit again── TRANSMISSION_FAILED
 *                            ▼                                ▲
 *                            └────────────────────────────────┘
 * Payment statuses move as payments/payment-decision.ts decides (PENDING → PARTIAL → PAID,
 * PENDING → REJECTED, …).
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

export { eventData } from "./transitions.ts";

/**
 * The outbox as the lifecycle queues deliveries in it (src/outbox): in the move's transaction, one
 * row each, ids in order; and the delivery still open for an invoice, if any.
 */
export type DeliveryQueue = {
  enqueue(
    kind: "delivery",
    items: ReadonlyArray<{ irn: string; businessId: string }>,
    at: string,
    tx: Executor,
  ): Promise<number[]>;
  openDelivery(irn: string, tx: Executor): Promise<number | undefined>;
};

/**
 * Where an invoice one business of this service delivered goes when its buyer is another business of
 * this service and the authority is this service itself (builtin): that business's inbox, in the
 * delivery's transaction. `buyer`: whether a TIN is one of this service's businesses', and which.
 * `signer`: the id of the business that signed it, its supplier whatever the document names.
 */
export type LocalReceiver = {
  buyer(customerTin: string, tx: Executor): Promise<string | undefined>;
  receiveIn(
    items: ReadonlyArray<{ document: Record<string, unknown>; signer: string }>,
    source: "builtin",
    actor: string,
    tx: Executor,
  ): Promise<unknown>;
};

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a factory: each transition is a closure of its own
export function invoiceLifecycle(deps: {
  invoices: Pick<
    InvoiceRepository,
    | "findByIrn"
    | "inserts"
    | "eventInserts"
    | "setStatus"
    | "changeStatusIf"
    | "changePaymentIf"
    | "addEvent"
    | "addEvents"
    | "events"
  >;
  notifier: Pick<WebhookNotifier, "notify" | "notifyMany">;
  /** Where the deliveries of invoices signed with their transmission, or queued again, go. */
  deliveries: DeliveryQueue;
  sealer: Pick<Sealer, "open">;
  /** Tells the authority of payment changes, when it keeps them (MBS). */
  forwarder: Pick<AuthorityForwarder, "forward">;
  /** With the builtin authority: a delivered invoice whose buyer is a business of this service reaches its inbox. */
  localReceiver?: LocalReceiver;
}) {
  const { invoices, notifier, sealer, forwarder, deliveries, localReceiver } = deps;

  /** The delivered invoice, to its buyer's inbox when the buyer is another business of this service. */
  async function handOver(
    document: Record<string, unknown>,
    sellerId: string,
    actor: string,
    tx: Executor,
  ): Promise<void> {
    if (!localReceiver) return;
    const customer = document.accounting_customer_party;
    const tin =
      typeof customer === "object" && customer !== null ? (customer as { tin?: unknown }).tin : undefined;
    if (typeof tin !== "string") return;
    const buyer = await localReceiver.buyer(tin, tx);
    // An invoice a business addresses to itself has no one else to reach.
    if (buyer === undefined || buyer === sellerId) return;
    // The signer goes with it: the document's supplier party is only what the signer wrote.
    await localReceiver.receiveIn([{ document, signer: sellerId }], "builtin", actor, tx);
  }

  /**
   * Writes what a move leaves besides its row (transitions.ts), in its transaction; answers the
   * queued deliveries' job ids by IRN. `subscribed`: the businesses with a webhook, when the caller
   * read them already (before the chains are locked, see registration/register.ts).
   */
  async function write(
    effects: Effects,
    tx: Executor,
    subscribed?: ReadonlySet<string>,
    historyWritten = false,
  ) {
    if (!historyWritten && effects.history.length > 0) await invoices.addEvents(effects.history, tx);
    for (const { message, businessId, at } of effects.forwards)
      await forwarder.forward(message, businessId, at, tx);
    if (effects.notices.length > 0) await notifier.notifyMany(effects.notices, tx, subscribed);
    const jobs = new Map<string, number>();
    if (effects.deliveries.length === 0) return jobs;
    const at = effects.history[0]?.event.at ?? new Date().toISOString();
    const ids = await deliveries.enqueue("delivery", effects.deliveries, at, tx);
    for (const [i, { irn }] of effects.deliveries.entries()) jobs.set(irn, ids[i] as number);
    return jobs;
  }

  /** Whether the invoice's last attempt was held the same way, in the same state at the authority. */
  async function sameHold(irn: string, detail: Record<string, unknown>, tx: Executor): Promise<boolean> {
    const last = (await invoices.events(irn, tx, "transmission_attempt")).at(-1)?.detail;
    return last?.hold === detail.hold && last?.authority_state === detail.authority_state;
  }

  /** What the outbox reports of a later message to the authority, written in the invoice's history. */
  const forwarding: ForwardingPort = {
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
  };

  /** What the outbox reports of a delivery, written as the invoice's state, history and notices. */
  const delivery: DeliveryPort = {
    async target(irn) {
      const invoice = await invoices.findByIrn(irn);
      if (!invoice) return { skip: "invoice not found" };
      if (invoice.status === "TRANSMITTED") return { skip: null };
      return { businessId: invoice.business_id, document: openDocument(invoice, sealer) };
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
      await handOver(report.document, report.businessId, actor, tx);
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
    forwarding,

    /**
     * Invoices signed in this transaction, stored in the state they are signed into (initialState)
     * with their first history entries, notices and, for sign-transmit, their deliveries: their
     * job ids by IRN. `subscribed` as for `write`.
     */
    async signed(
      signed: ReadonlyArray<{ row: InvoiceTable; actor: string }>,
      tx: Executor,
      subscribed?: ReadonlySet<string>,
      alongside: readonly Statement[] = [],
    ): Promise<Map<string, number>> {
      const effects = signedEffects(signed);
      // The invoices, their first history entries and what the caller adds (the chains' heads) go
      // together: on PostgreSQL one round trip, where a sign batch makes them under its chain lock.
      await executeTogether(tx, [
        ...invoices.inserts(
          signed.map(({ row }) => row),
          tx,
        ),
        ...invoices.eventInserts(effects.history, tx),
        ...alongside,
      ]);
      return write(effects, tx, subscribed, true);
    },

    /**
     * Queues the invoice for the authority: TRANSMITTING, by compare-and-set from one of `from`, with
     * its history entry and its delivery: the delivery's job id. Undefined when the invoice was not
     * in one of those states (another request moved it first).
     */
    async queued(
      row: Pick<InvoiceTable, "irn" | "business_id">,
      from: readonly InvoiceStatus[],
      actor: string,
      at: string,
      tx: Executor,
    ): Promise<number | undefined> {
      const { irn } = row;
      if (!(await invoices.changeStatusIf(irn, from, { status: "TRANSMITTING", updated_at: at }, tx)))
        return undefined;
      const open = await deliveries.openDelivery(irn, tx);
      const jobs = await write(queuedEffects(row, actor, at, open !== undefined), tx);
      return open ?? jobs.get(irn);
    },

    /**
     * A payment move decided by payment-decision.ts, recorded by compare-and-set on the status and the amount
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
      await write(paymentEffects(row, decision, actor, at), tx);
      return true;
    },
  };
}

export type InvoiceLifecycle = ReturnType<typeof invoiceLifecycle>;
