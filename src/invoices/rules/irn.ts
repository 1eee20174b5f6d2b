import { irnProblem, parseIrn } from "../../crypto/irn.ts";
import type { Violation } from "../../errors.ts";
import type { Rule } from "./types.ts";

/** The IRN fits the business's template and carries the invoice's issue date. */
export const irnTemplate: Rule = {
  name: "irn_template",
  severity: "error",
  check(doc, ctx) {
    const out: Violation[] = [];
    if (typeof doc.irn !== "string" || !ctx.business) return out;
    const problem = irnProblem(doc.irn, ctx.business.service_id);
    if (problem) {
      out.push({ path: "irn", rule: "irn_template", message: problem, actual: doc.irn });
      return out;
    }
    const parsed = parseIrn(doc.irn);
    if (!("error" in parsed) && typeof doc.issue_date === "string" && parsed.date !== doc.issue_date) {
      out.push({
        path: "irn",
        rule: "irn_date",
        message: `the IRN's date ${parsed.date} differs from issue_date ${doc.issue_date}`,
        expected: doc.issue_date,
        actual: parsed.date,
        related: ["issue_date"],
      });
    }
    return out;
  },
};
