import assert from "node:assert/strict";
import { test } from "node:test";
import { build, fixture, freshInvoice, ISO_TIMESTAMP, type Json, tenant } from "../helpers.ts";

const API = "/api/v1/einvoice";

test("the full fixture validates, signs, transmits, updates and reports end to end", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = fixture("invoice-full", a);
  const irn = String(invoice.irn);

  const validated = await app.inject({
    method: "POST",
    url: `${API}/validate`,
    headers: a.headers,
    payload: invoice,
  });
  assert.equal(validated.statusCode, 200, validated.body);
  assert.deepEqual(validated.json(), {
    status: true,
    code: 200,
    message: "Invoice validated sucessfully",
    data: [],
  });

  const signed = await app.inject({
    method: "POST",
    url: `${API}/sign`,
    headers: a.headers,
    payload: invoice,
  });
  assert.equal(signed.statusCode, 200, signed.body);
  assert.deepEqual(signed.json(), {
    status: true,
    code: 200,
    message: "Invoice signed successfully",
    data: [],
  });

  const lookup1 = (await app.inject({ url: `${API}/lookup/${irn}`, headers: a.headers })).json();
  assert.equal(lookup1.message, "Lookup completed");
  assert.equal(lookup1.data.irn, irn);
  assert.equal(lookup1.data.status, "SIGNED");
  assert.equal(lookup1.data.payment_status, "PENDING");
  assert.equal(lookup1.data.transmitted_at, null);

  const transmitted = await app.inject({ url: `${API}/transmit/${irn}`, headers: a.headers });
  assert.equal(transmitted.statusCode, 200, transmitted.body);
  assert.deepEqual(transmitted.json(), {
    status: true,
    code: 200,
    message: "Invoice transmitted successfully",
    data: [],
  });

  const lookup2 = (await app.inject({ url: `${API}/lookup/${irn}`, headers: a.headers })).json();
  assert.equal(lookup2.data.status, "TRANSMITTED");
  assert.match(lookup2.data.transmitted_at, ISO_TIMESTAMP);

  // Transmitting again is a success that sends nothing: the authority reference does not change.
  const again = await app.inject({ url: `${API}/transmit/${irn}`, headers: a.headers });
  assert.equal(again.statusCode, 200);
  const lookup3 = (await app.inject({ url: `${API}/lookup/${irn}`, headers: a.headers })).json();
  assert.equal(lookup3.data.authority_reference, lookup2.data.authority_reference);
  assert.equal(lookup3.data.transmitted_at, lookup2.data.transmitted_at);

  const updated = await app.inject({
    method: "PATCH",
    url: `${API}/update/${irn}`,
    headers: a.headers,
    payload: { payment_status: "PAID", reference: "RCPT-2026-118" },
  });
  assert.equal(updated.statusCode, 200, updated.body);
  assert.deepEqual(updated.json(), {
    status: true,
    code: 200,
    message: "Invoice updated successfully",
    data: [],
  });

  const report = await app.inject({
    method: "POST",
    url: `${API}/report-fiscalization`,
    headers: a.headers,
    payload: fixture("report-fiscalization", a),
  });
  assert.equal(report.statusCode, 200, report.body);
  assert.deepEqual(report.json(), {
    status: true,
    code: 200,
    message: "Report submitted successfully",
    data: [],
  });

  const full = await app.inject({ url: `${API}/${irn}`, headers: a.headers });
  assert.equal(full.statusCode, 200);
  const record = full.json();
  assert.equal(record.message, "Invoice fetched successfully");
  assert.equal(record.data.irn, irn);
  assert.equal(record.data.business_id, a.business_id);
  assert.equal(record.data.status, "TRANSMITTED");
  assert.equal(record.data.payment_status, "PAID");
  assert.equal(record.data.payment_reference, "RCPT-2026-118");
  assert.match(record.data.signed_at, ISO_TIMESTAMP);
  // The document comes back as submitted, the encrypted fields decrypted.
  assert.deepEqual(record.data.document, invoice);
  const types = (record.data.history as { type: string }[]).map((e) => e.type);
  assert.deepEqual(types, [
    "signed",
    "transmission_queued",
    "transmission_attempt",
    "transmitted",
    "payment_updated",
    "fiscalization_reported",
  ]);

  const simple = await app.inject({ url: `${API}/${irn}/simple`, headers: a.headers });
  assert.equal(simple.statusCode, 200);
  const simpleBody = simple.json();
  assert.equal(simpleBody.message, "Invoice fetched successfully");
  assert.equal(simpleBody.data.irn, irn);
  assert.equal(simpleBody.data.payment_terms_note, invoice.payment_terms_note);
  assert.equal(simpleBody.data.status, "TRANSMITTED");
});

test("the minimal fixture signs and transmits in one call", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = fixture("invoice-minimal", a);
  const res = await app.inject({
    method: "POST",
    url: `${API}/sign-transmit`,
    headers: a.headers,
    payload: invoice,
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), {
    status: true,
    code: 200,
    message: "Invoice transmitted successfully!",
    data: [],
  });
  const lookup = (
    await app.inject({ url: `${API}/lookup/${String(invoice.irn)}`, headers: a.headers })
  ).json();
  assert.equal(lookup.data.status, "TRANSMITTED");
  assert.match(lookup.data.transmitted_at, ISO_TIMESTAMP);
  assert.match(lookup.data.authority_reference, /^FISC-/);
});

