import type { Violation } from "../../../errors.ts";
import { entries, type Rule } from "./types.ts";

/** `252329` and `2523.29` name the same subheading. */
export function normalizeHsCode(code: string): string {
  return /^\d{6}$/.test(code) ? `${code.slice(0, 4)}.${code.slice(4)}` : code;
}

/** An HS code missing from the product catalog is a warning: real clients send their own item codes. */
export const productCatalog: Rule = {
  name: "product_catalog",
  severity: "warning",
  check(doc, ctx) {
    const out: Violation[] = [];
    if (!ctx.knownProducts) return out;
    for (const [line, at] of entries(doc.invoice_line, "invoice_line")) {
      if (typeof line.hsn_code !== "string") continue;
      if (!ctx.knownProducts.has(normalizeHsCode(line.hsn_code))) {
        out.push({
          path: `${at}.hsn_code`,
          rule: "hs_code_known",
          message: `'${line.hsn_code}' is not an HS 2022 subheading of resources/products`,
          actual: line.hsn_code,
        });
      }
    }
    return out;
  },
};
