import type { Violation } from "../errors.ts";
import { CURRENCIES } from "../reference/currencies.ts";

const digits = new Map(CURRENCIES.map((c) => [c.code, c.decimal_digits]));

/** Minor-unit digits of a currency; 2 when the code is unknown (the code-list rule reports that). */
export function currencyDigits(code: unknown): number {
  return (typeof code === "string" ? digits.get(code) : undefined) ?? 2;
}

/**
 * 10 to the power of a currency's digits (0 to 4 for every ISO 4217 currency), and of their
 * negatives, worked out once by the same operator: `10 ** places` with a variable exponent is a call
 * to the engine's pow, about 150 of them per checked invoice.
 */
const POWERS = Array.from({ length: 5 }, (_, n) => 10 ** n);
const INVERSE_POWERS = Array.from({ length: 5 }, (_, n) => 10 ** -n);
const tenTo = (places: number): number => POWERS[places] ?? 10 ** places;
const tenToMinus = (places: number): number => INVERSE_POWERS[places] ?? 10 ** -places;

/** `value` rounded half away from zero to `places` decimals, as a decimal writes it. */
export function round(value: number, places: number): number {
  const factor = tenTo(places);
  const rounded = Math.round((Math.abs(value) + Number.EPSILON * Math.abs(value)) * factor) / factor;
  return value < 0 ? -rounded : rounded;
}

/**
 * Every correct rounding of `value` to `places` decimals: one, or, when the value is a tie (40534414.335
 * and its binary neighbours), both of its neighbours. Half up, half down, half to even and rounding
 * the binary value (`toFixed`, `Math.round(v * 100) / 100`) each pick one of them, and clients use all
 * of these for the steps they round before adding up.
 */
export function roundings(value: number, places: number): number[] {
  const factor = tenTo(places);
  const scaled = Math.abs(value) * factor;
  const below = Math.floor(scaled);
  if (Math.abs(scaled - below - 0.5) > noiseBound(value, places) * factor) return [round(value, places)];
  const sign = value < 0 ? -1 : 1;
  return [(sign * below) / factor, (sign * (below + 1)) / factor];
}

/**
 * The largest difference between a value and its rounding that binary floating point alone explains:
 * a millionth of a minor unit, or, for large values, a few units in the last place of the value (an
 * ERP that adds up 10,000 lines in doubles drifts by about that much).
 */
function noiseBound(value: number, places: number): number {
  return Math.max(tenToMinus(places) * 1e-6, Math.abs(value) * 64 * Number.EPSILON);
}

/**
 * The amount a client meant: `5101112.8100000005` and `246115.91999999998` are 5101112.81 and
 * 246115.92 written by a computer. An amount with real extra decimals (`92.5875`) is returned as it
 * is: that is a finding (see the precision rule), not noise.
 */
export function denoise(value: number, places: number): number {
  const rounded = round(value, places);
  if (Math.abs(value - rounded) > noiseBound(value, places)) return value;
  return rounded === 0 ? 0 : rounded;
}

/** Whether `value` carries decimals beyond the currency's that are not floating-point noise. */
export function hasExtraDecimals(value: number, places: number): boolean {
  return Number.isFinite(value) && denoise(value, places) !== round(value, places);
}

/**
 * Whether a declared amount is one that a correct computation gives. An amount written to the minor
 * unit (after noise is taken out) agrees when it lies within half a minor unit of one of the
 * `candidates`: rounding half up, half down or half to even all pass, and so do clients that round
 * before adding up (each line, then the total) and after. An amount written with more decimals was
 * computed and not rounded, so it is held to the formula over the values as declared (the first
 * candidate), within half a minor unit. Either way, an amount off by a minor unit (one kobo) fails.
 */
export function agrees(candidates: readonly number[], declared: number, places: number): boolean {
  const half = tenToMinus(places) / 2;
  const within = (expected: number, value: number) => {
    const difference = Math.abs(expected - value);
    // Values near the float limit overflow when scaled; such a difference is compared as it is.
    if (!Number.isFinite(difference)) return false;
    return difference <= half + noiseBound(Math.max(Math.abs(expected), Math.abs(value)), places);
  };
  const [computed] = candidates;
  if (computed === undefined) return true;
  if (computed === declared) return true;
  if (hasExtraDecimals(declared, places)) return within(computed, declared);
  const shown = denoise(declared, places);
  return candidates.some((expected) => within(expected, shown));
}

/** Digits after the decimal point of a JSON number as written (`1e-7` has 7). */
export function decimalPlaces(value: number): number {
  if (!Number.isFinite(value) || Number.isInteger(value)) return 0;
  const [mantissa = "", exponent] = String(value).toLowerCase().split("e");
  const fraction = mantissa.split(".")[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exponent ?? 0));
}

export const show = (value: number) => String(round(value, 6));

/**
 * The finding when a declared amount is not one that `formula` gives; undefined when it is.
 * `expected` is the formula over the declared values; `alternatives` are the same formula over the
 * declared values rounded first, which a client that rounds each step gets.
 */
export function disagreement(check: {
  path: string;
  rule: string;
  formula: string;
  expected: number;
  alternatives?: readonly number[];
  actual: number;
  places: number;
  related: string[];
}): Violation | undefined {
  const { path, rule, formula, expected, actual, places, related } = check;
  if (agrees([expected, ...(check.alternatives ?? [])], actual, places)) return undefined;
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

/** Major units as the API shows them: a JSON number with at most the currency's digits. */
export const toMajor = (minor: number, digits: number): number => minor / 10 ** digits;

/** Exactly `digits` decimals, from the integer: `2500000` kobo is `25000.00`. */
export function formatMinor(minor: number, digits: number): string {
  const unit = 10 ** digits;
  const whole = Math.floor(Math.abs(minor) / unit);
  const sign = minor < 0 ? "-" : "";
  if (digits === 0) return `${sign}${whole}`;
  return `${sign}${whole}.${String(Math.abs(minor) - whole * unit).padStart(digits, "0")}`;
}

/**
 * An amount in whole minor units, or undefined when it has a real extra decimal (100.005 NGN).
 * Float noise is not one: `0.1 + 0.2` or `25000.000000001` lie within a millionth of a minor unit of
 * a whole one (for amounts too large for that, within a few units in the last place of a double).
 */
export function minorUnits(amount: number, digits: number): number | undefined {
  const scaled = amount * 10 ** digits;
  const whole = Math.round(scaled);
  return Math.abs(scaled - whole) <= Math.max(1e-6, Math.abs(scaled) * 2 ** -48) ? whole : undefined;
}
