import { Ajv, type Options } from "ajv";
import { isRealDate } from "../signing/irn.ts";

/** Named formats, so an error can say in words what the field must look like. */
export const FORMAT_MESSAGES: Record<string, string> = {
  date: "must be a real calendar date written YYYY-MM-DD",
  time: "must be a time written HH:MM:SS",
  email: "must be an email address",
  tin: "must be a TIN: digits, a hyphen, digits (e.g. 12345678-0001)",
  telephone: "must be an international telephone number with a leading + (e.g. +2348031234567)",
  country: "must be a two-letter country code (e.g. NG)",
  uuid: "must be a UUID",
  decimal: "must be numeric text (e.g. 645000.00)",
};

const FORMATS: Record<string, (value: string) => boolean> = {
  date: isRealDate,
  time: (v) => /^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/.test(v),
  // Deliberately simple: one @, no spaces, a dot in the domain; mail delivery is the real test.
  email: (v) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v) && v.length <= 254,
  tin: (v) => /^\d+-\d+$/.test(v),
  telephone: (v) => /^\+[1-9]\d{6,14}$/.test(v),
  country: (v) => /^[A-Z]{2}$/.test(v),
  decimal: (v) => /^\d{1,15}(\.\d{1,6})?$/.test(v),
  uuid: (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v),
};

/**
 * Bodies are checked strictly (a numeric string is not a number, every error reported at once);
 * query strings and path parameters arrive as text and are coerced.
 */
export function createAjv(kind: "body" | "text"): Ajv {
  const options: Options =
    kind === "body"
      ? { allErrors: true, coerceTypes: false, useDefaults: false, removeAdditional: false, strict: false }
      : { allErrors: true, coerceTypes: true, useDefaults: true, removeAdditional: false, strict: false };
  const ajv = new Ajv(options);
  for (const [name, validate] of Object.entries(FORMATS)) ajv.addFormat(name, { type: "string", validate });
  return ajv;
}
