/**
 * Invoices for the PDF fairness tests and `npm run bench:pdf-fairness`: signable documents of many
 * lines (amounts, tax and totals that add up; names as long and as varied as the PDF tests'), and a
 * business's flood of PDF requests.
 */
import assert from "node:assert/strict";
import { withLineTotals } from "../../documents/line-totals.ts";
import { lineName } from "../../documents/pdf/pdf-inputs.ts";
import { freshInvoice, type Json, type Tenant } from "../../helpers.ts";

/** The full fixture under a fresh IRN with `count` lines whose amounts, taxes and totals all add up. */
export function signableLines(who: Pick<Tenant, "business_id" | "service_id">, count: number): Json {
  const doc = freshInvoice(who, "invoice-full");
  const template = (doc.invoice_line as Json[])[0] as Json;
  const lines = Array.from({ length: count }, (_, i) => {
    const quantity = 1 + (i % 7);
    const price = 100 + i;
    return {
      ...template,
      discount_rate: 0,
      discount_amount: 0,
      fee_rate: 0,
      fee_amount: 0,
      invoiced_quantity: quantity,
      line_extension_amount: quantity * price,
      // As long as an item's name may be (300 characters).
      item: {
        name: lineName(i).slice(0, 300),
        description: `Batch ${i}, 50 kg bag`,
        sellers_item_identification: `SKU-${i}`,
      },
      price: { price_amount: price, base_quantity: 1, price_unit: "NGN per bag" },
    };
  });
  return withLineTotals(doc, lines);
}

type Injects = {
  inject(options: {
    method?: "POST";
    url: string;
    headers: Record<string, string>;
    payload?: Json;
  }): Promise<{
    statusCode: number;
    body: string;
  }>;
};

/** Signs `count` invoices of `lines` lines for `who` (the full fixture when `lines` is 0); their IRNs. */
export async function signInvoices(
  app: Injects,
  who: Tenant,
  count: number,
  lines: number,
): Promise<string[]> {
  const irns: string[] = [];
  for (let i = 0; i < count; i++) {
    const doc = lines > 0 ? signableLines(who, lines) : freshInvoice(who, "invoice-full");
    const res = await app.inject({
      method: "POST",
      url: "/api/v1/einvoice/sign",
      headers: who.headers,
      payload: doc,
    });
    assert.equal(res.statusCode, 200, res.body.slice(0, 500));
    irns.push(String(doc.irn));
  }
  return irns;
}
