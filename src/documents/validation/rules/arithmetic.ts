import type { Violation } from "../../../errors.ts";
import { TAX_CATEGORIES } from "../../../reference/data.ts";
import { agrees, currencyDigits, disagreement, round, roundings, show } from "../../money.ts";
import { asArray, entries, isObject, lineBase, num, type Rule } from "./types.ts";

/** Tax categories whose reference percent is a number (STANDARD_VAT 7.5, ZERO_VAT 0.0, …). */
const FIXED_RATES = new Map(
  TAX_CATEGORIES.filter((t) => t.percent !== "" && Number.isFinite(Number(t.percent))).map((t) => [
    t.code,
    Number(t.percent),
  ]),
);

const sum = (values: (number | undefined)[]) =>
  values.every((v) => v !== undefined) ? values.reduce<number>((a, v) => a + (v as number), 0) : undefined;

/** A line's discount or fee: its amount when given, else the base at its rate, else none. */
function adjustment(amount: unknown, rate: unknown, base: number): number | undefined {
  if (amount !== undefined) return num(amount);
  if (rate !== undefined) return num(rate) === undefined ? undefined : (base * (num(rate) as number)) / 100;
  return 0;
}

/** The line amounts of clients that round the base (or not), the discount and the fee first. */
function lineRoundings(gross: number, discount: number, fee: number, places: number): number[] {
  const out: number[] = [];
  for (const base of [gross, ...roundings(gross, places)])
    for (const d of roundings(discount, places))
      for (const f of roundings(fee, places)) out.push(base - d + f);
  return out;
}

/** One document's findings so far, and the decimals of its currency. */
type Audit = { violations: Violation[]; places: number };

type Entries = [Record<string, unknown>, string][];

const LMT = "legal_monetary_total";

/** What a finding says, built only for an amount that disagrees. */
type Finding = {
  path: string;
  rule: string;
  formula: string;
  related: string[];
  /** The formula over the declared values rounded first (see `agrees`). */
  alternatives?: number[];
};

/**
 * Adds a finding when `declared` is not what `expected` rounds to (nor one of its alternatives);
 * nothing when either is not a number, which is another rule's finding. Most amounts agree with the
 * formula over the values as declared, so the finding's texts and the alternatives are built only
 * when that fails: building them for every amount took most of this rule's time.
 */
function compare(
  audit: Audit,
  expected: number | undefined,
  declared: unknown,
  finding: () => Finding,
): void {
  const actual = num(declared);
  if (expected === undefined || actual === undefined) return;
  const { places } = audit;
  // Agreeing with the first candidate is agreeing with the list (see `agrees`).
  if (expected === actual || agrees([expected], actual, places)) return;
  const disagrees = disagreement({ ...finding(), expected, actual, places });
  if (disagrees) audit.violations.push(disagrees);
}

/** The sum of the terms each rounded first: what a client that rounds every step declares. */
function alternative(terms: (number | undefined)[], places: number): number[] {
  const total = sum(terms.map((t) => (t === undefined ? undefined : round(t, places))));
  return total === undefined ? [] : [total];
}

const byRate = (given: unknown) => (given === undefined ? " (from the rate)" : "");

/** Each line's amount against its quantity, price, discount and fee. */
function checkLines(lines: Entries, audit: Audit): void {
  for (const [line, at] of lines) {
    const base = lineBase(line);
    if (!base) continue;
    const { quantity, unit, per, gross } = base;
    const discount = adjustment(line.discount_amount, line.discount_rate, gross);
    const fee = adjustment(line.fee_amount, line.fee_rate, gross);
    if (discount === undefined || fee === undefined) continue;
    compare(audit, gross - discount + fee, line.line_extension_amount, () => ({
      path: `${at}.line_extension_amount`,
      rule: "line_amount",
      formula: `invoiced_quantity × price_amount / base_quantity − discount${byRate(line.discount_amount)} + fee${byRate(line.fee_amount)} (${show(quantity)} × ${show(unit)} / ${show(per)} − ${show(discount)} + ${show(fee)})`,
      related: [
        `${at}.invoiced_quantity`,
        `${at}.price.price_amount`,
        `${at}.price.base_quantity`,
        line.discount_amount === undefined && line.discount_rate !== undefined
          ? `${at}.discount_rate`
          : `${at}.discount_amount`,
        line.fee_amount === undefined && line.fee_rate !== undefined ? `${at}.fee_rate` : `${at}.fee_amount`,
      ],
      // Clients round the discount and fee before they subtract them, from the base as it is or
      // rounded too, each tie either way.
      alternatives: lineRoundings(gross, discount, fee, audit.places),
    }));
  }
}

