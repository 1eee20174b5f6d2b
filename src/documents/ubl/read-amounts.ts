import { lineBase, num } from "../validation/rules/types.ts";
import { NOT_SUBJECT, vatFromUbl } from "./codes.ts";
import { ALLOWANCE, LINE, plainRows, TOTALS } from "./mapping.ts";
import type { Reading } from "./reading.ts";
import { setPath } from "./reading.ts";
import type { UblNode } from "./tree.ts";

/*
 * The amounts of a UBL document read into this API's: the VAT breakdown, the totals, the
 * document's allowances and charges, and the lines with theirs (read.ts reads the rest).
 */

const LINE_PLAIN = plainRows(LINE);
const TOTALS_PLAIN = plainRows(TOTALS);

/** The UNCL 5305 letter each category read came from: Z and E are both ZERO_VAT at 0%. */
const LETTERS = new WeakMap<object, string>();

/**
 * A line's or an allowance's exempt category takes the exemption of the breakdown's category of
 * the same letter and rate: EN 16931 states the reason once, in the breakdown, and UBL out must
 * write E (not Z) on the line again.
 */
export function exemptionsOf(doc: Record<string, unknown>): void {
  const total = (
    doc.tax_total as { tax_subtotal?: { tax_category?: Record<string, unknown> }[] }[] | undefined
  )?.[0];
  const breakdown = (total?.tax_subtotal ?? []).map((s) => s.tax_category).filter((c) => c !== undefined);
  const holders = [
    ...((doc.invoice_line ?? []) as Record<string, unknown>[]),
    ...((doc.allowance_charge ?? []) as Record<string, unknown>[]),
  ];
  for (const holder of holders) {
    const own = holder.tax_category as Record<string, unknown> | undefined;
    const letter = own ? LETTERS.get(own) : undefined;
    if (!own || letter !== "E") continue;
    const match = breakdown.find((b) => LETTERS.get(b) === letter && b.percent === own.percent);
    for (const key of ["exemption_reason_code", "exemption_reason"]) {
      if (own[key] === undefined && match?.[key] !== undefined) own[key] = match[key];
    }
  }
}

/** A category of UNCL 5305 and its percent, as this API's tax category; undefined when refused. */
function category(r: Reading, node: UblNode | undefined, at: string, exemption: boolean) {
  if (!node) return undefined;
  r.sources.set(at, node.path);
  const letter = r.at(node, "cbc:ID");
  r.at(node, "cac:TaxScheme/cbc:ID");
  if (!letter) return undefined;
  const found = vatFromUbl(letter.text);
  if ("refused" in found) {
    r.refuse(letter.path, found.refused, letter.text);
    return undefined;
  }
  const out: Record<string, unknown> = { id: found.ours };
  r.sources.set(`${at}.id`, letter.path);
  r.put(out, "percent", `${at}.percent`, node, "cbc:Percent", "number");
  if (out.percent === undefined) out.percent = 0;
  if (exemption) {
    r.put(
      out,
      "exemption_reason_code",
      `${at}.exemption_reason_code`,
      node,
      "cbc:TaxExemptionReasonCode",
      "code",
    );
    r.put(out, "exemption_reason", `${at}.exemption_reason`, node, "cbc:TaxExemptionReason", "text");
  }
  if (found.ubl === "O") out.exemption_reason_code = NOT_SUBJECT;
  LETTERS.set(out, found.ubl);
  return out;
}

export function readAllowances(r: Reading, root: UblNode, doc: Record<string, unknown>) {
  const entries = r.all(root, "cac:AllowanceCharge").map((node, i) => {
    const at = `allowance_charge[${i}]`;
    r.sources.set(at, node.path);
    const entry: Record<string, unknown> = {};
    for (const row of ALLOWANCE.filter((row) => row.field !== "tax_category.(id, percent)")) {
      r.put(entry, row.field as string, `${at}.${row.field}`, node, row.ubl, row.kind);
    }
    entry.charge_indicator = entry.charge_indicator === "true";
    const tax = category(r, r.at(node, "cac:TaxCategory"), `${at}.tax_category`, false);
    if (tax) entry.tax_category = tax;
    return entry;
  });
  if (entries.length > 0) doc.allowance_charge = entries;
}

