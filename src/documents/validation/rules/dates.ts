import { isRealDate } from "../../../crypto/irn.ts";
import type { Violation } from "../../../errors.ts";
import { entries, isObject, type Rule, str } from "./types.ts";

const date = (v: unknown) => {
  const s = str(v);
  return s !== undefined && isRealDate(s) ? s : undefined;
};

/** Due, payment-due and tax-point dates do not precede the issue date; a delivery period runs forward. */
export const dates: Rule = {
  name: "dates",
  severity: "error",
  check(doc) {
    const out: Violation[] = [];
    const issue = date(doc.issue_date);
    const notBeforeIssue = (value: unknown, path: string) => {
      const d = date(value);
      if (issue && d && d < issue) {
        out.push({
          path,
          rule: "date_order",
          message: `${d} is before issue_date ${issue}`,
          expected: `on or after ${issue}`,
          actual: d,
          related: ["issue_date"],
        });
      }
    };
    notBeforeIssue(doc.due_date, "due_date");
    notBeforeIssue(doc.tax_point_date, "tax_point_date");
    for (const [entry, path] of entries(doc.payment_means, "payment_means")) {
      notBeforeIssue(entry.payment_due_date, `${path}.payment_due_date`);
    }
    if (isObject(doc.invoice_delivery_period)) {
      const start = date(doc.invoice_delivery_period.start_date);
      const end = date(doc.invoice_delivery_period.end_date);
      if (start && end && end < start) {
        out.push({
          path: "invoice_delivery_period.end_date",
          rule: "date_order",
          message: `the delivery period ends (${end}) before it starts (${start})`,
          expected: `on or after ${start}`,
          actual: end,
          related: ["invoice_delivery_period.start_date"],
        });
      }
    }
    return out;
  },
};
