import type { Violation } from "../../../errors.ts";
import { currencyDigits, hasExtraDecimals, round } from "../../money.ts";
import { amountsOf } from "./amounts.ts";
import { num, type Rule } from "./types.ts";

/**
 * An amount with more decimals than the document currency has (NGN: 2) is a warning: the invoice is
 * judged, and stored, by what it says, but that value will be read rounded (`expected`). Floating-point
 * noise (`246115.91999999998`) is not a finding at all: the document reaches the rules with it taken
 * out (see normalizeDocument). Unit prices may carry more decimals and are not checked here.
 */
export const precision: Rule = {
  name: "precision",
  severity: "warning",
  check(doc) {
    const out: Violation[] = [];
    const places = currencyDigits(doc.document_currency_code);
    const code = typeof doc.document_currency_code === "string" ? doc.document_currency_code : "the currency";
    for (const [holder, field, path] of amountsOf(doc)) {
      const n = num(holder[field]);
      if (n === undefined || !hasExtraDecimals(n, places)) continue;
      const rounded = round(n, places);
      out.push({
        path,
        rule: "precision",
        message: `${n} has more decimals than ${code} amounts carry (${places}); it is read as ${rounded}`,
        expected: rounded,
        actual: n,
        related: ["document_currency_code"],
      });
    }
    return out;
  },
};
