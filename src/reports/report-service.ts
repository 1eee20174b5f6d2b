import { actorOf, type Principal } from "../businesses/business-service.ts";
import { type Db, writeTransaction } from "../db/database.ts";
import { currencyOf } from "../documents/stored.ts";
import { DomainError, summarize } from "../errors.ts";
import type { InvoiceRepository } from "../invoices/invoice-repository.ts";
import type { AuthorityForwarder } from "../transmission/forward.ts";
import { checkReport } from "./checks.ts";
import type { ReportRepository } from "./report-repository.ts";
import type { FiscalizationReport } from "./report-schema.ts";

/** The 400 for a report beyond the most one invoice takes: nothing of it is stored or sent. */
function tooManyReports(irn: string, count: number, limit: number): DomainError {
  const details = `IRN '${irn}' has ${count} VAT reports, the most one invoice may have: this report is not stored nor sent to the tax authority`;
  return new DomainError("report_refused", {
    message: "Failed to submit report",
    details,
    violations: [
      {
        path: "irn",
        rule: "reports_per_invoice",
        message: `at most ${limit} VAT reports per invoice`,
        expected: `at most ${limit} reports`,
        actual: count + 1,
      },
    ],
  });
}

export function reportService(deps: {
  db: Db;
  reports: Pick<ReportRepository, "insert" | "countFor">;
  invoices: Pick<InvoiceRepository, "find" | "addEvent" | "lock">;
  /** Tells the authority of the report, when it takes them (MBS's VAT post-payment report). */
  forwarder: Pick<AuthorityForwarder, "forward">;
  /** The most VAT reports one invoice takes (each is a message to the authority). */
  maxReports: number;
}) {
  const { db, reports, invoices, forwarder, maxReports } = deps;

  /**
   * Stores the report under the next number of its invoice, notes it in the history and queues it
   * for the authority, in one transaction. Reports of one invoice take turns: the invoice's row is
   * locked (PostgreSQL) or the write lock held (SQLite) until the commit, so the count read here is
   * every report before this one, and the unique (irn, number) index has the last word.
   */
  const store = (principal: Principal, report: FiscalizationReport, at: string) =>
    writeTransaction(db, async (tx) => {
      await invoices.lock(report.irn, tx);
      const count = await reports.countFor(report.irn, tx);
      if (count >= maxReports) throw tooManyReports(report.irn, count, maxReports);
      const number = count + 1;
      await reports.insert(
        {
          irn: report.irn,
          business_id: principal.businessId,
          report: JSON.stringify(report),
          created_at: at,
          number,
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
      const vendorTransactionId = number === 1 ? report.irn : `${report.irn}-${number}`;
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

  return {
    /** Stores the report against a registered IRN of the caller's business, and notes it in the history. */
    async submit(principal: Principal, report: FiscalizationReport) {
      const invoice = await invoices.find(report.irn, principal.businessId);
      const currency = invoice ? currencyOf(invoice) : undefined;
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
      await store(principal, report, at);
      return { warnings };
    },
  };
}

export type ReportService = ReturnType<typeof reportService>;