/** The total of the lines; only when every line could be read, or the sum would miss one. */
function checkLinesTotal(
  doc: Record<string, unknown>,
  lines: Entries,
  totals: Record<string, unknown>,
  audit: Audit,
): void {
  if (!Array.isArray(doc.invoice_line) || lines.length !== doc.invoice_line.length) return;
  const amounts = lines.map(([line]) => num(line.line_extension_amount));
  compare(audit, sum(amounts), totals.line_extension_amount, () => ({
    path: `${LMT}.line_extension_amount`,
    rule: "total_lines",
    formula: "the sum of invoice_line[].line_extension_amount",
    related: ["invoice_line"],
    alternatives: alternative(amounts, audit.places),
  }));
}

/** The allowances (`charge` false) or the charges (true) of the document, each amount through `each`. */
function adjustmentTotal(adjustments: unknown[], charge: boolean, each: (amount: number) => number): number {
  return adjustments.reduce<number>(
    (s, a) => s + (isObject(a) && a.charge_indicator === charge ? each(num(a.amount) as number) : 0),
    0,
  );
}

const asIs = (amount: number) => amount;

/** The tax exclusive amount: the lines' total less the document's allowances, plus its charges. */
function checkAllowancesAndCharges(
  doc: Record<string, unknown>,
  totals: Record<string, unknown>,
  audit: Audit,
): void {
  // Only when every entry is well formed: a malformed one is the schema's finding, not a sum's.
  const adjustments = asArray(doc.allowance_charge);
  const wellFormed = adjustments.every(
    (a) => isObject(a) && typeof a.charge_indicator === "boolean" && num(a.amount) !== undefined,
  );
  const lineTotal = num(totals.line_extension_amount);
  if (!wellFormed || lineTotal === undefined) return;
  const r = (value: number) => round(value, audit.places);
  compare(
    audit,
    lineTotal - adjustmentTotal(adjustments, false, asIs) + adjustmentTotal(adjustments, true, asIs),
    totals.tax_exclusive_amount,
    () => ({
      path: `${LMT}.tax_exclusive_amount`,
      rule: "total_tax_exclusive",
      formula: "line_extension_amount − allowances + charges (allowance_charge)",
      related: [`${LMT}.line_extension_amount`, "allowance_charge"],
      alternatives: [
        r(lineTotal) - adjustmentTotal(adjustments, false, r) + adjustmentTotal(adjustments, true, r),
      ],
    }),
  );
}

/** A subtotal's rate against its category's, and its tax against its taxable amount at that rate. */
function checkSubtotal(sub: Record<string, unknown>, subAt: string, audit: Audit): void {
  const category = isObject(sub.tax_category) ? sub.tax_category : {};
  const percent = num(category.percent);
  const fixed = typeof category.id === "string" ? FIXED_RATES.get(category.id) : undefined;
  // A rate computed in floating point (7.499999999999999) is the rate it means.
  if (percent !== undefined && fixed !== undefined && Math.abs(percent - fixed) > 1e-9) {
    audit.violations.push({
      path: `${subAt}.tax_category.percent`,
      rule: "tax_rate",
      message: `${String(category.id)} is charged at ${fixed}%, not ${percent}%`,
      expected: fixed,
      actual: percent,
      related: [`${subAt}.tax_category.id`],
    });
  }
  const taxable = num(sub.taxable_amount);
  if (taxable === undefined || percent === undefined) return;
  compare(audit, (taxable * percent) / 100, sub.tax_amount, () => ({
    path: `${subAt}.tax_amount`,
    rule: "subtotal_tax",
    formula: `taxable_amount × percent / 100 (${show(taxable)} × ${show(percent)} / 100)`,
    related: [`${subAt}.taxable_amount`, `${subAt}.tax_category.percent`],
    alternatives: [(round(taxable, audit.places) * percent) / 100],
  }));
}

