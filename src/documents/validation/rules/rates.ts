import type { Violation } from "../../../errors.ts";
import { agrees, currencyDigits, round, show } from "../../money.ts";
import { entries, lineBase, num, type Rule } from "./types.ts";

/**
 * A line that gives both a discount (or fee) amount and its rate should say the same thing twice.
 * When they disagree the amount is the one the arithmetic uses, so this is a warning naming both: the
 * invoice adds up, but one of the two fields is not what the client meant.
 */
export const rates: Rule = {
  name: "rates",
  severity: "warning",
  check(doc) {
    const out: Violation[] = [];
    const places = currencyDigits(doc.document_currency_code);
    for (const [line, at] of entries(doc.invoice_line, "invoice_line")) {
      const gross = lineBase(line)?.gross;
      if (gross === undefined) continue;
      for (const kind of ["discount", "fee"] as const) {
        const given = num(line[`${kind}_amount`]);
        const percent = num(line[`${kind}_rate`]);
        if (given === undefined || percent === undefined) continue;
        const fromRate = (gross * percent) / 100;
        if (agrees([fromRate, (round(gross, places) * percent) / 100], given, places)) continue;
        out.push({
          path: `${at}.${kind}_amount`,
          rule: `${kind}_rate`,
          message: `${kind}_amount ${show(given)} is not ${kind}_rate ${show(percent)}% of ${show(round(gross, places))} (that is ${show(round(fromRate, places))}); the amount is the one used`,
          expected: round(fromRate, places),
          actual: given,
          related: [`${at}.${kind}_rate`, `${at}.invoiced_quantity`, `${at}.price.price_amount`],
        });
      }
    }
    return out;
  },
};