test("signing an IRN twice answers 400 IRN already exists. and keeps the first invoice", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = fixture("invoice-full", a);
  assert.equal(
    (await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: invoice }))
      .statusCode,
    200,
  );
  const changed = { ...invoice, note: "a different note" };
  for (const path of ["sign", "sign-transmit"]) {
    const dup = await app.inject({
      method: "POST",
      url: `${API}/${path}`,
      headers: a.headers,
      payload: changed,
    });
    assert.equal(dup.statusCode, 400);
    const body = dup.json();
    assert.deepEqual(Object.keys(body).sort(), ["code", "data", "error", "message", "status", "timestamp"]);
    assert.equal(body.status, false);
    assert.equal(body.code, 400);
    assert.equal(body.message, "IRN already exists.");
    assert.equal(body.data, null);
    assert.deepEqual(body.error, []);
    assert.match(body.timestamp, ISO_TIMESTAMP);
  }
  const record = (await app.inject({ url: `${API}/${String(invoice.irn)}`, headers: a.headers })).json();
  assert.equal(record.data.document.note, invoice.note);
  assert.equal(record.data.status, "SIGNED");
});

test("concurrent signs of one IRN: exactly one succeeds", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = fixture("invoice-minimal", a);
  const results = await Promise.all(
    Array.from({ length: 20 }, () =>
      app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: invoice }),
    ),
  );
  assert.equal(results.filter((r) => r.statusCode === 200).length, 1);
  for (const r of results.filter((x) => x.statusCode !== 200))
    assert.equal(r.json().message, "IRN already exists.");
});

test("payment status: PENDING to PAID or REJECTED, same value is a no-op, final states are kept", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const patch = (irn: string, payload: Json) =>
    app.inject({ method: "PATCH", url: `${API}/update/${irn}`, headers: a.headers, payload });

  const paid = freshInvoice(a, "invoice-minimal");
  await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: paid });
  const irn = String(paid.irn);
  assert.equal((await patch(irn, { payment_status: "PENDING" })).statusCode, 200, "PENDING again is a no-op");
  assert.equal((await patch(irn, { payment_status: "PAID", reference: "R1" })).statusCode, 200);
  assert.equal(
    (await patch(irn, { payment_status: "PAID", reference: "R2" })).statusCode,
    200,
    "PAID again is a no-op",
  );
  for (const next of ["PENDING", "REJECTED"]) {
    const res = await patch(irn, { payment_status: next });
    assert.equal(res.statusCode, 400);
    const body = res.json();
    assert.equal(body.message, "Failed to update invoice");
    assert.match(body.error.details, /PAID.*final/);
    assert.equal(body.error.violations[0].path, "payment_status");
  }
  const record = (await app.inject({ url: `${API}/${irn}`, headers: a.headers })).json().data;
  assert.equal(record.payment_status, "PAID");
  assert.equal(record.payment_reference, "R1");
  assert.equal((record.history as { type: string }[]).filter((e) => e.type === "payment_updated").length, 1);

  const rejected = freshInvoice(a, "invoice-minimal");
  await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: rejected });
  assert.equal((await patch(String(rejected.irn), { payment_status: "REJECTED" })).statusCode, 200);
  assert.equal((await patch(String(rejected.irn), { payment_status: "PAID" })).statusCode, 400);

  const bad = await patch(String(rejected.irn), { payment_status: "SETTLED" });
  assert.equal(bad.statusCode, 400);
  assert.equal(bad.json().message, "Failed to update invoice");
  assert.match(bad.json().error.details, /payment_status/);
  const numeric = await patch(String(rejected.irn), { payment_status: "PAID", reference: 42 });
  assert.equal(numeric.statusCode, 400);
  assert.match(numeric.json().error.details, /reference/);
});

test("concurrent payment updates: one wins, the other is refused, nothing is lost", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = freshInvoice(a, "invoice-minimal");
  await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: invoice });
  const irn = String(invoice.irn);
  const [x, y] = await Promise.all([
    app.inject({
      method: "PATCH",
      url: `${API}/update/${irn}`,
      headers: a.headers,
      payload: { payment_status: "PAID" },
    }),
    app.inject({
      method: "PATCH",
      url: `${API}/update/${irn}`,
      headers: a.headers,
      payload: { payment_status: "REJECTED" },
    }),
  ]);
  assert.deepEqual([x?.statusCode, y?.statusCode].sort(), [200, 400]);
  const record = (await app.inject({ url: `${API}/${irn}`, headers: a.headers })).json().data;
  const winner = x?.statusCode === 200 ? "PAID" : "REJECTED";
  assert.equal(record.payment_status, winner);
});

test("unknown IRNs answer 404 in the error envelope on every invoice endpoint", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const irn = `NOPE1-${a.service_id}-20261115`;
  for (const req of [
    { method: "GET" as const, url: `${API}/${irn}` },
    { method: "GET" as const, url: `${API}/${irn}/simple` },
    { method: "GET" as const, url: `${API}/lookup/${irn}` },
    { method: "GET" as const, url: `${API}/transmit/${irn}` },
    { method: "PATCH" as const, url: `${API}/update/${irn}`, payload: { payment_status: "PAID" } },
  ]) {
    const res = await app.inject({ ...req, headers: a.headers });
    assert.equal(res.statusCode, 404, req.url);
    const body = res.json();
    assert.equal(body.status, false);
    assert.equal(body.code, 404);
    assert.equal(body.message, "Invoice not found");
    assert.equal(body.data, null);
    assert.match(body.error.details, new RegExp(irn));
    assert.equal(typeof body.error.id, "string");
    assert.equal(typeof body.error.handler, "string");
    assert.equal(typeof body.error.public_message, "string");
    assert.match(body.timestamp, ISO_TIMESTAMP);
  }
});
