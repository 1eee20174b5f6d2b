import type { Violation } from "../../http/errors.ts";
import { CURRENCIES } from "../../reference/currencies.ts";

const digits = new Map(CURRENCIES.map((c) => [c.code, c.decimal_digits]));

/** Minor-unit digits of a currency; 2 when the code is unknown (the code-list rule reports that). */
export function currencyDigits(code: unknown): number {
  return (typeof code === "string" ? digits.get(code) : undefined) ?? 2;
}

export function round(value: number, places: number): number {
  const factor = 10 ** places;
  return Math.round((value + Math.sign(value) * Number.EPSILON * Math.abs(value)) * factor) / factor;
}

/** Equal after rounding both to the currency's digits, within 0.01. */
export function agrees(expected: number, declared: number, places: number): boolean {
  if (expected === declared) return true;
  const difference = Math.abs(round(expected, places) - round(declared, places));
  // Scaling a value near the float limit overflows; compare such values unrounded.
  return Number.isFinite(difference) ? difference <= 0.01 + 1e-9 : Math.abs(expected - declared) <= 0.01;
}

/** Digits after the decimal point of a JSON number as written (`1e-7` has 7). */
export function decimalPlaces(value: number): number {
  if (!Number.isFinite(value) || Number.isInteger(value)) return 0;
  const [mantissa = "", exponent] = String(value).toLowerCase().split("e");
  const fraction = mantissa.split(".")[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exponent ?? 0));
}

export const show = (value: number) => String(round(value, 6));

/** The finding when a declared amount is not the one `formula` gives; undefined when they agree. */
export function disagreement(check: {
  path: string;
  rule: string;
  formula: string;
  expected: number;
  actual: number;
  places: number;
  related: string[];
}): Violation | undefined {
  const { path, rule, formula, expected, actual, places, related } = check;
  if (agrees(expected, actual, places)) return undefined;
  const rounded = round(expected, places);
  return {
    path,
    rule,
    message: `must equal ${formula} = ${show(rounded)}, but is ${show(actual)}`,
    expected: rounded,
    actual,
    related,
  };
}
