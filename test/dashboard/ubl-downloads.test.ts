import assert from "node:assert/strict";
import { test } from "node:test";
import { build, freshInvoice, tenant } from "../helpers.ts";
import { operator } from "./operator.ts";

test("the dashboard offers a signed invoice, and one a business received, as UBL 2.1 downloads beside the PDF", async (t) => {
  const { app, ctx } = await build(t);
  const seller = await tenant(ctx);
  const buyer = await tenant(ctx, { tin: "31845560-0001" });
  const invoice = freshInvoice(seller);
  const irn = String(invoice.irn);
  const signed = await app.inject({
    method: "POST",
    url: "/api/v1/einvoice/sign",
    headers: seller.headers,
    payload: invoice,
  });
  assert.equal(signed.statusCode, 200, signed.body);
  const browser = await operator(app, ctx);

  const page = await browser.get(`/dashboard/invoices/${irn}`);
  assert.equal(page.statusCode, 200);
  assert.match(page.body, new RegExp(`<a id="ubl" href="/dashboard/invoices/${irn}/xml">`));
  const xml = await browser.get(`/dashboard/invoices/${irn}/xml`);
  assert.equal(xml.statusCode, 200, xml.body);
  assert.match(String(xml.headers["content-type"]), /^application\/xml/);
  assert.match(String(xml.headers["content-disposition"]), new RegExp(`attachment; filename="${irn}.xml"`));
  assert.match(xml.body, new RegExp(`<cbc:ID>${irn}</cbc:ID>`));

  // The same document received from the authority by the business it names as buyer.
  const receipt = await ctx.inbox.receive([{ document: invoice }], "mbs", "test");
  assert.equal(receipt.stored.length, 1, JSON.stringify(receipt));
  const received = `/dashboard/businesses/${buyer.business_id}/inbox/${irn}`;
  const inboxPage = await browser.get(received);
  assert.equal(inboxPage.statusCode, 200, inboxPage.body);
  assert.match(inboxPage.body, new RegExp(`<a id="ubl" href="${received}/xml">`));
  const receivedXml = await browser.get(`${received}/xml`);
  assert.equal(receivedXml.statusCode, 200, receivedXml.body);
  assert.match(receivedXml.body, /<cbc:InvoiceTypeCode>380<\/cbc:InvoiceTypeCode>/);

  // Signed out, neither is served.
  const anonymous = await app.inject({ url: `/dashboard/invoices/${irn}/xml` });
  assert.equal(anonymous.statusCode, 303);
});
