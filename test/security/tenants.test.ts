import assert from "node:assert/strict";
import { test } from "node:test";
import { build, fixture, type Json, tenant } from "../helpers.ts";

const API = "/api/v1/einvoice";

test("business B's credential cannot read, transmit, update, report or sign for business A", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const b = await tenant(ctx);
  const invoice = fixture("invoice-full", a);
  const irn = String(invoice.irn);
  assert.equal(
    (await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: invoice }))
      .statusCode,
    200,
  );
  const missing = `NOPE1-${a.service_id}-20261115`;

  // For each endpoint that takes an IRN, B gets exactly what it gets for an IRN that does not exist.
  type Req = { method: "GET" | "PATCH" | "POST"; url: string; payload?: Json };
  const byIrn = (id: string): Req[] => [
    { method: "GET" as const, url: `${API}/${id}` },
    { method: "GET" as const, url: `${API}/${id}/simple` },
    { method: "GET" as const, url: `${API}/lookup/${id}` },
    { method: "GET" as const, url: `${API}/transmit/${id}` },
    { method: "GET" as const, url: `${API}/${id}/qr.png` },
    { method: "GET" as const, url: `${API}/${id}/qr.svg` },
    { method: "PATCH" as const, url: `${API}/update/${id}`, payload: { payment_status: "PAID" } },
    {
      method: "POST" as const,
      url: `${API}/report-fiscalization`,
      payload: { ...fixture("report-fiscalization", a), irn: id },
    },
  ];
  const strip = (body: Json) => {
    const { timestamp: _t, error, ...rest } = body as Json & { error: Json };
    const { id: _i, ...stable } = error;
    return JSON.stringify({ ...rest, error: stable })
      .replaceAll(id(irn), "<irn>")
      .replaceAll(id(missing), "<irn>");
  };
  const id = (x: string) => x;
  const real = byIrn(irn);
  const fake = byIrn(missing);
  for (const [i, req] of real.entries()) {
    const theirs = await app.inject({ ...req, headers: b.headers });
    const none = await app.inject({ ...(fake[i] as Req), headers: b.headers });
    assert.ok(theirs.statusCode >= 400 && theirs.statusCode < 500, `${req.url}: ${theirs.statusCode}`);
    assert.equal(theirs.statusCode, none.statusCode, req.url);
    assert.equal(strip(theirs.json()), strip(none.json()), req.url);
  }

  // B cannot sign (or validate) in A's name, even with A's own valid document.
  const other = { ...fixture("invoice-minimal", a) };
  for (const path of ["validate", "sign", "sign-transmit"]) {
    const res = await app.inject({
      method: "POST",
      url: `${API}/${path}`,
      headers: b.headers,
      payload: other,
    });
    assert.equal(res.statusCode, 400, path);
    assert.match(res.json().error.details, /does not exist/);
  }
  const irnCheck = await app.inject({
    method: "POST",
    url: `${API}/irn/validate`,
    headers: b.headers,
    payload: { irn: `INV0100-${a.service_id}-20261115`, business_id: a.business_id },
  });
  assert.equal(irnCheck.statusCode, 400);

  // A's invoice is untouched: still SIGNED, PENDING, not transmitted, no report in its history.
  const record = (await app.inject({ url: `${API}/${irn}`, headers: a.headers })).json().data;
  assert.equal(record.status, "SIGNED");
  assert.equal(record.payment_status, "PENDING");
  assert.deepEqual(
    (record.history as { type: string }[]).map((e) => e.type),
    ["signed"],
  );
  const lookup = await app.inject({
    url: `${API}/lookup/${String(fixture("invoice-minimal", a).irn)}`,
    headers: a.headers,
  });
  assert.equal(lookup.statusCode, 404, "B's attempts stored nothing under A's name");
});
