import { Ajv, type Options } from "ajv";
import formatsPlugin from "ajv-formats";
import { isRealDate } from "../crypto/irn.ts";

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

/**
 * A plausible email address: one @, no whitespace, a dot inside the domain. Checked by
 * hand in one pass: the usual regular expression backtracks quadratically on `a@....@` (200,000
 * dots held the event loop for a minute). Deliberately simple; mail delivery is the real test.
 */
export function isEmail(v: string): boolean {
  if (v.length > 254) return false;
  const at = v.indexOf("@");
  if (at < 1 || at !== v.lastIndexOf("@") || /\s/.test(v)) return false;
  const domain = v.slice(at + 1);
  const dot = domain.indexOf(".", 1);
  return dot > 0 && dot < domain.length - 1;
}

/**
 * Every format checks the length first, then an anchored pattern without nested quantifiers, so its
 * cost is bounded whatever the text (Ajv runs formats even when `maxLength` has already failed).
 */
const FORMATS: Record<string, (value: string) => boolean> = {
  date: (v) => v.length === 10 && isRealDate(v),
  time: (v) => v.length === 8 && /^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/.test(v),
  email: isEmail,
  tin: (v) => v.length <= 40 && /^\d+-\d+$/.test(v),
  telephone: (v) => v.length <= 16 && /^\+[1-9]\d{6,14}$/.test(v),
  country: (v) => v.length === 2 && /^[A-Z]{2}$/.test(v),
  decimal: (v) => v.length <= 22 && /^\d{1,15}(\.\d{1,6})?$/.test(v),
  uuid: (v) => v.length === 36 && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v),
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

/**
 * Answers, checked outside production against their documented schemas (http/app.ts): the body's
 * formats, and the two only answers carry.
 */
export function createAnswerAjv(): Ajv {
  const ajv = createAjv("body");
  // A CommonJS module: its plugin is `default` both as TypeScript types it and as Node loads it.
  formatsPlugin.default(ajv, ["date-time"]);
  // A PNG or SVG answer is bytes, documented as `format: binary` for OpenAPI: nothing to check.
  ajv.addFormat("binary", true);
  return ajv;
}

/** A schema's check, compiled by one of the three kinds of Ajv: request bodies, query and path text, answers. */
export type CompiledCheck = ReturnType<Ajv["compile"]>;

const shared: Partial<
  Record<"body" | "text" | "answer", { ajv: Ajv; compiled: Map<string, CompiledCheck> }>
> = {};

/**
 * The check of a schema, compiled once per process and schema: every app built in the process (the
 * test suite builds hundreds, the CLI's commands one each) reuses it, where compiling the routes'
 * schemas again was most of the cost of building an app. Keyed by the schema's JSON, since routes
 * build their schema objects anew for each app; the routes' schemas are a fixed, small set, so the
 * cache is bounded. A compiled check keeps no state between calls but its last `errors`, read at once.
 */
export function compileOnce(kind: "body" | "text" | "answer", schema: object): CompiledCheck {
  let entry = shared[kind];
  if (!entry) {
    entry = { ajv: kind === "answer" ? createAnswerAjv() : createAjv(kind), compiled: new Map() };
    shared[kind] = entry;
  }
  const key = JSON.stringify(schema);
  let check = entry.compiled.get(key);
  if (!check) {
    check = entry.ajv.compile(schema);
    entry.compiled.set(key, check);
  }
  return check;
}

/** The error text of a failed check, in Ajv's words. */
export const errorsText = (check: CompiledCheck) => shared.answer?.ajv.errorsText(check.errors) ?? "";