export function readTaxes(r: Reading, root: UblNode, doc: Record<string, unknown>) {
  const currency = doc.document_currency_code;
  const totals = r.all(root, "cac:TaxTotal");
  const own = totals.find((t) => r.peek(t, "cbc:TaxAmount")?.attrs.currencyID === currency) ?? totals[0];
  for (const other of totals) if (other !== own) other.used = false;
  // BT-111: the VAT total in the tax currency, when that is not the document's.
  const accounting = totals.find(
    (t) =>
      t !== own &&
      doc.tax_currency_code !== currency &&
      r.peek(t, "cbc:TaxAmount")?.attrs.currencyID === doc.tax_currency_code,
  );
  if (accounting) {
    accounting.used = true;
    r.put(
      doc,
      "tax_amount_in_tax_currency",
      "tax_amount_in_tax_currency",
      accounting,
      "cbc:TaxAmount",
      "amount",
    );
  }
  if (!own) return;
  r.sources.set("tax_total[0]", own.path);
  const total: Record<string, unknown> = {};
  r.put(total, "tax_amount", "tax_total[0].tax_amount", own, "cbc:TaxAmount", "amount");
  total.tax_subtotal = r.all(own, "cac:TaxSubtotal").map((node, i) => {
    const at = `tax_total[0].tax_subtotal[${i}]`;
    r.sources.set(at, node.path);
    const sub: Record<string, unknown> = {};
    r.put(sub, "taxable_amount", `${at}.taxable_amount`, node, "cbc:TaxableAmount", "amount");
    r.put(sub, "tax_amount", `${at}.tax_amount`, node, "cbc:TaxAmount", "amount");
    const tax = category(r, r.at(node, "cac:TaxCategory"), `${at}.tax_category`, true);
    if (tax) sub.tax_category = tax;
    return sub;
  });
  doc.tax_total = [total];
}

export function readTotals(r: Reading, root: UblNode, doc: Record<string, unknown>) {
  const totals = r.at(root, "cac:LegalMonetaryTotal");
  r.sources.set("legal_monetary_total", totals?.path ?? `${root.path}/cac:LegalMonetaryTotal`);
  for (const row of TOTALS_PLAIN)
    r.put(doc, row.field as string, row.field as string, totals, row.ubl, row.kind);
  for (const row of TOTALS.filter((t) => t.refuse)) {
    const node = r.at(totals, row.ubl);
    if (node && Number(node.text) !== 0)
      r.refuse(node.path, `${row.ubl} ${node.text}: ${row.refuse}`, node.text);
  }
  const entries = (doc.allowance_charge ?? []) as { charge_indicator: boolean; amount?: unknown }[];
  for (const [element, charge] of [
    ["cbc:AllowanceTotalAmount", false],
    ["cbc:ChargeTotalAmount", true],
  ] as const) {
    const node = r.at(totals, element);
    if (!node) continue;
    const sum = entries
      .filter((e) => e.charge_indicator === charge)
      .reduce((s, e) => s + (typeof e.amount === "number" ? e.amount : 0), 0);
    if (Math.abs(sum - Number(node.text)) > 0.005) {
      r.refuse(
        node.path,
        `${element} ${node.text} is not the sum of the document's ${charge ? "charges" : "allowances"}, ${sum.toFixed(2)}: this document carries the ${charge ? "charges" : "allowances"}, not their total`,
        node.text,
      );
    }
  }
}

