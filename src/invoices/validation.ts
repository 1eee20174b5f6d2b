import type { Violation } from "../http/errors.ts";
import { INVOICE_RULES } from "./rules/index.ts";
import { isObject, type RuleContext } from "./rules/types.ts";

export type ValidationResult = { errors: Violation[]; warnings: Violation[] };

/** Runs every rule over a submitted document and sorts the findings into errors and warnings. */
export function validateInvoice(body: unknown, ctx: RuleContext): ValidationResult {
  if (!isObject(body)) {
    return {
      errors: [{ path: "(body)", rule: "type", message: "must be a JSON object (the invoice document)" }],
      warnings: [],
    };
  }
  const errors: Violation[] = [];
  const warnings: Violation[] = [];
  for (const rule of INVOICE_RULES) {
    const found = rule.check(body, ctx);
    if (found.length > 0) (rule.severity === "error" ? errors : warnings).push(...found);
  }
  return { errors, warnings };
}

export type InvoiceValidator = typeof validateInvoice;
