import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import type { Violation } from "../../../src/errors.ts";
import { build, fixture, HS_CSV, ISO_TIMESTAMP, type Json, tenant } from "../../helpers.ts";

const API = "/api/v1/einvoice";

function expectInvalid(res: { statusCode: number; json(): Json }) {
  assert.equal(res.statusCode, 400);
  const body = res.json() as {
    status: boolean;
    code: number;
    message: string;
    data: null;
    timestamp: string;
    error: Json;
  };
  assert.equal(body.status, false);
  assert.equal(body.code, 400);
  assert.equal(body.message, "Failed to validate invoice");
  assert.equal(body.data, null);
  assert.match(body.timestamp, ISO_TIMESTAMP);
  for (const key of ["id", "handler", "details", "public_message"])
    assert.equal(typeof body.error[key], "string", key);
  return { details: body.error.details as string, violations: body.error.violations as Violation[] };
}

const paths = (violations: Violation[]) => violations.map((v) => v.path);

test("several mistakes are reported at once, each with its field path", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = fixture("invoice-full", a) as Json & {
    invoice_line: Json[];
    accounting_supplier_party: Json;
  };
  invoice.issue_date = "2026-02-30";
  invoice.document_currency_code = "XXX";
  invoice.invoice_type_code = "999";
  (invoice.invoice_line[1] as Json).invoiced_quantity = "25";
  invoice.accounting_supplier_party.tin = "20198222";
  invoice.accounting_supplier_party.telephone = "08031234567";
  delete invoice.legal_monetary_total;

  for (const path of ["validate", "sign", "sign-transmit"]) {
    const { details, violations } = expectInvalid(
      await app.inject({ method: "POST", url: `${API}/${path}`, headers: a.headers, payload: invoice }),
    );
    const found = paths(violations);
    for (const expected of [
      "issue_date",
      "document_currency_code",
      "invoice_type_code",
      "invoice_line[1].invoiced_quantity",
      "accounting_supplier_party.tin",
      "accounting_supplier_party.telephone",
      "legal_monetary_total",
    ]) {
      assert.ok(
        found.includes(expected),
        `${path}: expected a violation at ${expected}, got ${found.join(", ")}`,
      );
    }
    assert.match(
      details,
      /issue_date|document_currency_code|invoice_type_code|invoice_line|accounting_supplier_party|legal_monetary_total/,
    );
  }
  // Nothing invalid was stored.
  const lookup = await app.inject({ url: `${API}/lookup/${String(invoice.irn)}`, headers: a.headers });
  assert.equal(lookup.statusCode, 404);
});

test("a numeric string is not a number and a date must be a real calendar date", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = fixture("invoice-minimal", a) as Json & { legal_monetary_total: Json };
  invoice.legal_monetary_total.payable_amount = "13975";
  invoice.due_date = "2026-13-01";
  invoice.issue_time = "25:00:00";
  const { violations } = expectInvalid(
    await app.inject({ method: "POST", url: `${API}/validate`, headers: a.headers, payload: invoice }),
  );
  const byPath = new Map(violations.map((v) => [v.path, v]));
  assert.match(byPath.get("legal_monetary_total.payable_amount")?.message ?? "", /number/);
  assert.match(byPath.get("due_date")?.message ?? "", /calendar date/);
  assert.match(byPath.get("issue_time")?.message ?? "", /HH:MM:SS/);
});

test("code lists: LGA must belong to its state, invoice_kind is B2B, B2C or B2G", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = fixture("invoice-minimal", a) as Json & {
    accounting_customer_party: { postal_address: Json };
  };
  invoice.accounting_customer_party.postal_address.state = "NG-LA";
  invoice.invoice_kind = "B2X";
  invoice.tax_total = [
    {
      tax_amount: 975,
      tax_subtotal: [{ taxable_amount: 13000, tax_amount: 975, tax_category: { id: "VAT", percent: 7.5 } }],
    },
  ];
  const { violations } = expectInvalid(
    await app.inject({ method: "POST", url: `${API}/validate`, headers: a.headers, payload: invoice }),
  );
  const lga = violations.find((v) => v.path === "accounting_customer_party.postal_address.lga");
  assert.equal(lga?.rule, "lga_in_state");
  assert.match(lga?.message ?? "", /NG-AB-ASO.*NG-AB.*NG-LA/);
  assert.ok(paths(violations).includes("invoice_kind"));
  assert.ok(paths(violations).includes("tax_total[0].tax_subtotal[0].tax_category.id"));
});

test("the IRN must fit the business's template", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const cases: [string, RegExp][] = [
    [`INV0001-ABCDEFGH-20261116`, /service id/],
    [`INV_0001-${a.service_id}-20261115`, /must look like/],
    [`INV0001-${a.service_id}-20260230`, /not a real calendar date/],
  ];
  for (const [irn, reason] of cases) {
    const invoice = { ...fixture("invoice-full", a), irn };
    const { violations } = expectInvalid(
      await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: invoice }),
    );
    const v = violations.find((x) => x.path === "irn");
    assert.ok(v, `no irn violation for ${irn}`);
    assert.match(v.message, reason, irn);
  }
});

