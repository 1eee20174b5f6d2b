import { invalid } from "./envelopes.ts";
import { isRealDate } from "./irn.ts";
import { isObject } from "./paging.ts";

// The field checks of validate, sign, party and the VAT report. MBS reports one reason per answer,
// the first rule broken [client]: each check throws at once. The texts follow the ones quoted from
// MBS (the MBS spec, section 3): the path lower-cased with underscores dropped (the caller builds
// it), then `is required`, `must be at least in length or value N`, `can not be more than in length
// or value N`, `must be a valid date value yyyy-mm-dd (e.g: 2024-04-29)`, `must be a valid … code,
// refer to the invoice resource apis`. Texts no source quotes (types, e-mail, telephone) are the
// simulator's, in that style [unknown].

export type Fields = Record<string, unknown>;

/** `tax_point_date` → `taxpointdate`: how MBS writes a field in a path. */
export const key = (name: string) => name.replaceAll("_", "");

export const present = (value: unknown) => value !== undefined && value !== null && value !== "";

export const TEXTS = {
  required: (path: string) => `${path} is required`,
  min: (path: string, n: number) => `${path} must be at least in length or value ${n}`,
  max: (path: string, n: number) => `${path} can not be more than in length or value ${n}`,
  date: (path: string) => `${path} must be a valid date value yyyy-mm-dd (e.g: 2024-04-29)`,
  listed: (path: string, what: string) =>
    `${path} must be a valid ${what}, refer to the invoice resource apis`,
  oneOf: (path: string, values: readonly string[]) => `${path} must be one of [${values.join(" ")}]`,
  type: (path: string, type: string) => `${path} must be ${type}`,
} as const;

/** A text field: required or optional; its value when it is one. */
export function text(fields: Fields, name: string, path: string, required: boolean): string | undefined {
  const value = fields[name];
  if (!present(value)) {
    if (required) throw invalid(TEXTS.required(path));
    return undefined;
  }
  if (typeof value !== "string") throw invalid(TEXTS.type(path, "a string"));
  return value;
}

/** [client] A date field, YYYY-MM-DD and a day that exists. */
export function date(fields: Fields, name: string, path: string, required: boolean): string | undefined {
  const value = fields[name];
  if (!present(value)) {
    if (required) throw invalid(TEXTS.required(path));
    return undefined;
  }
  if (typeof value !== "string" || !isRealDate(value)) throw invalid(TEXTS.date(path));
  return value;
}

/** [client] An amount is a JSON number: numeric strings are reported refused. */
export function amount(fields: Fields, name: string, path: string, required: boolean): number | undefined {
  const value = fields[name];
  if (value === undefined || value === null) {
    if (required) throw invalid(TEXTS.required(path));
    return undefined;
  }
  if (typeof value !== "number" || !Number.isFinite(value)) throw invalid(TEXTS.type(path, "a number"));
  return value;
}

/** A code from a reference list; `what` names the list in the refusal ("valid country code"). */
export function listed(
  fields: Fields,
  name: string,
  path: string,
  options: { required: boolean; codes: ReadonlySet<string>; what: string },
): string | undefined {
  const value = text(fields, name, path, options.required);
  if (value !== undefined && !options.codes.has(value)) throw invalid(TEXTS.listed(path, options.what));
  return value;
}

/** An object field; undefined when absent and optional. */
export function object(fields: Fields, name: string, path: string, required: boolean): Fields | undefined {
  const value = fields[name];
  if (value === undefined || value === null) {
    if (required) throw invalid(TEXTS.required(path));
    return undefined;
  }
  if (!isObject(value)) throw invalid(TEXTS.type(path, "an object"));
  return value;
}

/** A list of objects; `nonEmpty` refuses `[]` as missing. */
export function objects(
  fields: Fields,
  name: string,
  path: string,
  options: { required: boolean; nonEmpty?: boolean },
): Fields[] {
  const value = fields[name];
  if (
    value === undefined ||
    value === null ||
    (options.nonEmpty && Array.isArray(value) && value.length === 0)
  ) {
    if (options.required) throw invalid(TEXTS.required(path));
    return [];
  }
  if (!Array.isArray(value)) throw invalid(TEXTS.type(path, "a list"));
  value.forEach((item, i) => {
    if (!isObject(item)) throw invalid(TEXTS.type(`${path}[${i}]`, "an object"));
  });
  return value as Fields[];
}

/** At least `n` characters, when given. */
export function minLength(value: string | undefined, n: number, path: string): void {
  if (value !== undefined && value.length < n) throw invalid(TEXTS.min(path, n));
}

/** At most `n` characters, when given. */
export function maxLength(value: string | undefined, n: number, path: string): void {
  if (value !== undefined && value.length > n) throw invalid(TEXTS.max(path, n));
}

/** One of a few fixed values, when given. */
export function oneOf(value: string | undefined, values: readonly string[], path: string): void {
  if (value !== undefined && !values.includes(value)) throw invalid(TEXTS.oneOf(path, values));
}
