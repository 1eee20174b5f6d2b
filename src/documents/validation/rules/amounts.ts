import { currencyDigits, denoise } from "../../money.ts";
import { entries, isObject } from "./types.ts";

const TOTALS = ["line_extension_amount", "tax_exclusive_amount", "tax_inclusive_amount", "payable_amount"];
const LINE_AMOUNTS = ["line_extension_amount", "discount_amount", "fee_amount"];

/**
 * Every amount of a document in the document currency, with its path: the totals, allowances and
 * charges, taxes, and line amounts. Unit prices (`price.price_amount`) are not among them: a fraction
 * of a kobo per unit is legitimate, so they keep their own precision.
 */
export function amountsOf(doc: Record<string, unknown>): [Record<string, unknown>, string, string][] {
  const out: [Record<string, unknown>, string, string][] = [];
  const add = (holder: Record<string, unknown>, fields: readonly string[], at: string) => {
    for (const field of fields) if (field in holder) out.push([holder, field, `${at}${field}`]);
  };
  if (isObject(doc.legal_monetary_total)) add(doc.legal_monetary_total, TOTALS, "legal_monetary_total.");
  for (const [entry, at] of entries(doc.allowance_charge, "allowance_charge"))
    add(entry, ["amount"], `${at}.`);
  for (const [total, at] of entries(doc.tax_total, "tax_total")) {
    add(total, ["tax_amount"], `${at}.`);
    for (const [sub, subAt] of entries(total.tax_subtotal, `${at}.tax_subtotal`))
      add(sub, ["taxable_amount", "tax_amount"], `${subAt}.`);
  }
  for (const [line, at] of entries(doc.invoice_line, "invoice_line")) add(line, LINE_AMOUNTS, `${at}.`);
  return out;
}

/**
 * The document as the service reads, checks and stores it: what a client wrote, with the spelling of
 * a computer taken out. `business_id` in its canonical lower case (UUIDs compare case-insensitively,
 * RFC 9562), and amounts that differ from their value in the currency's digits only by floating-point
 * noise written as that value (`5101112.8100000005` → 5101112.81). Nothing else changes; a value with
 * real extra decimals stays as written, for the precision rule to report. The submitted object is not
 * modified: the objects on the way to a changed value are copied.
 */
export function normalizeDocument(body: Record<string, unknown>): Record<string, unknown> {
  const places = currencyDigits(body.document_currency_code);
  const copies = new Map<object, Record<string, unknown>>();
  const doc: Record<string, unknown> = { ...body };
  copies.set(body, doc);
  if (typeof doc.business_id === "string") doc.business_id = doc.business_id.toLowerCase();

  // Copy-on-write along a path: the submitted document may be a request body that is logged or
  // replayed, and most documents need no change at all.
  const writable = (path: (string | number)[]): Record<string, unknown> => {
    let node: unknown = doc;
    for (const step of path) {
      const parent = node as Record<string | number, unknown>;
      const child = parent[step] as object;
      let copy = copies.get(child);
      if (!copy) {
        copy = (Array.isArray(child) ? [...child] : { ...child }) as Record<string, unknown>;
        copies.set(child, copy);
        copies.set(copy, copy);
        parent[step] = copy;
      }
      node = copy;
    }
    return node as Record<string, unknown>;
  };

  for (const [holder, field, path] of amountsOf(body)) {
    const value = holder[field];
    if (typeof value !== "number" || !Number.isFinite(value)) continue;
    const meant = denoise(value, places);
    if (meant === value && !Object.is(value, -0)) continue;
    const steps = path
      .replace(/\[(\d+)\]/g, ".$1")
      .split(".")
      .map((step) => (/^\d+$/.test(step) ? Number(step) : step));
    writable(steps.slice(0, -1))[field] = meant;
  }
  return doc;
}
