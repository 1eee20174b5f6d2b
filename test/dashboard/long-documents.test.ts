import assert from "node:assert/strict";
import { test } from "node:test";
import { DOCUMENT_CHARS, LINE_CHARS, prettyJson } from "../../src/dashboard/document-view.ts";
import { build, fixture, freshInvoice, type Json, type Tenant, tenant } from "../helpers.ts";
import { operator } from "./operator.ts";

/*
 * An invoice's page in the dashboard, sent or received, whatever the size of its document: its lines
 * a page at a time (`?line=`), every text cut at its bound. A received document is whatever the
 * supplier sent: one of 100,000 lines made a page of 76.6 MB.
 */

const SUPPLIER = { business_id: "0b7c6f3e-1a2b-4c3d-8e9f-0a1b2c3d4e5f", service_id: "SUPP1234" };
const PAGE_BOUND = 1024 * 1024;

/** The positions of the lines a page shows, in order. */
const shownLines = (page: string) => [...page.matchAll(/<tr id="line-(\d+)">/g)].map((m) => Number(m[1]));

/** The href of the pager's link `rel`, unescaped; undefined when there is none. */
const pagerLink = (page: string, rel: string) =>
  new RegExp(`<a rel="${rel}" href="([^"]+)"`).exec(page)?.[1]?.replaceAll("&amp;", "&");

const bytes = (page: string) => Buffer.byteLength(page, "utf8");

test("a received invoice of 100,000 lines: its page is under 1 MB, 100 lines at a time with links to the others, and says why there is no PDF", {
  timeout: 120_000,
}, async (t) => {
  const { app, ctx } = await build(t);
  const buyer = await tenant(ctx, { tin: "31845560-0001" });
  const doc = freshInvoice(SUPPLIER);
  doc.accounting_customer_party = { ...(doc.accounting_customer_party as Json), tin: buyer.tin };
  const line = (doc.invoice_line as Json[])[0] as Json;
  doc.invoice_line = Array.from({ length: 100_000 }, (_, i) => ({
    ...line,
    item: { name: `Item ${i + 1}` },
  }));
  // A text of a megabyte in the document and in one line: each cut at its bound, and said so.
  doc.order_reference = `ORDER ${"<&>".repeat(400_000)}`;
  ((doc.invoice_line as Json[])[149] as Json).item = { name: "Item 150", description: '"'.repeat(1 << 20) };
  const receipt = await ctx.inbox.receive([{ document: doc }], "mbs", "test");
  assert.equal(receipt.stored.length, 1, JSON.stringify(receipt));
  const { get } = await operator(app, ctx);
  const at = `/dashboard/businesses/${buyer.business_id}/inbox/${encodeURIComponent(String(doc.irn))}`;

  const first = await get(at);
  assert.equal(first.statusCode, 200, first.body.slice(0, 500));
  assert.ok(bytes(first.body) < PAGE_BOUND, `${bytes(first.body)} bytes`);
  assert.match(first.body, /<p class="muted" id="lines-range">Lines 1–100 of 100,000<\/p>/);
  assert.deepEqual(
    shownLines(first.body),
    Array.from({ length: 100 }, (_, i) => i + 1),
  );
  assert.ok(first.body.includes("&quot;name&quot;: &quot;Item 100&quot;"));
  assert.ok(!first.body.includes("Item 101&quot;"), "line 101 is on the next page");
  assert.equal(pagerLink(first.body, "prev"), undefined, "nothing before the first page");
  assert.equal(pagerLink(first.body, "next"), `${at}?line=101#lines`);
  assert.equal(pagerLink(first.body, "last"), `${at}?line=99901#lines`);
  // The rest of the document is shown, cut: its order reference is longer than the page holds.
  assert.match(
    first.body,
    /<pre class="document">[\s\S]*&quot;order_reference&quot;: &quot;ORDER &lt;&amp;&gt;/,
  );
  assert.match(first.body, /… \(cut here: longer than the page shows\)<\/span><\/pre>/);
  // The PDF would be refused (too many lines): the page says so instead of offering it.
  assert.match(
    first.body,
    /id="pdf-refused">Not printed: the invoice has 100,000 invoice lines; a PDF is printed with at most 10,000/,
  );
  const pdf = await get(`${at}/pdf`);
  assert.equal(pdf.statusCode, 422);
  assert.match(pdf.body, /Invoice too large to print/);

  // Page 2: the next hundred, its long line cut at the bound of one line.
  const second = await get(pagerLink(first.body, "next") as string);
  assert.equal(second.statusCode, 200);
  assert.ok(bytes(second.body) < PAGE_BOUND, `${bytes(second.body)} bytes`);
  t.diagnostic(`pages of ${bytes(first.body)} and ${bytes(second.body)} bytes`);
  assert.match(second.body, /id="lines-range">Lines 101–200 of 100,000</);
  assert.deepEqual(
    shownLines(second.body),
    Array.from({ length: 100 }, (_, i) => i + 101),
  );
  assert.ok(second.body.includes("&quot;name&quot;: &quot;Item 101&quot;"));
  assert.ok(second.body.includes("&quot;name&quot;: &quot;Item 200&quot;"));
  const long = /<tr id="line-150">[\s\S]*?<\/tr>/.exec(second.body)?.[0] ?? "";
  assert.ok(long.length > LINE_CHARS && long.length < LINE_CHARS + 300, `${long.length} characters`);
  assert.match(long, /cut here/);
  assert.equal(pagerLink(second.body, "prev"), `${at}?line=1#lines`);
  assert.equal(pagerLink(second.body, "next"), `${at}?line=201#lines`);

  // The last page; past it, the last page again; not a line number, refused.
  const last = await get(pagerLink(first.body, "last") as string);
  assert.deepEqual(shownLines(last.body).slice(-1), [100_000]);
  assert.equal(pagerLink(last.body, "next"), undefined, "nothing after the last page");
  assert.deepEqual(shownLines((await get(`${at}?line=5000000`)).body), shownLines(last.body));
  assert.equal((await get(`${at}?line=0`)).statusCode, 400);
  assert.equal((await get(`${at}?line=two`)).statusCode, 400);
});

