import type { Violation } from "../../http/errors.ts";
import { TAX_CATEGORIES } from "../../reference/data.ts";
import { currencyDigits, disagreement, show } from "./money.ts";
import { asArray, entries, isObject, num, type Rule } from "./types.ts";

/** Tax categories whose reference percent is a number (STANDARD_VAT 7.5, ZERO_VAT 0.0, …). */
const FIXED_RATES = new Map(
  TAX_CATEGORIES.filter((t) => t.percent !== "" && Number.isFinite(Number(t.percent))).map((t) => [
    t.code,
    Number(t.percent),
  ]),
);

const sum = (values: (number | undefined)[]) =>
  values.every((v) => v !== undefined) ? values.reduce<number>((a, v) => a + (v as number), 0) : undefined;

/**
 * Lines, allowances, charges, taxes and totals add up. Each finding names the declared value that
 * disagrees, the expected value, and (in `related`) the fields it was computed from.
 */
export const arithmetic: Rule = {
  name: "arithmetic",
  severity: "error",
  check(doc) {
    const out: Violation[] = [];
    const places = currencyDigits(doc.document_currency_code);
    const compare = (
      path: string,
      rule: string,
      formula: string,
      expected: number | undefined,
      declared: unknown,
      related: string[],
    ) => {
      const actual = num(declared);
      if (expected === undefined || actual === undefined) return;
      const finding = disagreement({ path, rule, formula, expected, actual, places, related });
      if (finding) out.push(finding);
    };

    const lines = entries(doc.invoice_line, "invoice_line");
    for (const [line, at] of lines) {
      const price = isObject(line.price) ? line.price : {};
      const quantity = num(line.invoiced_quantity);
      const unit = num(price.price_amount);
      const base = price.base_quantity === undefined ? 1 : num(price.base_quantity);
      const discount = line.discount_amount === undefined ? 0 : num(line.discount_amount);
      const fee = line.fee_amount === undefined ? 0 : num(line.fee_amount);
      const parts = [quantity, unit, base, discount, fee];
      if (parts.some((p) => p === undefined) || base === 0) continue;
      const [q, p, b, d, f] = parts as number[];
      compare(
        `${at}.line_extension_amount`,
        "line_amount",
        `invoiced_quantity × price_amount / base_quantity − discount_amount + fee_amount (${show(q as number)} × ${show(p as number)} / ${show(b as number)} − ${show(d as number)} + ${show(f as number)})`,
        ((q as number) * (p as number)) / (b as number) - (d as number) + (f as number),
        line.line_extension_amount,
        [
          `${at}.invoiced_quantity`,
          `${at}.price.price_amount`,
          `${at}.price.base_quantity`,
          `${at}.discount_amount`,
          `${at}.fee_amount`,
        ],
      );
    }

    const totals = isObject(doc.legal_monetary_total) ? doc.legal_monetary_total : undefined;
    const lmt = "legal_monetary_total";
    if (totals && Array.isArray(doc.invoice_line) && lines.length === doc.invoice_line.length) {
      compare(
        `${lmt}.line_extension_amount`,
        "total_lines",
        "the sum of invoice_line[].line_extension_amount",
        sum(lines.map(([line]) => num(line.line_extension_amount))),
        totals.line_extension_amount,
        ["invoice_line"],
      );
    }

    // Only when every entry is well formed: a malformed one is the schema's finding, not a sum's.
    const adjustments = asArray(doc.allowance_charge);
    const wellFormed = adjustments.every(
      (a) => isObject(a) && typeof a.charge_indicator === "boolean" && num(a.amount) !== undefined,
    );
    const total = (charge: boolean) =>
      wellFormed
        ? adjustments.reduce<number>(
            (s, a) => s + (isObject(a) && a.charge_indicator === charge ? (num(a.amount) as number) : 0),
            0,
          )
        : undefined;
    const allowances = total(false);
    const charges = total(true);
    const lineTotal = num(totals?.line_extension_amount);
    if (totals && lineTotal !== undefined && allowances !== undefined && charges !== undefined) {
      compare(
        `${lmt}.tax_exclusive_amount`,
        "total_tax_exclusive",
        "line_extension_amount − allowances + charges (allowance_charge)",
        lineTotal - allowances + charges,
        totals.tax_exclusive_amount,
        [`${lmt}.line_extension_amount`, "allowance_charge"],
      );
    }

    const taxTotals = entries(doc.tax_total, "tax_total");
    for (const [total, at] of taxTotals) {
      const subtotals = entries(total.tax_subtotal, `${at}.tax_subtotal`);
      for (const [sub, subAt] of subtotals) {
        const category = isObject(sub.tax_category) ? sub.tax_category : {};
        const percent = num(category.percent);
        const fixed = typeof category.id === "string" ? FIXED_RATES.get(category.id) : undefined;
        if (percent !== undefined && fixed !== undefined && percent !== fixed) {
          out.push({
            path: `${subAt}.tax_category.percent`,
            rule: "tax_rate",
            message: `${String(category.id)} is charged at ${fixed}%, not ${percent}%`,
            expected: fixed,
            actual: percent,
            related: [`${subAt}.tax_category.id`],
          });
        }
        const taxable = num(sub.taxable_amount);
        compare(
          `${subAt}.tax_amount`,
          "subtotal_tax",
          `taxable_amount × percent / 100 (${show(taxable ?? 0)} × ${show(percent ?? 0)} / 100)`,
          taxable !== undefined && percent !== undefined ? (taxable * percent) / 100 : undefined,
          sub.tax_amount,
          [`${subAt}.taxable_amount`, `${subAt}.tax_category.percent`],
        );
      }
      if (Array.isArray(total.tax_subtotal) && subtotals.length === total.tax_subtotal.length) {
        compare(
          `${at}.tax_amount`,
          "total_tax",
          `the sum of ${at}.tax_subtotal[].tax_amount`,
          sum(subtotals.map(([sub]) => num(sub.tax_amount))),
          total.tax_amount,
          [`${at}.tax_subtotal`],
        );
      }
    }

    if (totals) {
      const exclusive = num(totals.tax_exclusive_amount);
      const tax = doc.tax_total === undefined ? 0 : sum(taxTotals.map(([t]) => num(t.tax_amount)));
      const complete =
        doc.tax_total === undefined ||
        (Array.isArray(doc.tax_total) && taxTotals.length === doc.tax_total.length);
      if (exclusive !== undefined && tax !== undefined && complete) {
        compare(
          `${lmt}.tax_inclusive_amount`,
          "total_tax_inclusive",
          "tax_exclusive_amount + the sum of tax_total[].tax_amount",
          exclusive + tax,
          totals.tax_inclusive_amount,
          [`${lmt}.tax_exclusive_amount`, "tax_total"],
        );
      }
      compare(
        `${lmt}.payable_amount`,
        "total_payable",
        "tax_inclusive_amount",
        num(totals.tax_inclusive_amount),
        totals.payable_amount,
        [`${lmt}.tax_inclusive_amount`],
      );
    }
    return out;
  },
};