test("an unknown business is refused with details saying it does not exist", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = { ...fixture("invoice-full", a), business_id: randomUUID() };
  const { details, violations } = expectInvalid(
    await app.inject({ method: "POST", url: `${API}/validate`, headers: a.headers, payload: invoice }),
  );
  assert.match(details, /does not exist/);
  assert.equal(violations[0]?.path, "business_id");
});

test("a body that is not an invoice object is a 400 envelope, never a 500", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  for (const payload of ["[]", "42", '"text"', "null", "{}", '{"invoice_line": "x"}']) {
    const res = await app.inject({
      method: "POST",
      url: `${API}/sign`,
      headers: { ...a.headers, "content-type": "application/json" },
      payload,
    });
    assert.equal(res.statusCode, 400, payload);
    assert.equal(res.json().message, "Failed to validate invoice");
  }
});

test("irn/validate: a fresh IRN is ok; wrong template, other business and used IRNs are refused", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const b = await tenant(ctx);
  const call = (payload: Json, who = a) =>
    app.inject({ method: "POST", url: `${API}/irn/validate`, headers: who.headers, payload });

  const ok = await call({ irn: `INV0009-${a.service_id}-20261115`, business_id: a.business_id });
  assert.equal(ok.statusCode, 200);
  assert.deepEqual(ok.json(), { code: 200, data: { ok: true } });

  await app.inject({
    method: "POST",
    url: `${API}/sign`,
    headers: a.headers,
    payload: fixture("invoice-full", a),
  });
  const failures: [Json, RegExp][] = [
    [{ irn: `INV0001-${a.service_id}-20261115`, business_id: a.business_id }, /already registered/],
    [{ irn: `INV0009-${b.service_id}-20261115`, business_id: a.business_id }, /service id/],
    [{ irn: `INV0009-${a.service_id}-20261131`, business_id: a.business_id }, /calendar date/],
    [{ irn: "INV0009", business_id: a.business_id }, /must look like/],
    [{ irn: `INV0009-${a.service_id}-20261115`, business_id: b.business_id }, /does not exist/],
  ];
  for (const [payload, reason] of failures) {
    const res = await call(payload);
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    const body = res.json();
    assert.equal(body.status, false);
    assert.equal(body.code, 400);
    assert.equal(body.message, "error has occurred");
    assert.equal(body.data, null);
    assert.deepEqual(Object.keys(body.error).sort(), ["details", "handler", "id", "public_message"]);
    assert.match(body.error.details, /IRN validation failed for business/);
    assert.match(body.error.details, reason);
    assert.match(body.error.public_message, /duplicate/);
  }
  const missing = await call({ irn: "X" });
  assert.equal(missing.statusCode, 400);
  assert.equal(missing.json().message, "error has occurred");
  assert.match(missing.json().error.details, /business_id/);
});

test("report-fiscalization: the IRN must be the caller's, amounts numeric text, codes known", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const report = fixture("report-fiscalization", a);
  const unknown = await app.inject({
    method: "POST",
    url: `${API}/report-fiscalization`,
    headers: a.headers,
    payload: report,
  });
  assert.equal(unknown.statusCode, 400);
  assert.equal(unknown.json().message, "Failed to submit report");
  assert.match(unknown.json().error.details, /not registered/);

  const wrongTypes = await app.inject({
    method: "POST",
    url: `${API}/report-fiscalization`,
    headers: a.headers,
    payload: {
      ...report,
      base_amount: 645000,
      vat_rate: "seven",
      transaction_date: "2026-11-31",
      vat_status: "VAT",
    },
  });
  assert.equal(wrongTypes.statusCode, 400);
  const violations = wrongTypes.json().error.violations as Violation[];
  for (const p of ["base_amount", "vat_rate", "transaction_date"])
    assert.ok(paths(violations).includes(p), p);
});

test("arithmetic violations carry the expected and declared values and the fields they came from", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = fixture("invoice-full", a) as Json & {
    invoice_line: Json[];
    tax_total: { tax_subtotal: Json[] }[];
  };
  (invoice.invoice_line[0] as Json).line_extension_amount = 600000;
  (
    (invoice.tax_total[0] as { tax_subtotal: Json[] }).tax_subtotal[0] as { tax_category: Json }
  ).tax_category.percent = 5;
  const { violations } = expectInvalid(
    await app.inject({ method: "POST", url: `${API}/validate`, headers: a.headers, payload: invoice }),
  );
  const line = violations.find((v) => v.path === "invoice_line[0].line_extension_amount") as Violation & {
    expected: number;
    actual: number;
    related: string[];
  };
  assert.equal(line.rule, "line_amount");
  assert.equal(line.expected, 617500);
  assert.equal(line.actual, 600000);
  assert.ok(line.related.includes("invoice_line[0].price.price_amount"));
  assert.match(line.message, /617500/);
  const total = violations.find(
    (v) => v.path === "legal_monetary_total.line_extension_amount",
  ) as Violation & { expected: number };
  assert.equal(total.expected, 625000, "the declared line amounts are summed");
  const rate = violations.find(
    (v) => v.path === "tax_total[0].tax_subtotal[0].tax_category.percent",
  ) as Violation & { expected: number };
  assert.equal(rate.rule, "tax_rate");
  assert.equal(rate.expected, 7.5);
});

