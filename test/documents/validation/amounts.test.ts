import assert from "node:assert/strict";
import { test } from "node:test";
import { agrees, denoise, hasExtraDecimals, roundings } from "../../../src/documents/money.ts";
import { normalizeDocument } from "../../../src/documents/validation/rules/amounts.ts";
import { validateInvoice } from "../../../src/documents/validation/validation.ts";
import { build, fixture, type Json, tenant } from "../../helpers.ts";

const WHO = { business_id: "5b7d3d2e-8f7a-4c1e-9b1a-2f8e6c4d1a00", service_id: "AB12CD34" };
const CTX = { business: { id: WHO.business_id, service_id: WHO.service_id } };
const API = "/api/v1/einvoice";

const pairs = (found: { rule: string; path: string }[]) => found.map((v) => `${v.rule} @ ${v.path}`);

test("float noise is the value it stands for; real extra decimals are not noise", () => {
  // What real ERPs sent, and what they meant.
  assert.equal(denoise(5101112.8100000005, 2), 5101112.81);
  assert.equal(denoise(246115.91999999998, 2), 246115.92);
  assert.equal(denoise(0.1 + 0.2, 2), 0.3);
  assert.equal(denoise(-2.7755575615628914e-17, 2), 0);
  assert.ok(Object.is(denoise(-0, 2), 0));
  // Real decimals stay, whatever their size.
  assert.equal(denoise(954494.6822500001, 2), 954494.6822500001);
  assert.equal(denoise(92.5875, 2), 92.5875);
  assert.equal(denoise(1e-7, 2), 1e-7);
  assert.ok(hasExtraDecimals(92.5875, 2));
  assert.ok(!hasExtraDecimals(5101112.8100000005, 2));
  // Currencies with other minor units: yen have none, dinars three.
  assert.equal(denoise(1500.0000000000002, 0), 1500);
  assert.ok(hasExtraDecimals(1500.5, 0));
  assert.equal(denoise(12.345000000000001, 3), 12.345);
  assert.ok(!hasExtraDecimals(12.345, 3));
});

test("a declared amount agrees when it is a rounding of the expected one, never when a kobo off", () => {
  // 0.285 rounds to 0.28 or 0.29, whichever way the client rounds halves.
  assert.ok(agrees([0.285], 0.29, 2));
  assert.ok(agrees([0.285], 0.28, 2));
  assert.ok(!agrees([0.285], 0.3, 2));
  assert.ok(!agrees([0.285], 0.27, 2));
  // Exact values: a kobo either way is wrong.
  assert.ok(agrees([693375], 693375, 2));
  assert.ok(!agrees([693375], 693375.01, 2));
  assert.ok(!agrees([693375], 693374.99, 2));
  // Unrounded declared values are held to the formula itself.
  assert.ok(agrees([446813.709], 446813.709, 2));
  assert.ok(!agrees([446813.709], 446813.719, 2));
  // Noise on either side is nothing.
  assert.ok(agrees([5101112.81], 5101112.8100000005, 2));
  // A second candidate (the terms rounded first) is also a correct computation.
  assert.ok(agrees([0.57, 0.58], 0.58, 2));
  // Near the float limit nothing overflows into a pass.
  assert.ok(!agrees([1e308], 1.7e308, 2));
});

test("normalizeDocument: noise out, business_id lower-cased, the submitted object untouched", () => {
  const sent = fixture("invoice-full", WHO);
  sent.business_id = WHO.business_id.toUpperCase();
  const lines = sent.invoice_line as Json[];
  (lines[0] as Json).line_extension_amount = 617500.0000000001;
  (sent.legal_monetary_total as Json).payable_amount = 693374.9999999999;
  (lines[1] as Json).fee_amount = -1e-17;
  const copy = structuredClone(sent);
  const doc = normalizeDocument(sent);
  assert.deepEqual(sent, copy, "the submitted document is not modified");
  assert.equal(doc.business_id, WHO.business_id);
  assert.equal(((doc.invoice_line as Json[])[0] as Json).line_extension_amount, 617500);
  assert.equal(((doc.invoice_line as Json[])[1] as Json).fee_amount, 0);
  assert.equal((doc.legal_monetary_total as Json).payable_amount, 693375);
  // Unit prices keep their precision; unchanged parts are shared, not copied.
  assert.equal(doc.accounting_supplier_party, sent.accounting_supplier_party);
  // A document with nothing to change is equal to what was sent.
  assert.deepEqual(normalizeDocument(fixture("invoice-full", WHO)), fixture("invoice-full", WHO));
});

