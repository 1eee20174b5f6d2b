type Line = Record<string, unknown> & { line_extension_amount: number };

/**
 * The full sample invoice `doc` with `lines` in place of its own, and the VAT total and totals they
 * give: the fixture's document allowance (2,500) and charge (5,000) kept, every line at
 * STANDARD_VAT 7.5%. For documents of many lines whose amounts all add up.
 */
export function withLineTotals<T extends Record<string, unknown>>(doc: T, lines: Line[]): T {
  const lineTotal = lines.reduce((sum, line) => sum + line.line_extension_amount, 0);
  const taxable = lineTotal - 2500 + 5000;
  const tax = Math.round(taxable * 7.5) / 100;
  return {
    ...doc,
    invoice_line: lines,
    tax_total: [
      {
        tax_amount: tax,
        tax_subtotal: [
          { taxable_amount: taxable, tax_amount: tax, tax_category: { id: "STANDARD_VAT", percent: 7.5 } },
        ],
      },
    ],
    legal_monetary_total: {
      line_extension_amount: lineTotal,
      tax_exclusive_amount: taxable,
      tax_inclusive_amount: taxable + tax,
      payable_amount: taxable + tax,
    },
  };
}