test("warnings come back on success: a misspelt field is named with a suggestion, data stays []", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = fixture("invoice-full", a) as Json & { invoice_line: Json[] };
  (invoice.invoice_line[0] as Json).dicount_rate = 5;
  invoice.isic_code = "4663";
  const res = await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: invoice });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json() as Json & { warnings: Violation[] };
  assert.deepEqual(body.data, []);
  assert.equal(body.message, "Invoice signed successfully");
  const typo = body.warnings.find((w) => w.path === "invoice_line[0].dicount_rate");
  assert.equal(typo?.rule, "unknown_field");
  assert.match(typo?.message ?? "", /did you mean 'discount_rate'/);
  assert.ok(body.warnings.some((w) => w.path === "isic_code"));
  // The valid fixture itself has no warnings, so the key is absent.
  const clean = await app.inject({
    method: "POST",
    url: `${API}/validate`,
    headers: a.headers,
    payload: fixture("invoice-minimal", a),
  });
  assert.equal("warnings" in clean.json(), false);
});

test("an HS code missing from the imported catalog is a warning, not an error", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  await ctx.reference.importProducts(HS_CSV);
  const invoice = fixture("invoice-full", a) as Json & { invoice_line: Json[] };
  (invoice.invoice_line[1] as Json).hsn_code = "1299.99";
  const res = await app.inject({
    method: "POST",
    url: `${API}/validate`,
    headers: a.headers,
    payload: invoice,
  });
  assert.equal(res.statusCode, 200, res.body);
  const warnings = (res.json() as { warnings: Violation[] }).warnings;
  assert.deepEqual(
    warnings.map((w) => [w.path, w.rule]),
    [["invoice_line[1].hsn_code", "hs_code_known"]],
  );
});

test("credit and debit notes must reference the invoice they correct", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  for (const code of ["380", "384", "393"]) {
    const note = { ...fixture("invoice-full", a), invoice_type_code: code };
    const { violations } = expectInvalid(
      await app.inject({ method: "POST", url: `${API}/validate`, headers: a.headers, payload: note }),
    );
    assert.equal(
      violations.find((v) => v.path === "billing_reference")?.rule,
      "billing_reference_required",
      code,
    );
    const referenced = {
      ...note,
      billing_reference: [{ irn: `INV0001-${a.service_id}-20261101`, issue_date: "2026-11-01" }],
    };
    const ok = await app.inject({
      method: "POST",
      url: `${API}/validate`,
      headers: a.headers,
      payload: referenced,
    });
    assert.equal(ok.statusCode, 200, ok.body);
  }
});

test("dates: due and tax point dates before the issue date, a backwards delivery period", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = {
    ...fixture("invoice-full", a),
    due_date: "2026-11-14",
    tax_point_date: "2026-11-01",
    invoice_delivery_period: { start_date: "2026-11-14", end_date: "2026-11-10" },
  };
  const { violations } = expectInvalid(
    await app.inject({ method: "POST", url: `${API}/validate`, headers: a.headers, payload: invoice }),
  );
  assert.deepEqual(
    violations.filter((v) => v.rule === "date_order").map((v) => v.path),
    ["due_date", "tax_point_date", "invoice_delivery_period.end_date"],
  );
});

test("fiscalization report arithmetic and its consistency with the invoice", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  await app.inject({
    method: "POST",
    url: `${API}/sign`,
    headers: a.headers,
    payload: fixture("invoice-full", a),
  });
  const report = fixture("report-fiscalization", a);
  const wrong = await app.inject({
    method: "POST",
    url: `${API}/report-fiscalization`,
    headers: a.headers,
    payload: { ...report, vat_calculated: "48000.00" },
  });
  assert.equal(wrong.statusCode, 400);
  const violations = wrong.json().error.violations as (Violation & { expected: number })[];
  assert.deepEqual(
    violations.map((v) => [v.path, v.rule, v.expected]),
    [
      ["vat_calculated", "report_vat", 48375],
      ["total_amount", "report_total", 693000],
    ],
  );
  const otherAgent = await app.inject({
    method: "POST",
    url: `${API}/report-fiscalization`,
    headers: a.headers,
    payload: { ...report, agent_tin: "99999999-0001" },
  });
  assert.equal(otherAgent.statusCode, 200, otherAgent.body);
  assert.deepEqual(
    (otherAgent.json().warnings as Violation[]).map((w) => w.path),
    ["agent_tin"],
  );
});