test("validate: noise is never reported; real extra decimals are a warning with the value read", () => {
  const doc = fixture("invoice-full", WHO);
  (doc.tax_total as Json[])[0] = {
    tax_amount: 48375.00000000001,
    tax_subtotal: [
      {
        taxable_amount: 644999.9999999999,
        tax_amount: 48375,
        tax_category: { id: "STANDARD_VAT", percent: 7.5 },
      },
    ],
  };
  const clean = validateInvoice(doc, CTX);
  assert.deepEqual([clean.errors, clean.warnings], [[], []]);

  (doc.allowance_charge as Json[])[0] = { charge_indicator: false, amount: 2500.0049 };
  const { errors, warnings } = validateInvoice(doc, CTX);
  assert.deepEqual(errors, []);
  assert.deepEqual(pairs(warnings), ["precision @ allowance_charge[0].amount"]);
  assert.equal(warnings[0]?.expected, 2500);
  assert.equal(warnings[0]?.actual, 2500.0049);
  assert.match(warnings[0]?.message ?? "", /read as 2500/);
});

test("validate: a total off by one kobo is still an error, noise or not", () => {
  for (const payable of [693375.01, 693374.99, 693375.0100000001]) {
    const doc = fixture("invoice-full", WHO);
    (doc.legal_monetary_total as Json).payable_amount = payable;
    const { errors } = validateInvoice(doc, CTX);
    assert.deepEqual(pairs(errors), ["total_payable @ legal_monetary_total.payable_amount"], String(payable));
  }
});

test("rates apply: a discount_rate or fee_rate without its amount is the line's discount or fee", () => {
  // The reported case: 2 × 235165.11 less 5 % is 446813.709.
  const doc = fixture("invoice-minimal", WHO);
  const line = (doc.invoice_line as Json[])[0] as Json;
  Object.assign(line, { invoiced_quantity: 2, discount_rate: 5, line_extension_amount: 446813.709 });
  (line.price as Json).price_amount = 235165.11;
  Object.assign(doc.legal_monetary_total as Json, {
    line_extension_amount: 446813.709,
    tax_exclusive_amount: 446813.709,
    tax_inclusive_amount: 446813.709 + 33511.028175,
    payable_amount: 446813.709 + 33511.028175,
  });
  (doc.tax_total as Json[])[0] = {
    tax_amount: 33511.028175,
    tax_subtotal: [
      {
        taxable_amount: 446813.709,
        tax_amount: 33511.028175,
        tax_category: { id: "STANDARD_VAT", percent: 7.5 },
      },
    ],
  };
  const { errors, warnings } = validateInvoice(doc, CTX);
  assert.deepEqual(errors, []);
  assert.ok(warnings.every((w) => w.rule === "precision"));

  // A fee by rate adds; an amount given with a rate that says otherwise is a warning naming both.
  line.fee_rate = 1;
  const withFee = validateInvoice(doc, CTX);
  const finding = withFee.errors.find((e) => e.rule === "line_amount");
  assert.equal(finding?.expected, 451517.01); // 470330.22 − 23516.511 + 4703.3022
  assert.ok(finding?.related?.includes("invoice_line[0].fee_rate"));
  delete line.fee_rate;
  line.discount_amount = 20000;
  line.line_extension_amount = 450330.22;
  const disagreeing = validateInvoice(doc, CTX);
  const warning = disagreeing.warnings.find((w) => w.rule === "discount_rate");
  assert.equal(warning?.path, "invoice_line[0].discount_amount");
  assert.equal(warning?.expected, 23516.51);
  assert.match(warning?.message ?? "", /discount_amount 20000 is not discount_rate 5% of 470330.22/);
  assert.ok(warning?.related?.includes("invoice_line[0].discount_rate"));
  // The amount is the one used: the line with 20000 off adds up, so no line error.
  assert.ok(!disagreeing.errors.some((e) => e.path === "invoice_line[0].line_extension_amount"));
});

