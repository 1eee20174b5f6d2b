import { actorOf, type Principal } from "../businesses/service.ts";
import { type Db, writeTransaction } from "../db/database.ts";
import type { TransmissionService } from "../transmission/service.ts";
import { decidePayment, type PaymentChange, recordedPayments } from "./payments.ts";
import type { InvoiceRepository } from "./repository.ts";
import { eventData, notFound } from "./service.ts";

/** `update/{IRN}`: the payment moves of `payments.ts`, each stored with its history entry and notice. */
export function paymentService(deps: {
  db: Db;
  invoices: Pick<InvoiceRepository, "find" | "events" | "changePaymentIf" | "addEvent">;
  transmission: Pick<TransmissionService, "notify">;
}) {
  const { db, invoices, transmission } = deps;

  return {
    /**
     * Decides the change against the invoice as it stands and records it by compare-and-set on the
     * status and the amount paid; when another update got in between, decides again against what
     * that one left. Answers whether anything changed, and whether the request was a retry of a
     * payment already recorded.
     */
    async update(
      principal: Principal,
      irn: string,
      change: PaymentChange,
    ): Promise<{ changed: boolean; replay: boolean }> {
      for (;;) {
        const row = await invoices.find(irn, principal.businessId);
        if (!row) throw notFound(irn);
        const { document_currency_code: currency } = JSON.parse(row.document) as {
          document_currency_code?: unknown;
        };
        const history = await invoices.events(irn, db, "payment_updated");
        const decision = decidePayment(
          { ...row, currency: typeof currency === "string" ? currency : "" },
          change,
          recordedPayments(
            history.map((entry) => entry.detail),
            row.currency_digits,
          ),
          Date.now(),
        );
        if (decision.kind === "unchanged") return { changed: false, replay: decision.replay };
        const at = new Date().toISOString();
        const won = await writeTransaction(db, async (tx) => {
          const moved = await invoices.changePaymentIf(
            irn,
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
          await invoices.addEvent(
            irn,
            { at, type: "payment_updated", actor: actorOf(principal), detail: decision.detail },
            tx,
          );
          await transmission.notify(
            row.business_id,
            "invoice.payment_updated",
            {
              ...eventData({ ...row, payment_status: decision.to, paid_minor: decision.paid_minor }),
              payment_reference: decision.payment_reference,
              // This update's payment (none for REJECTED) and the date it was made.
              amount: decision.detail.amount ?? null,
              payment_update_date: decision.detail.payment_update_date,
            },
            at,
            tx,
          );
          return true;
        });
        if (won) return { changed: true, replay: false };
      }
    },
  };
}

export type PaymentService = ReturnType<typeof paymentService>;
