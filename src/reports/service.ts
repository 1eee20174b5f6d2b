import type { Principal } from "../businesses/service.ts";
import type { Db } from "../db/database.ts";
import { DomainError, summarize, type Violation } from "../http/errors.ts";
import type { InvoiceRepository } from "../invoices/repository.ts";
import { CURRENCIES } from "../reference/currencies.ts";
import { TAX_CATEGORIES } from "../reference/data.ts";
import type { ReportRepository } from "./repository.ts";
import type { FiscalizationReport } from "./schema.ts";

const currencies = new Set(CURRENCIES.map((c) => c.code));
const taxCategories = new Set(TAX_CATEGORIES.map((t) => t.code));

export function reportService(deps: {
  db: Db;
  reports: ReportRepository;
  invoices: Pick<InvoiceRepository, "find" | "addEvent">;
}) {
  const { db, reports, invoices } = deps;
  return {
    /** Stores the report against a registered IRN of the caller's business, and notes it in the history. */
    async submit(principal: Principal, report: FiscalizationReport) {
      const violations: Violation[] = [];
      if (!currencies.has(report.currency)) {
        violations.push({
          path: "currency",
          rule: "code_list.currency",
          message: `'${report.currency}' is not a currency code of resources/currencies`,
        });
      }
      if (!taxCategories.has(report.vat_status)) {
        violations.push({
          path: "vat_status",
          rule: "code_list.tax_category",
          message: `'${report.vat_status}' is not a code of resources/tax-categories`,
        });
      }
      const invoice = await invoices.find(report.irn, principal.businessId);
      if (!invoice) {
        violations.push({
          path: "irn",
          rule: "irn_registered",
          message: `IRN '${report.irn}' is not registered for this business`,
        });
      }
      if (violations.length > 0) {
        throw new DomainError("bad_request", {
          message: "Failed to submit report",
          details: summarize(violations),
          violations,
        });
      }
      const at = new Date().toISOString();
      await db.transaction().execute(async (tx) => {
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
          { at, type: "fiscalization_reported", detail: { total_amount: report.total_amount } },
          tx,
        );
      });
    },
  };
}

export type ReportService = ReturnType<typeof reportService>;
