import { actorOf, type Principal } from "../businesses/service.ts";
import { type Db, writeTransaction } from "../db/database.ts";
import type { InvoiceLifecycle } from "./lifecycle.ts";
import { decidePayment, type PaymentChange, recordedPayments } from "./payments.ts";
import { invoiceLoader } from "./queries.ts";
import type { InvoiceRepository } from "./repository.ts";

/** `update/{IRN}`: the payment moves of `payments.ts`, each recorded by the lifecycle. */
export function paymentService(deps: {
  db: Db;
  invoices: Pick<InvoiceRepository, "find" | "findByIrn" | "events">;
  lifecycle: Pick<InvoiceLifecycle, "paymentMoved">;
}) {
  const { db, invoices, lifecycle } = deps;
  const { load } = invoiceLoader(invoices);

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
        const row = await load(principal, irn);
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
        const won = await writeTransaction(db, (tx) =>
          lifecycle.paymentMoved(row, decision, actorOf(principal), at, tx),
        );
        if (won) return { changed: true, replay: false };
      }
    },
  };
}

export type PaymentService = ReturnType<typeof paymentService>;