export function readLines(r: Reading, root: UblNode, doc: Record<string, unknown>, credit: boolean) {
  const lines = r.all(root, credit ? "cac:CreditNoteLine" : "cac:InvoiceLine");
  doc.invoice_line = lines.map((node, i) => {
    const at = `invoice_line[${i}]`;
    r.sources.set(at, node.path);
    r.at(node, "cbc:ID");
    const line: Record<string, unknown> = {};
    const quantity = r.at(node, credit ? "cbc:CreditedQuantity" : "cbc:InvoicedQuantity");
    r.sources.set(`${at}.invoiced_quantity`, quantity?.path ?? `${node.path}/cbc:InvoicedQuantity`);
    if (quantity) line.invoiced_quantity = r.convert(quantity, "number");
    for (const row of LINE_PLAIN)
      r.put(line, row.field as string, `${at}.${row.field}`, node, row.ubl, row.kind);
    const unit = quantity ? r.attr(quantity, "unitCode") : undefined;
    if (
      (line.price as { price_unit?: unknown } | undefined)?.price_unit === undefined &&
      unit &&
      unit !== "C62"
    ) {
      setPath(line, "price.price_unit", unit);
    }
    readLineAllowances(r, node, line, at);
    if (quantity) readReturn(r, line, quantity);
    // The base quantity's unit is the quantity's (EN 16931 BT-150 is BT-130).
    const base = r.peek(r.peek(node, "cac:Price"), "cbc:BaseQuantity");
    if (base) r.attr(base, "unitCode");
    const item = r.peek(node, "cac:Item");
    const hs = item?.children
      .filter((c) => c.name === "cac:CommodityClassification")
      .map((c) => r.peek(c, "cbc:ItemClassificationCode"))
      .find((code) => code?.attrs.listID === "HS");
    const hsAt = `${item?.path ?? node.path}/cac:CommodityClassification/cbc:ItemClassificationCode[@listID='HS']`;
    r.sources.set(`${at}.hsn_code`, hs?.path ?? hsAt);
    r.sources.set(`${at}.product_category`, hs ? `${hs.path}/@name` : `${hsAt}/@name`);
    if (hs) {
      r.at(item, "cac:CommodityClassification");
      for (const c of item?.children ?? [])
        if (c.name === "cac:CommodityClassification" && r.peek(c, "cbc:ItemClassificationCode") === hs) {
          c.used = true;
          hs.used = true;
        }
      r.attr(hs, "listID");
      line.hsn_code = /^\d{6}$/.test(hs.text) ? `${hs.text.slice(0, 4)}.${hs.text.slice(4)}` : hs.text;
      const name = r.attr(hs, "name");
      if (name) line.product_category = name;
    }
    const tax = category(r, r.at(item, "cac:ClassifiedTaxCategory"), `${at}.tax_category`, false);
    if (tax) line.tax_category = tax;
    return line;
  });
}

/**
 * A returned item written with its quantity unsigned: a negative line amount whose quantity and
 * price, both positive, give exactly its opposite (an ERP's "RETOUR" line, 6 × 18.33 = −109.98).
 * EN 16931 holds a price positive (BR-27), so only the quantity can carry the sign: it is read as
 * negative, and said. Any other disagreement is left for the validation to report.
 */
function readReturn(r: Reading, line: Record<string, unknown>, quantity: UblNode) {
  const amount = line.line_extension_amount;
  const base = lineBase(line);
  if (typeof amount !== "number" || !base || amount >= 0) return;
  const { quantity: count, unit, per, gross } = base;
  if (per <= 0 || count <= 0 || unit < 0) return;
  const adjust = (num(line.fee_amount) ?? 0) - (num(line.discount_amount) ?? 0);
  if (Math.abs(gross + adjust - amount) < 0.005 || Math.abs(adjust - gross - amount) >= 0.005) return;
  line.invoiced_quantity = -count;
  r.warnings.push({
    path: "(ubl)",
    rule: "ubl_read_as_return",
    message: `read as a return: the quantity ${quantity.text} is taken as −${quantity.text}, the sign its line amount ${String(amount)} gives it`,
    xpath: quantity.path,
  });
}

/** A line's allowances as its discount, its charges as its fee: this document has one of each. */
function readLineAllowances(r: Reading, node: UblNode, line: Record<string, unknown>, at: string) {
  const entries = r.all(node, "cac:AllowanceCharge");
  for (const [charge, kind] of [
    [false, "discount"],
    [true, "fee"],
  ] as const) {
    const mine = entries.filter((e) => r.peek(e, "cbc:ChargeIndicator")?.text === String(charge));
    if (mine.length === 0) continue;
    let sum = 0;
    for (const entry of mine) {
      r.at(entry, "cbc:ChargeIndicator");
      const amount = r.at(entry, "cbc:Amount");
      sum += amount ? Number(amount.text) : 0;
      r.sources.set(`${at}.${kind}_amount`, amount?.path ?? entry.path);
    }
    line[`${kind}_amount`] = Math.round(sum * 1e6) / 1e6;
    const only = mine.length === 1 ? mine[0] : undefined;
    const rate = only ? r.at(only, "cbc:MultiplierFactorNumeric") : undefined;
    if (rate && rate.text !== "") {
      line[`${kind}_rate`] = Number(rate.text);
      r.sources.set(`${at}.${kind}_rate`, rate.path);
      r.at(only, "cbc:BaseAmount");
    }
  }
}
