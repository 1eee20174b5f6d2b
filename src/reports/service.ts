import { actorOf, type Principal } from "../businesses/service.ts";
import { type Db, writeTransaction } from "../db/database.ts";
import { DomainError, summarize } from "../errors.ts";
import type { InvoiceRepository } from "../invoices/repository.ts";
import type { AuthorityForwarder } from "../transmission/forward.ts";
import { checkReport } from "./checks.ts";
import type { ReportRepository } from "./repository.ts";
import type { FiscalizationReport } from "./schema.ts";

export function reportService(deps: {
  db: Db;
  reports: Pick<ReportRepository, "insert" | "forInvoice">;
  invoices: Pick<InvoiceRepository, "find" | "addEvent">;
  /** Tells the authority of the report, when it takes them (MBS's VAT post-payment report). */
  forwarder: Pick<AuthorityForwarder, "forward">;
}) {
  const { db, reports, invoices, forwarder } = deps;
  return {
    /** Stores the report against a registered IRN of the caller's business, and notes it in the history. */
    async submit(principal: Principal, report: FiscalizationReport) {
      const invoice = await invoices.find(report.irn, principal.businessId);
      const currency = invoice
        ? (JSON.parse(invoice.document) as { document_currency_code?: string }).document_currency_code
        : undefined;
      const { errors, warnings } = checkReport(
        report,
        invoice && { supplier_tin: invoice.supplier_tin, customer_tin: invoice.customer_tin, currency },
      );
      if (errors.length > 0 || !invoice) {
        throw new DomainError("report_refused", {
          message: "Failed to submit report",
          details: summarize(errors),
          violations: errors,
        });
      }
      const at = new Date().toISOString();
      await writeTransaction(db, async (tx) => {
        await reports.insert(
          {
            irn: report.irn,
            business_id: principal.businessId,
            report: JSON.stringify(report),
            created_at: at,
          },
          tx,
        );
        await invoices.addEvent(
          report.irn,
          {
            at,
            type: "fiscalization_reported",
            actor: actorOf(principal),
            detail: { total_amount: report.total_amount },
          },
          tx,
        );
        // The authority knows a report by the vendor's transaction id: the IRN for an invoice's
        // first report, and numbered after it for the next ones, so a second report is not taken
        // for a repeat of the first.
        const count = (await reports.forInvoice(report.irn, tx)).length;
        const vendorTransactionId = count <= 1 ? report.irn : `${report.irn}-${count}`;
        await forwarder.forward(
          {
            kind: "vat_report",
            irn: report.irn,
            report: { ...report, vendor_transaction_id: vendorTransactionId },
          },
          principal.businessId,
          at,
          tx,
        );
      });
      return { warnings };
    },
  };
}

export type ReportService = ReturnType<typeof reportService>;
