import { actorOf, type Principal } from "../../businesses/business-service.ts";
import { type Db, type Executor, writeTransaction } from "../../db/database.ts";
import type { InvoiceTable } from "../../db/schema.ts";
import { currencyOf } from "../../documents/stored.ts";
import type { InvoiceRepository } from "../invoice-repository.ts";
import type { InvoiceLifecycle } from "../lifecycle.ts";
import { invoiceLoader } from "../records/invoice-queries.ts";
import {
  checkPartialBound,
  decidePayment,
  type PaymentChange,
  type PaymentDecision,
  replayKey,
} from "./payment-decision.ts";

/** `update/{IRN}`: the payment moves of `payment-decision.ts`, each recorded by the lifecycle. */
export function paymentService(deps: {
  db: Db;
  invoices: Pick<InvoiceRepository, "find" | "findByIrn" | "paymentRecorded" | "paymentCount" | "addPayment">;
  lifecycle: Pick<InvoiceLifecycle, "paymentMoved">;
  /** The most PARTIAL payments one invoice takes (each is a message to the authority). */
  maxPartials: number;
}) {
  const { db, invoices, lifecycle, maxPartials } = deps;
  const { load } = invoiceLoader(invoices);

  /**
   * The payment a move records, numbered after the invoice's last one. The move's compare-and-set
   * has locked the invoice's row (PostgreSQL) or holds the write lock (SQLite), so the count is
   * exact here: the bound is held even against updates the compare-and-set lets through together.
   */
  async function recordPayment(
    invoice: InvoiceTable & { currency: string },
    change: PaymentChange,
    decision: Extract<PaymentDecision, { kind: "move" }>,
    at: string,
    tx: Executor,
  ): Promise<void> {
    // REJECTED records no payment.
    if (typeof decision.detail.amount !== "number") return;
    const count = await invoices.paymentCount(invoice.irn, tx);
    if (change.payment_status === "PARTIAL") checkPartialBound(invoice, count, maxPartials);
    await invoices.addPayment(
      {
        irn: invoice.irn,
        seq: count + 1,
        reference: change.reference ?? null,
        amount_minor: decision.paid_minor - invoice.paid_minor,
        at,
      },
      tx,
    );
  }

  return {
    /**
     * Decides the change against the invoice as it stands and records it by compare-and-set on the
     * status and the amount paid; when another update got in between, decides again against what
     * that one left. Answers whether anything changed, and whether the request was a retry of a
     * payment already recorded. A retry is found, and the payments counted, by index: the update
     * reads one row of the invoice's payments whatever their number.
     */
    async update(
      principal: Principal,
      irn: string,
      change: PaymentChange,
    ): Promise<{ changed: boolean; replay: boolean }> {
      for (;;) {
        const row = await load(principal, irn);
        const invoice = { ...row, currency: currencyOf(row) ?? "" };
        const key = replayKey(change, row.currency_digits);
        const recorded = {
          replay: key !== undefined && (await invoices.paymentRecorded(irn, key.reference, key.amount_minor)),
          count: change.payment_status === "PARTIAL" ? await invoices.paymentCount(irn) : 0,
        };
        const decision = decidePayment(invoice, change, recorded, maxPartials, Date.now());
        if (decision.kind === "unchanged") return { changed: false, replay: decision.replay };
        const at = new Date().toISOString();
        const won = await writeTransaction(db, async (tx) => {
          if (!(await lifecycle.paymentMoved(row, decision, actorOf(principal), at, tx))) return false;
          await recordPayment(invoice, change, decision, at, tx);
          return true;
        });
        if (won) return { changed: true, replay: false };
      }
    },
  };
}

export type PaymentService = ReturnType<typeof paymentService>;
