import { Type } from "typebox";
import type { Violation } from "../../../errors.ts";
import { createAjv } from "../../../schema/ajv.ts";
import { schemaViolations } from "../../../schema/violations.ts";
import { InvoiceDocument, InvoiceLine, MAX_LINES } from "../../schema.ts";
import type { Rule } from "./types.ts";

/** What schemaViolations would report of Ajv's errors, counted without building them. */
const reported = (errors: readonly { keyword: string }[]) =>
  errors.reduce(
    (n, e) => (e.keyword === "anyOf" || e.keyword === "oneOf" || e.keyword === "if" ? n : n + 1),
    0,
  );

const ajv = createAjv("body");
/**
 * The document but its lines, and each line on its own: Ajv with `allErrors` collects every error
 * of every item of an array, so checking the lines one by one lets the line count be bounded
 * first (the array is refused before its items are looked at; see oversizedArrays).
 */
const validateHead = ajv.compile(
  Type.Object({
    ...InvoiceDocument.properties,
    invoice_line: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_LINES }),
  }),
);
const validateLine = ajv.compile(InvoiceLine);

/**
 * The invoice schema: required fields, JSON types (a numeric string is not a number), formats (real
 * calendar dates, HH:MM:SS, TIN, international telephone, email, country), bounds (quantities > 0,
 * amounts ≥ 0, lengths).
 */
export const typesAndFormats: Rule = {
  name: "types_and_formats",
  severity: "error",
  check(doc, _ctx, budget) {
    const out: Violation[] = validateHead(doc) ? [] : schemaViolations(validateHead.errors ?? []);
    const lines = doc.invoice_line;
    if (!Array.isArray(lines) || lines.length > MAX_LINES) return out;
    for (let i = 0; i < lines.length; i++) {
      if (validateLine(lines[i])) continue;
      const errors = validateLine.errors ?? [];
      // Past what the answer can list, lines that break the schema are counted, not described.
      if (budget && out.length >= budget.room) budget.beyond += reported(errors);
      else for (const v of schemaViolations(errors, `invoice_line[${i}]`)) out.push(v);
    }
    return out;
  },
};
