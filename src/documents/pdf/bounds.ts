import { InvoiceDocument, MAX_LINES } from "../schema.ts";
import { field, list } from "./fields.ts";

/**
 * What a document may hold to be printed, checked before its rendering is queued: a signed invoice
 * passed the API's bounds already, but a received one is whatever the supplier or the authority
 * sent. One of 100,000 lines held the PDF thread for 10 s and grew it by 1.8 GB before it failed;
 * its copy to the thread alone held the event loop for 75–170 ms. Each bound is the most a signed invoice may
 * have, so that every invoice this service could have signed prints, and the thread's memory limit
 * (pool.ts) is sized for the largest of them.
 */

/** The largest the printed tables may be, by the signed invoice's schema (maxItems). */
const maxItems = (schema: unknown, fallback: number): number => {
  const most = (schema as { maxItems?: unknown } | undefined)?.maxItems;
  return typeof most === "number" ? most : fallback;
};
const SCHEMA = InvoiceDocument.properties;
const TAX_TOTALS = maxItems(SCHEMA.tax_total, 20);
const TAX_SUBTOTALS = maxItems(
  (SCHEMA.tax_total as unknown as { items?: { properties?: { tax_subtotal?: unknown } } }).items?.properties
    ?.tax_subtotal,
  50,
);

/** Each list the PDF prints a row for, and the most of them it prints. */
export const PRINTED_LISTS = {
  invoice_line: { what: "invoice lines", most: MAX_LINES },
  allowance_charge: { what: "allowances and charges", most: maxItems(SCHEMA.allowance_charge, 100) },
  tax_subtotal: { what: "tax subtotals (tax_total[].tax_subtotal)", most: TAX_TOTALS * TAX_SUBTOTALS },
  payment_means: { what: "payment means", most: maxItems(SCHEMA.payment_means, 20) },
} as const;

/**
 * The most characters of JSON a printed document may take: twice the API's request bound (1 MiB,
 * src/http/limits.ts, which this folder does not import). A signed invoice's body is at most 1 MiB,
 * but its stored document, written out again, can be longer: a number sent as `1e15` is written
 * with its 16 digits (about half as long again for a line of such numbers), and derived fields are
 * added. Measured in UTF-16 code units, never more than the UTF-8 bytes of the same text.
 */
export const PRINTED_CHARS = 2 * 1024 * 1024;

/** How many rows each printed list has. */
function counts(document: unknown): Record<keyof typeof PRINTED_LISTS, number> {
  let subtotals = 0;
  for (const total of list(field(document, "tax_total")))
    subtotals += list(field(total, "tax_subtotal")).length;
  return {
    invoice_line: list(field(document, "invoice_line")).length,
    allowance_charge: list(field(document, "allowance_charge")).length,
    tax_subtotal: subtotals,
    payment_means: list(field(document, "payment_means")).length,
  };
}

/**
 * The length of `value` as compact JSON, its strings counted without escapes (so never more than
 * JSON.stringify's), or the first count past `limit`: the walk stops there, so measuring a document
 * of any size costs no more than walking `limit` characters of it.
 */
export function jsonLength(value: unknown, limit: number): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= limit) {
    const next = stack.pop();
    if (typeof next === "string") total += next.length + 2;
    else if (typeof next === "number") total += Number.isFinite(next) ? String(next).length : 4;
    else if (typeof next === "boolean") total += next ? 4 : 5;
    else if (next === null) total += 4;
    else if (Array.isArray(next)) {
      // Brackets and the commas between the items.
      total += 2 + Math.max(0, next.length - 1);
      for (let i = next.length - 1; i >= 0 && total <= limit; i--) stack.push(next[i]);
    } else if (typeof next === "object") {
      const keys = Object.keys(next as object);
      total += 2 + Math.max(0, keys.length - 1);
      for (const key of keys) {
        if (total > limit) break;
        // The key in quotes and its colon.
        total += key.length + 3;
        stack.push((next as Record<string, unknown>)[key]);
      }
    }
  }
  return total;
}

/** Why `document` is too large to print, with its count and the bound; undefined when it prints. */
export function printRefusal(document: unknown): string | undefined {
  const found = counts(document);
  for (const [key, bound] of Object.entries(PRINTED_LISTS)) {
    const count = found[key as keyof typeof PRINTED_LISTS];
    if (count > bound.most) {
      return `the invoice has ${count.toLocaleString("en-US")} ${bound.what}; a PDF is printed with at most ${bound.most.toLocaleString("en-US")}, the most a signed invoice may have`;
    }
  }
  return charsRefusal(jsonLength(document, PRINTED_CHARS));
}

/**
 * Why a document of `chars` characters of JSON is too large to print; undefined when it is not. Asked
 * of a stored document's text before it is parsed: 30 MB of JSON takes a few hundred milliseconds
 * to parse, which no request may hold the event loop for.
 */
export function charsRefusal(chars: number): string | undefined {
  if (chars <= PRINTED_CHARS) return undefined;
  return `the invoice's document is over ${PRINTED_CHARS.toLocaleString("en-US")} characters of JSON; a PDF is printed from at most that (twice the API's 1 MiB request bound)`;
}
