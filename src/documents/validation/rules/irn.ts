import { irnProblem, parseIrn } from "../../../crypto/irn.ts";
import type { Violation } from "../../../errors.ts";
import type { Rule } from "./types.ts";

/** The IRN fits the business's template: `{invoice number}-{service id}-{YYYYMMDD}`. */
export const irnTemplate: Rule = {
  name: "irn_template",
  severity: "error",
  check(doc, ctx) {
    const out: Violation[] = [];
    if (typeof doc.irn !== "string" || !ctx.business) return out;
    const problem = irnProblem(doc.irn, ctx.business.service_id);
    if (problem) out.push({ path: "irn", rule: "irn_template", message: problem, actual: doc.irn });
    return out;
  },
};

/**
 * The IRN's date part is the issue date, as access points build it; a warning, not an error: no
 * source says the authority requires it, and its own examples break it (an IRN ending `20240703` on
 * an invoice issued 2024-05-14), so an integrator who copied them is told, not refused.
 */
export const irnDate: Rule = {
  name: "irn_date",
  severity: "warning",
  check(doc, ctx) {
    const out: Violation[] = [];
    if (typeof doc.irn !== "string" || !ctx.business) return out;
    // An IRN off the template is irn_template's finding; its date is not read then.
    if (irnProblem(doc.irn, ctx.business.service_id)) return out;
    const parsed = parseIrn(doc.irn);
    if (!("error" in parsed) && typeof doc.issue_date === "string" && parsed.date !== doc.issue_date) {
      out.push({
        path: "irn",
        rule: "irn_date",
        message: `the IRN's date ${parsed.date} differs from issue_date ${doc.issue_date}: accepted (the authority's own examples do this), but access points build it from the issue date`,
        expected: doc.issue_date,
        actual: parsed.date,
        related: ["issue_date"],
      });
    }
    return out;
  },
};
