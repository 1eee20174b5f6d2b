import { createAjv } from "../http/ajv.ts";
import { schemaViolations, type Violation } from "../http/errors.ts";
import { INVOICE_RULES } from "./rules/index.ts";
import { isObject, type RuleContext } from "./rules/types.ts";
import { InvoiceDocument } from "./schema.ts";

export type ValidationResult = { errors: Violation[]; warnings: Violation[] };

/** Compiled once: the schema check plus every rule, collecting all violations in one pass. */
export function invoiceValidator() {
  const checkSchema = createAjv("body").compile(InvoiceDocument);
  return (body: unknown, ctx: RuleContext): ValidationResult => {
    if (!isObject(body)) {
      return {
        errors: [{ path: "(body)", rule: "type", message: "must be a JSON object (the invoice document)" }],
        warnings: [],
      };
    }
    const errors: Violation[] = checkSchema(body) ? [] : schemaViolations(checkSchema.errors ?? []);
    const warnings: Violation[] = [];
    for (const rule of INVOICE_RULES) {
      const found = rule.check(body, ctx);
      (rule.severity === "error" ? errors : warnings).push(...found);
    }
    return { errors, warnings };
  };
}

export type InvoiceValidator = ReturnType<typeof invoiceValidator>;