/** A tax total's subtotals, then its amount against their sum when every subtotal could be read. */
function checkTaxTotal(total: Record<string, unknown>, at: string, audit: Audit): void {
  const subtotals = entries(total.tax_subtotal, `${at}.tax_subtotal`);
  for (const [sub, subAt] of subtotals) checkSubtotal(sub, subAt, audit);
  if (!Array.isArray(total.tax_subtotal) || subtotals.length !== total.tax_subtotal.length) return;
  const amounts = subtotals.map(([sub]) => num(sub.tax_amount));
  compare(audit, sum(amounts), total.tax_amount, () => ({
    path: `${at}.tax_amount`,
    rule: "total_tax",
    formula: `the sum of ${at}.tax_subtotal[].tax_amount`,
    related: [`${at}.tax_subtotal`],
    alternatives: alternative(amounts, audit.places),
  }));
}

/** The tax inclusive amount (the tax exclusive one plus the taxes) and the payable amount it makes. */
function checkMonetaryTotals(
  doc: Record<string, unknown>,
  totals: Record<string, unknown>,
  taxTotals: Entries,
  audit: Audit,
): void {
  const exclusive = num(totals.tax_exclusive_amount);
  const taxes = taxTotals.map(([t]) => num(t.tax_amount));
  const tax = doc.tax_total === undefined ? 0 : sum(taxes);
  const complete =
    doc.tax_total === undefined ||
    (Array.isArray(doc.tax_total) && taxTotals.length === doc.tax_total.length);
  if (exclusive !== undefined && tax !== undefined && complete) {
    compare(audit, exclusive + tax, totals.tax_inclusive_amount, () => ({
      path: `${LMT}.tax_inclusive_amount`,
      rule: "total_tax_inclusive",
      formula: "tax_exclusive_amount + the sum of tax_total[].tax_amount",
      related: [`${LMT}.tax_exclusive_amount`, "tax_total"],
      alternatives: alternative([exclusive, ...taxes], audit.places),
    }));
  }
  compare(audit, num(totals.tax_inclusive_amount), totals.payable_amount, () => ({
    path: `${LMT}.payable_amount`,
    rule: "total_payable",
    formula: "tax_inclusive_amount",
    related: [`${LMT}.tax_inclusive_amount`],
    alternatives: alternative([num(totals.tax_inclusive_amount)], audit.places),
  }));
}

/**
 * Lines, allowances, charges, taxes and totals add up. Each finding names the declared value that
 * disagrees, the expected value, and (in `related`) the fields it was computed from. A declared amount
 * agrees when it is a correct rounding of the expected one (see `agrees`): computed from the values as
 * declared, or from those values rounded first, the two ways real clients add up.
 */
export const arithmetic: Rule = {
  name: "arithmetic",
  severity: "error",
  check(doc) {
    const audit: Audit = { violations: [], places: currencyDigits(doc.document_currency_code) };
    const lines = entries(doc.invoice_line, "invoice_line");
    const totals = isObject(doc.legal_monetary_total) ? doc.legal_monetary_total : undefined;
    checkLines(lines, audit);
    if (totals) {
      checkLinesTotal(doc, lines, totals, audit);
      checkAllowancesAndCharges(doc, totals, audit);
    }
    const taxTotals = entries(doc.tax_total, "tax_total");
    for (const [total, at] of taxTotals) checkTaxTotal(total, at, audit);
    if (totals) checkMonetaryTotals(doc, totals, taxTotals, audit);
    return audit.violations;
  },
};
