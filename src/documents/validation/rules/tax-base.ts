import type { Violation } from "../../../errors.ts";
import { agrees, currencyDigits, round, show } from "../../money.ts";
import { isObject, num, type Rule } from "./types.ts";

/**
 * What a tax authority checks of the tax base, as warnings: real invoices mix taxed, exempt and
 * out-of-scope lines (the arithmetic rules hold either way), so a base that does not cover the
 * whole invoice is worth saying, not refusing.
 * - A tax total whose subtotals' taxable amounts do not add up to `tax_exclusive_amount` leaves part
 *   of the invoice without any declared tax treatment (a tax total with no base at all is the case
 *   the authority cares about).
 * - An invoice with a positive tax-exclusive amount and no tax total declares no VAT at all, while
 *   supplies in Nigeria are standard-rated (7.5%) unless a category says otherwise.
 */
export const taxBase: Rule = {
  name: "tax_base",
  severity: "warning",
  check(doc) {
    const out: Violation[] = [];
    const totals = isObject(doc.legal_monetary_total) ? doc.legal_monetary_total : {};
    const exclusive = num(totals.tax_exclusive_amount);
    if (exclusive === undefined) return out;
    const places = currencyDigits(doc.document_currency_code);
    const taxTotals = Array.isArray(doc.tax_total) ? doc.tax_total : [];
    if (!taxTotals.some(isObject) && exclusive > 0) {
      out.push({
        path: "tax_total",
        rule: "tax_total_missing",
        message: `no tax_total is declared for a tax-exclusive amount of ${show(exclusive)}: a standard-rated supply carries VAT at 7.5%; declare the tax, or a subtotal whose category says the supply is zero-rated or exempt`,
        related: ["legal_monetary_total.tax_exclusive_amount"],
      });
    }
    // Plain loops: this runs on every sign, and the common case finds nothing.
    for (let i = 0; i < taxTotals.length; i++) {
      const total = taxTotals[i];
      if (!isObject(total) || !Array.isArray(total.tax_subtotal)) continue;
      let base = 0;
      let complete = true;
      for (const sub of total.tax_subtotal) {
        const taxable = isObject(sub) ? num(sub.taxable_amount) : undefined;
        // A missing or unusable base is the schema's to name.
        if (taxable === undefined) complete = false;
        else base += taxable;
      }
      if (!complete || agrees([base], exclusive, places)) continue;
      const at = `tax_total[${i}]`;
      out.push({
        path: `${at}.tax_subtotal`,
        rule: "tax_base_mismatch",
        message: `the taxable amounts of ${at}.tax_subtotal add up to ${show(round(base, places))}, not legal_monetary_total.tax_exclusive_amount ${show(exclusive)}: ${show(round(exclusive - base, places))} of the invoice has no declared tax treatment`,
        expected: exclusive,
        actual: round(base, places),
        related: ["legal_monetary_total.tax_exclusive_amount"],
      });
    }
    return out;
  },
};
