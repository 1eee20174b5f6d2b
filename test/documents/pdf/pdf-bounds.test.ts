import assert from "node:assert/strict";
import { test } from "node:test";
import { jsonLength, PRINTED_CHARS, PRINTED_LISTS, printRefusal } from "../../../src/documents/pdf/bounds.ts";
import { MAX_LINES } from "../../../src/documents/schema.ts";
import { BODY_LIMIT } from "../../../src/http/limits.ts";
import type { Json } from "../../helpers.ts";
import { fullInvoice, longLines, shortLines } from "./pdf-inputs.ts";

/** The full invoice with every list the PDF prints at `most` (plus `extra`) entries. */
function withLists(extra: Partial<Record<keyof typeof PRINTED_LISTS, number>>): Json {
  const document = shortLines(MAX_LINES + (extra.invoice_line ?? 0));
  const size = (key: keyof typeof PRINTED_LISTS) => PRINTED_LISTS[key].most + (extra[key] ?? 0);
  document.allowance_charge = Array.from({ length: size("allowance_charge") }, () => ({
    charge_indicator: false,
    amount: 1,
  }));
  // Twenty tax totals of fifty subtotals each (the schema's most), the last holding any extra.
  const subtotal = {
    taxable_amount: 1,
    tax_amount: 0.08,
    tax_category: { id: "STANDARD_VAT", percent: 7.5 },
  };
  document.tax_total = Array.from({ length: 20 }, (_, i) => ({
    tax_amount: 4,
    tax_subtotal: Array.from({ length: 50 + (i === 19 ? (extra.tax_subtotal ?? 0) : 0) }, () => subtotal),
  }));
  document.payment_means = Array.from({ length: size("payment_means") }, () => ({
    payment_means_code: "30",
  }));
  return document;
}

test("the bounds are a signed invoice's: its schema's list bounds, and twice the API's request bound in characters", () => {
  assert.deepEqual(
    Object.fromEntries(Object.entries(PRINTED_LISTS).map(([key, bound]) => [key, bound.most])),
    { invoice_line: MAX_LINES, allowance_charge: 100, tax_subtotal: 20 * 50, payment_means: 20 },
  );
  assert.equal(PRINTED_CHARS, 2 * BODY_LIMIT);
});

test("what a signed invoice may hold prints; one more of anything is refused, naming the count and the bound", () => {
  assert.equal(printRefusal(fullInvoice()), undefined);
  assert.equal(printRefusal(withLists({})), undefined, "every list at its most");
  assert.equal(printRefusal(longLines(1000)), undefined, "just under the characters");
  for (const [key, words] of [
    ["invoice_line", "10,001 invoice lines; a PDF is printed with at most 10,000"],
    ["allowance_charge", "101 allowances and charges; a PDF is printed with at most 100"],
    ["tax_subtotal", "1,001 tax subtotals (tax_total[].tax_subtotal); a PDF is printed with at most 1,000"],
    ["payment_means", "21 payment means; a PDF is printed with at most 20"],
  ] as const) {
    assert.equal(
      printRefusal(withLists({ [key]: 1 })),
      `the invoice has ${words}, the most a signed invoice may have`,
    );
  }
  const huge = shortLines(100_000);
  assert.match(printRefusal(huge) ?? "", /^the invoice has 100,000 invoice lines; /);
  // Within the lists' bounds but over the characters: a note of 3 million characters, or longer lines.
  assert.match(
    printRefusal({ ...fullInvoice(), note: "x".repeat(3_000_000) }) ?? "",
    /^the invoice's document is over 2,097,152 characters of JSON; a PDF is printed from at most that/,
  );
  assert.match(printRefusal(longLines(1100)) ?? "", /over 2,097,152 characters/);
  // Whatever a document holds in place of a list, it is measured without throwing.
  for (const odd of [null, [], "text", { invoice_line: "many", tax_total: [null, { tax_subtotal: 7 }] }]) {
    assert.equal(printRefusal(odd), undefined);
  }
});

test("a document's length is JSON.stringify's, counted no further than the bound", () => {
  for (const value of [
    fullInvoice(),
    shortLines(300),
    [1.5, -0, 1e21, true, false, null, {}, [], { a: [{}] }],
  ]) {
    assert.equal(jsonLength(value, Number.POSITIVE_INFINITY), JSON.stringify(value).length);
  }
  // 100,000 lines are some 11 million characters: the count stops past the bound, having added the
  // commas between the lines at once and walked into none of them.
  const huge = shortLines(100_000);
  const counted = jsonLength(huge, 1000);
  assert.ok(counted > 1000 && counted < 1000 + 100_000 + 100, String(counted));
  assert.ok(JSON.stringify(huge).length > 10_000_000);
});
