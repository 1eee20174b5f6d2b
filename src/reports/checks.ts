import { currencyDigits, disagreement, round } from "../documents/money.ts";
import type { Violation } from "../errors.ts";
import { CURRENCIES } from "../reference/currencies.ts";
import { TAX_CATEGORIES } from "../reference/data.ts";
import type { FiscalizationReport } from "./report-schema.ts";

const currencies = new Set(CURRENCIES.map((c) => c.code));
const taxCategories = new Set(TAX_CATEGORIES.map((t) => t.code));

/** The registered invoice a report is about, as far as the checks need it. */
export type ReportedInvoice = {
  supplier_tin: string | null;
  customer_tin: string | null;
  currency: string | undefined;
};

/** What the report names that is unknown: its currency, its tax category, or the invoice it reports. */
function lookupErrors(report: FiscalizationReport, registered: boolean): Violation[] {
  const errors: Violation[] = [];
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
  if (!registered) {
    errors.push({
      path: "irn",
      rule: "irn_registered",
      message: `IRN '${report.irn}' is not registered for this business`,
    });
  }
  return errors;
}

/** The VAT at the report's rate, and the total of the base and the taxes. */
function arithmeticErrors(report: FiscalizationReport): Violation[] {
  const places = currencyDigits(report.currency);
  const [base, rate, vat, other, total] = [
    report.base_amount,
    report.vat_rate,
    report.vat_calculated,
    report.other_taxes,
    report.total_amount,
  ].map(Number) as [number, number, number, number, number];
  // As for invoices: within half a minor unit of the formula over the values as sent, or over them
  // rounded first.
  const r = (value: number) => round(value, places);
  const findings = [
    disagreement({
      path: "vat_calculated",
      rule: "report_vat",
      formula: "base_amount × vat_rate / 100",
      expected: (base * rate) / 100,
      alternatives: [(r(base) * rate) / 100],
      actual: vat,
      places,
      related: ["base_amount", "vat_rate"],
    }),
    disagreement({
      path: "total_amount",
      rule: "report_total",
      formula: "base_amount + vat_calculated + other_taxes",
      expected: base + vat + other,
      alternatives: [r(base) + r(vat) + r(other)],
      actual: total,
      places,
      related: ["base_amount", "vat_calculated", "other_taxes"],
    }),
  ];
  return findings.filter((finding) => finding !== undefined);
}

/** Where the report and the invoice it reports disagree. */
function invoiceMismatches(report: FiscalizationReport, invoice: ReportedInvoice): Violation[] {
  const warnings: Violation[] = [];
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
  return warnings;
}

/**
 * Checks of a fiscalization report whose fields already have the right shapes (numeric text, real
 * dates, TINs): codes, arithmetic, and consistency with the invoice it reports.
 */
export function checkReport(report: FiscalizationReport, invoice: ReportedInvoice | undefined) {
  const errors = [...lookupErrors(report, invoice !== undefined), ...arithmeticErrors(report)];
  const warnings = invoice ? invoiceMismatches(report, invoice) : [];
  return { errors, warnings };
}
