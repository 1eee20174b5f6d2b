import type { Violation } from "../errors.ts";

/** The longest amount kept, in plain decimal notation: beyond any real invoice's total. */
export const MAX_AMOUNT_TEXT = 40;

/** A decimal as JSON or a person writes it: sign, digits, a point, digits, an exponent. */
const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/**
 * An amount as received, kept as its exact decimal value in plain notation: what the supplier
 * wrote, with only what changes no value taken out (a leading `+`, leading zeros) and an exponent
 * written out, so `0001500000.00` is `1500000.00` and `1e+21` a 1 and 21 zeros. The digits after
 * the point stay as written (`.50` is not `.5`): the buyer sees the supplier's precision. Never
 * cut: a value longer than MAX_AMOUNT_TEXT, or text that is no decimal, is no amount (`kept`
 * null) and says why, for the checks to report it. Absent (undefined, null, blank): null, nothing
 * to say; other kinds (an object, true) are reported by the validation's type rules.
 */
export function amountOf(value: unknown): { kept: string | null; problem?: "too_long" | "not_decimal" } {
  let text: string;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return { kept: null, problem: "not_decimal" };
    text = String(value);
  } else if (typeof value === "string") {
    text = value.trim();
    if (text === "") return { kept: null };
  } else {
    return { kept: null };
  }
  const match = DECIMAL.exec(text);
  if (!match) return { kept: null, problem: "not_decimal" };
  const [, sign = "", whole = "", fraction = "", exponentText] = match;
  if (whole === "" && fraction === "") return { kept: null, problem: "not_decimal" };
  const digits = whole + fraction;
  let point = whole.length;
  if (exponentText !== undefined) {
    // Past this, the point lands more than MAX_AMOUNT_TEXT places beyond the written digits: too
    // long whatever they are, and not worth the zeros it would take to write out.
    const exponent = Number(exponentText);
    if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > digits.length + MAX_AMOUNT_TEXT)
      return { kept: null, problem: "too_long" };
    point += exponent;
  }
  // Zeros only where the point moved past the written digits: those are the value's, not padding.
  const padded = point > digits.length ? digits + "0".repeat(point - digits.length) : digits;
  const lead = point < 0 ? "0".repeat(-point) : "";
  const at = Math.max(point, 0);
  const integer = (lead ? "0" : padded.slice(0, at)).replace(/^0+(?=\d)/, "") || "0";
  const decimals = lead + padded.slice(at);
  const sigil = sign === "-" && /[1-9]/.test(digits) ? "-" : "";
  const kept = `${sigil}${integer}${decimals === "" ? "" : `.${decimals}`}`;
  return kept.length > MAX_AMOUNT_TEXT ? { kept: null, problem: "too_long" } : { kept };
}

/** Why an amount was not kept, as a finding on its field: the summary shows null, the document the text. */
export function amountFinding(path: string, amount: { problem?: "too_long" | "not_decimal" }): Violation {
  return amount.problem === "too_long"
    ? {
        path,
        rule: "amount_too_long",
        message: `is longer than ${MAX_AMOUNT_TEXT} characters as a plain decimal: not kept as the invoice's amount`,
      }
    : {
        path,
        rule: "amount_not_decimal",
        message: "is not a decimal number: not kept as the invoice's amount",
      };
}
