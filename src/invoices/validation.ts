import type { Violation } from "../http/errors.ts";
import { normalizeDocument } from "./rules/amounts.ts";
import { INVOICE_RULES } from "./rules/index.ts";
import { isObject, type RuleContext } from "./rules/types.ts";

export type ValidationResult = {
  errors: Violation[];
  warnings: Violation[];
  /** The document as checked, and as it is stored when it is signed (see normalizeDocument). */
  document: unknown;
};

/** Runs every rule over a submitted document and sorts the findings into errors and warnings. */
export function validateInvoice(body: unknown, ctx: RuleContext): ValidationResult {
  if (!isObject(body)) {
    return {
      errors: [{ path: "(body)", rule: "type", message: "must be a JSON object (the invoice document)" }],
      warnings: [],
      document: body,
    };
  }
  const document = normalizeDocument(body);
  const errors: Violation[] = [];
  const warnings: Violation[] = [];
  for (const rule of INVOICE_RULES) {
    const found = rule.check(document, ctx);
    if (found.length > 0) (rule.severity === "error" ? errors : warnings).push(...found);
  }
  return { errors, warnings, document };
}

export type InvoiceValidator = typeof validateInvoice;
