import type { Violation } from "../../http/errors.ts";
import { currencyDigits, decimalPlaces } from "./money.ts";
import { entries, isObject, num, type Rule } from "./types.ts";

/**
 * Document-level and line amounts carry no more decimals than the document currency allows (NGN: 2).
 * Unit prices (`price.price_amount`) may carry more: a fraction of a kobo per unit is legitimate.
 */
export const precision: Rule = {
  name: "precision",
  severity: "error",
  check(doc) {
    const out: Violation[] = [];
    const places = currencyDigits(doc.document_currency_code);
    const code = typeof doc.document_currency_code === "string" ? doc.document_currency_code : "the currency";
    const checkAmount = (value: unknown, path: string) => {
      const n = num(value);
      if (n !== undefined && decimalPlaces(n) > places) {
        out.push({
          path,
          rule: "precision",
          message: `${n} has ${decimalPlaces(n)} decimals; ${code} amounts carry at most ${places}`,
          expected: `at most ${places} decimals`,
          actual: n,
          related: ["document_currency_code"],
        });
      }
    };
    if (isObject(doc.legal_monetary_total)) {
      for (const field of [
        "line_extension_amount",
        "tax_exclusive_amount",
        "tax_inclusive_amount",
        "payable_amount",
      ]) {
        checkAmount(doc.legal_monetary_total[field], `legal_monetary_total.${field}`);
      }
    }
    for (const [entry, at] of entries(doc.allowance_charge, "allowance_charge"))
      checkAmount(entry.amount, `${at}.amount`);
    for (const [total, at] of entries(doc.tax_total, "tax_total")) {
      checkAmount(total.tax_amount, `${at}.tax_amount`);
      for (const [sub, subAt] of entries(total.tax_subtotal, `${at}.tax_subtotal`)) {
        checkAmount(sub.taxable_amount, `${subAt}.taxable_amount`);
        checkAmount(sub.tax_amount, `${subAt}.tax_amount`);
      }
    }
    for (const [line, at] of entries(doc.invoice_line, "invoice_line")) {
      for (const field of ["line_extension_amount", "discount_amount", "fee_amount"])
        checkAmount(line[field], `${at}.${field}`);
    }
    return out;
  },
};
