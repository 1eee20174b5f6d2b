import { createAjv } from "../../http/ajv.ts";
import { schemaViolations } from "../../http/errors.ts";
import { InvoiceDocument } from "../schema.ts";
import type { Rule } from "./types.ts";

const validate = createAjv("body").compile(InvoiceDocument);

/**
 * The invoice schema: required fields, JSON types (a numeric string is not a number), formats (real
 * calendar dates, HH:MM:SS, TIN, international telephone, email, country), bounds (quantities > 0,
 * amounts ≥ 0).
 */
export const typesAndFormats: Rule = {
  name: "types_and_formats",
  severity: "error",
  check(doc) {
    return validate(doc) ? [] : schemaViolations(validate.errors ?? []);
  },
};
