import type { Violation } from "../errors.ts";
import { currencyDigits, disagreement, round } from "../invoices/rules/money.ts";
import { CURRENCIES } from "../reference/currencies.ts";
import { TAX_CATEGORIES } from "../reference/data.ts";
import type { FiscalizationReport } from "./schema.ts";

const currencies = new Set(CURRENCIES.map((c) => c.code));
const taxCategories = new Set(TAX_CATEGORIES.map((t) => t.code));

/** The registered invoice a report is about, as far as the checks need it. */
export type ReportedInvoice = {
  supplier_tin: string | null;
  customer_tin: string | null;
  currency: string | undefined;
};

/**
 * Checks of a fiscalization report whose fields already have the right shapes (numeric text, real
 * dates, TINs): codes, arithmetic, and consistency with the invoice it reports.
 */
export function checkReport(report: FiscalizationReport, invoice: ReportedInvoice | undefined) {
  const errors: Violation[] = [];
  const warnings: Violation[] = [];
  if (!currencies.has(report.currency)) {
    errors.push({
      path: "currency",
      rule: "code_list.currency",
      message: `'${report.currency}' is not a currency code of resources/currencies`,
    });
  }
  if (!taxCategories.has(report.vat_status)) {
    errors.push({
      path: "vat_status",
      rule: "code_list.tax_category",
      message: `'${report.vat_status}' is not a code of resources/tax-categories`,
    });
  }
  if (!invoice) {
    errors.push({
      path: "irn",
      rule: "irn_registered",
      message: `IRN '${report.irn}' is not registered for this business`,
    });
  }

  const places = currencyDigits(report.currency);
  const [base, rate, vat, other, total] = [
    report.base_amount,
    report.vat_rate,
    report.vat_calculated,
    report.other_taxes,
    report.total_amount,
  ].map(Number) as [number, number, number, number, number];
  const compare = (
    path: string,
    rule: string,
    formula: string,
    expected: number,
    actual: number,
    related: string[],
    alternatives: number[],
  ) => {
    const finding = disagreement({ path, rule, formula, expected, alternatives, actual, places, related });
    if (finding) errors.push(finding);
  };
  // As for invoices: within half a minor unit of the formula over the values as sent, or over them
  // rounded first.
  const r = (value: number) => round(value, places);
  compare(
    "vat_calculated",
    "report_vat",
    "base_amount × vat_rate / 100",
    (base * rate) / 100,
    vat,
    ["base_amount", "vat_rate"],
    [(r(base) * rate) / 100],
  );
  compare(
    "total_amount",
    "report_total",
    "base_amount + vat_calculated + other_taxes",
    base + vat + other,
    total,
    ["base_amount", "vat_calculated", "other_taxes"],
    [r(base) + r(vat) + r(other)],
  );

  if (invoice) {
    if (invoice.supplier_tin && report.agent_tin !== invoice.supplier_tin) {
      warnings.push({
        path: "agent_tin",
        rule: "report_matches_invoice",
        message: `differs from the invoice's supplier TIN ${invoice.supplier_tin}`,
      });
    }
    if (invoice.customer_tin && report.beneficiary_tin !== invoice.customer_tin) {
      warnings.push({
        path: "beneficiary_tin",
        rule: "report_matches_invoice",
        message: `differs from the invoice's customer TIN ${invoice.customer_tin}`,
      });
    }
    if (invoice.currency && report.currency !== invoice.currency) {
      warnings.push({
        path: "currency",
        rule: "report_matches_invoice",
        message: `differs from the invoice's currency ${invoice.currency}`,
      });
    }
  }
  return { errors, warnings };
}
