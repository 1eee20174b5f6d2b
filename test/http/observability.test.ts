import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import pino from "pino";
import { createServer } from "../../src/main.ts";
import { build, ENGINE, freshInvoice, tenant } from "../helpers.ts";

const API = "/api/v1/einvoice";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

test(`x-request-id on ${ENGINE}: a caller's id is kept and logged, a bad one replaced, every answer carries one`, async (t) => {
  const { ctx } = await build(t);
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: "info" },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        done();
      },
    }),
  );
  const app = await createServer(ctx, logger);
  t.after(() => app.close());
  const a = await tenant(ctx);

  const kept = await app.inject({ url: "/", headers: { ...a.headers, "x-request-id": "erp-7f3a.42" } });
  assert.equal(kept.statusCode, 200);
  assert.equal(kept.headers["x-request-id"], "erp-7f3a.42");
  assert.ok(
    lines.some((line) => line.reqId === "erp-7f3a.42"),
    "the server's log lines for the request carry the caller's id",
  );
  for (const bad of ["has spaces in it", "x".repeat(129), "line\nbreak"]) {
    const res = await app.inject({ url: "/", headers: { ...a.headers, "x-request-id": bad } });
    assert.match(String(res.headers["x-request-id"]), UUID, JSON.stringify(bad));
  }
  // Refusals and unknown routes carry one too.
  for (const res of [
    await app.inject({ url: "/" }),
    await app.inject({ url: "/nowhere", headers: a.headers }),
  ]) {
    assert.ok([401, 404].includes(res.statusCode));
    assert.match(String(res.headers["x-request-id"]), UUID);
  }
});

test(`/metrics on ${ENGINE}: requests by method, route pattern and status; invoices signed`, async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const first = freshInvoice(a, "invoice-minimal");
  assert.equal(
    (await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: first })).statusCode,
    200,
  );
  const batch = [
    freshInvoice(a, "invoice-minimal"),
    freshInvoice(a, "invoice-minimal"),
    first,
    freshInvoice(a),
  ];
  const res = await app.inject({
    method: "POST",
    url: `${API}/batch/sign`,
    headers: a.headers,
    payload: { invoices: batch },
  });
  assert.equal(res.statusCode, 200);
  await app.inject({ url: `${API}/${String(first.irn)}`, headers: a.headers });
  await app.inject({ url: `${API}/NOPE-${a.service_id}-20260101`, headers: a.headers });
  await app.inject({ url: "/" });

  const body = (await app.inject({ url: "/metrics" })).body;
  const count = (labels: string) => {
    const match = new RegExp(`einvoice_http_request_duration_seconds_count\\{${labels}\\} (\\d+)`).exec(body);
    return match ? Number(match[1]) : 0;
  };
  assert.equal(count(`method="POST",route="/api/v1/einvoice/sign",status="200"`), 1);
  assert.equal(count(`method="POST",route="/api/v1/einvoice/batch/sign",status="200"`), 1);
  assert.equal(count(`method="GET",route="/api/v1/einvoice/:irn",status="200"`), 1);
  assert.equal(count(`method="GET",route="/api/v1/einvoice/:irn",status="404"`), 1);
  assert.equal(count(`method="GET",route="/",status="401"`), 1);
  assert.match(
    body,
    /einvoice_http_request_duration_seconds_bucket\{le="0.005",method="POST",route="\/api\/v1\/einvoice\/sign",status="200"\} \d/,
  );
  // One single sign and three of the batch (its fourth document was a duplicate).
  assert.match(body, /einvoice_invoices_signed_total 4\n/);
  assert.match(body, /einvoice_outbox_jobs/, "the outbox's gauges are still there");
});