test("a discount or fee that is a tie may be rounded either way before the line subtracts it", () => {
  // 7.5 % of 540458857.80 is 40534414.335, 1 % is 5404588.578: an ERP that rounds the binary value
  // (toFixed, Math.round(v * 100) / 100) takes 40534414.33 off, one that rounds halves up .34.
  assert.deepEqual(roundings(40534414.335, 2), [40534414.33, 40534414.34]);
  assert.deepEqual(roundings(-0.125, 2), [-0.12, -0.13]);
  assert.deepEqual(roundings(5404588.578, 2), [5404588.58]);
  assert.deepEqual(roundings(0.1 + 0.2, 2), [0.3]);
  const doc = fixture("invoice-minimal", WHO);
  const line = (doc.invoice_line as Json[])[0] as Json;
  Object.assign(line, { invoiced_quantity: 909, discount_rate: 7.5, fee_rate: 1 });
  (line.price as Json).price_amount = 594564.2;
  const declare = (amount: number) => {
    line.line_extension_amount = amount;
    const tax = Number(((amount * 7.5) / 100).toFixed(2));
    Object.assign(doc.legal_monetary_total as Json, {
      line_extension_amount: amount,
      tax_exclusive_amount: amount,
      tax_inclusive_amount: amount + tax,
      payable_amount: amount + tax,
    });
    (doc.tax_total as Json[])[0] = {
      tax_amount: tax,
      tax_subtotal: [
        { taxable_amount: amount, tax_amount: tax, tax_category: { id: "STANDARD_VAT", percent: 7.5 } },
      ],
    };
    return pairs(validateInvoice(doc, CTX).errors);
  };
  assert.deepEqual(declare(505329032.04), []); // .34 off, or nothing rounded
  assert.deepEqual(declare(505329032.05), []); // .33 off
  assert.deepEqual(declare(505329032.06), ["line_amount @ invoice_line[0].line_extension_amount"]);
  assert.deepEqual(declare(505329032.03), ["line_amount @ invoice_line[0].line_extension_amount"]);
});

test("business_id in any letter case: validate, sign, irn/validate and batch; stored in lower case", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  const upper = who.business_id.toUpperCase();
  const doc = fixture("invoice-full", who);
  doc.business_id = upper;
  const post = (url: string, payload: unknown) =>
    app.inject({ method: "POST", url: `${API}/${url}`, headers: who.headers, payload: payload as Json });

  const irnCheck = await post("irn/validate", { irn: doc.irn, business_id: upper });
  assert.equal(irnCheck.statusCode, 200, irnCheck.body);
  assert.equal((await post("validate", doc)).statusCode, 200);
  const signed = await post("sign", doc);
  assert.equal(signed.statusCode, 200, signed.body);
  const record = await app.inject({ url: `${API}/${doc.irn}`, headers: who.headers });
  const data = (record.json() as { data: { business_id: string; document: Json } }).data;
  assert.equal(data.business_id, who.business_id);
  assert.equal(data.document.business_id, who.business_id);

  const second: Json = { ...fixture("invoice-minimal", who), business_id: upper };
  second.irn = String(second.irn).replace(/^[A-Z0-9]+-/, "MIXED1-");
  const batch = await post("batch/sign", { invoices: [second] });
  assert.equal(batch.statusCode, 200, batch.body);
  assert.equal((batch.json() as { data: { status: string }[] }).data[0]?.status, "signed");

  // Another business's id stays another business's, in any case.
  const other = await tenant(ctx);
  const foreign = await post("irn/validate", { irn: doc.irn, business_id: other.business_id.toUpperCase() });
  assert.equal(foreign.statusCode, 400);
});

test("IRNs are matched exactly: the invoice number's letter case is part of the IRN", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  const doc = fixture("invoice-full", who);
  doc.irn = `inv77a-${who.service_id}-20261115`;
  const signed = await app.inject({ method: "POST", url: `${API}/sign`, headers: who.headers, payload: doc });
  assert.equal(signed.statusCode, 200, signed.body);
  const exact = await app.inject({ url: `${API}/lookup/${doc.irn}`, headers: who.headers });
  assert.equal(exact.statusCode, 200);
  const shouted = await app.inject({
    url: `${API}/lookup/${String(doc.irn).toUpperCase()}`,
    headers: who.headers,
  });
  assert.equal(shouted.statusCode, 404);
  // A second invoice whose number differs only in case is another invoice.
  const other = { ...fixture("invoice-full", who), irn: `INV77A-${who.service_id}-20261115` };
  const again = await app.inject({
    method: "POST",
    url: `${API}/sign`,
    headers: who.headers,
    payload: other,
  });
  assert.equal(again.statusCode, 200, again.body);
});