test("a signed invoice's page pages its lines the same way; a short document is shown whole, as JSON.stringify writes it", async (t) => {
  const { app, ctx } = await build(t);
  const seller: Tenant = await tenant(ctx);
  // 250 lines that add up: quantity 1 at 100 each, VAT 7.5%.
  const doc = freshInvoice(seller, "invoice-minimal");
  const line = (doc.invoice_line as Json[])[0] as Json;
  doc.invoice_line = Array.from({ length: 250 }, (_, i) => ({
    ...line,
    invoiced_quantity: 1,
    line_extension_amount: 100,
    price: { price_amount: 100 },
    item: { ...(line.item as Json), name: `Item ${i + 1}` },
  }));
  const [total, tax] = [25_000, 1875];
  doc.legal_monetary_total = {
    line_extension_amount: total,
    tax_exclusive_amount: total,
    tax_inclusive_amount: total + tax,
    payable_amount: total + tax,
  };
  doc.tax_total = [
    {
      tax_amount: tax,
      tax_subtotal: [
        { taxable_amount: total, tax_amount: tax, tax_category: { id: "STANDARD_VAT", percent: 7.5 } },
      ],
    },
  ];
  const signed = await app.inject({
    method: "POST",
    url: "/api/v1/einvoice/sign",
    headers: seller.headers,
    payload: doc,
  });
  assert.equal(signed.statusCode, 200, signed.body);
  const { get } = await operator(app, ctx);
  const at = `/dashboard/invoices/${encodeURIComponent(String(doc.irn))}`;
  const first = await get(at);
  assert.equal(first.statusCode, 200);
  assert.match(first.body, /id="lines-range">Lines 1–100 of 250</);
  assert.equal(pagerLink(first.body, "next"), `${at}?line=101#lines`);
  const third = await get(`${at}?line=201`);
  assert.match(third.body, /id="lines-range">Lines 201–250 of 250</);
  assert.deepEqual(
    shownLines(third.body),
    Array.from({ length: 50 }, (_, i) => i + 201),
  );
  assert.ok(third.body.includes("&quot;name&quot;: &quot;Item 250&quot;"));
  assert.equal(pagerLink(third.body, "next"), undefined);
  assert.equal(pagerLink(third.body, "prev"), `${at}?line=101#lines`);

  // Within its bounds a document is shown whole, exactly as JSON.stringify(value, null, 2) writes it.
  const full = fixture("invoice-full", seller);
  for (const value of [full, { ...full, invoice_line: [] }, [], {}, [[], {}, null, 1.5, '\u202e"<']]) {
    assert.deepEqual(prettyJson(value, DOCUMENT_CHARS), { text: JSON.stringify(value, null, 2), cut: false });
  }
  const whole = JSON.stringify(full, null, 2);
  assert.deepEqual(prettyJson(full, 100), { text: whole.slice(0, 100), cut: true });
});
