import assert from "node:assert/strict";
import { test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { build, fixture, ISO_TIMESTAMP, type Json, tenant } from "../helpers.ts";

const API = "/api/v1/einvoice";

function json(res: LightMyRequestResponse): Json {
  assert.match(
    String(res.headers["content-type"]),
    /^application\/json/,
    `not JSON: ${res.body.slice(0, 200)}`,
  );
  const body: unknown = JSON.parse(res.body);
  assert.ok(body !== null && typeof body === "object" && !Array.isArray(body), "a JSON object");
  return body as Json;
}

/** The spec's error envelope `{status:false, code, message, data:null, error, timestamp}` with `code` = HTTP status. */
function errorEnvelope(res: LightMyRequestResponse, status: number): Json {
  assert.equal(res.statusCode, status, res.body);
  const body = json(res);
  assert.deepEqual(Object.keys(body).sort(), ["code", "data", "error", "message", "status", "timestamp"]);
  assert.equal(body.status, false);
  assert.equal(body.code, status);
  assert.equal(typeof body.message, "string");
  assert.ok(String(body.message).length > 0);
  assert.equal(body.data, null);
  assert.ok(body.error !== null && typeof body.error === "object", "error is an object or an array");
  assert.match(String(body.timestamp), ISO_TIMESTAMP);
  return body;
}

function details(body: Json): string {
  const error = body.error as Json;
  assert.equal(typeof error.details, "string", JSON.stringify(body));
  return String(error.details);
}

function assertUnauthorized(res: LightMyRequestResponse): void {
  const body = errorEnvelope(res, 401);
  assert.equal(body.message, "Unauthorized");
  assert.deepEqual(Object.keys(body.error as Json), ["details"]);
  assert.ok(details(body).length > 0);
}

test("unknown routes answer a JSON 404 naming the missing route, with or without credentials", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  const cases = [
    { method: "GET", url: `${API}/resources/nope` },
    { method: "POST", url: "/nope" },
    { method: "DELETE", url: `${API}/resources/currencies` },
    { method: "GET", url: "/api/v2/einvoice/resources/currencies" },
  ] as const;
  for (const c of cases) {
    for (const headers of [who.headers, {}, { accept: "text/html" }]) {
      const res = await app.inject({ method: c.method, url: c.url, headers });
      const label = `${c.method} ${c.url} ${JSON.stringify(headers)}`;
      assert.equal(res.statusCode, 404, `${label}: ${res.body}`);
      assert.ok(!/<html|<!doctype/i.test(res.body), `${label}: never HTML`);
      const body = json(res);
      assert.equal(body.code, 404, label);
      assert.equal(body.data, null, label);
      assert.equal(typeof body.message, "string");
      assert.match(String(body.message), /no route/i, label);
    }
  }
});

test("health check: exact body with credentials, 401 without, with a wrong secret, or after revocation", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);

  const ok = await app.inject({ method: "GET", url: "/", headers: who.headers });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.deepEqual(json(ok), { code: 200, data: null, message: "API is healthy" });

  assertUnauthorized(await app.inject({ method: "GET", url: "/" }));
  assertUnauthorized(
    await app.inject({
      method: "GET",
      url: "/",
      headers: { "api-key": who.api_key, "api-secret": `${who.api_secret.slice(0, -1)}x` },
    }),
  );
  assertUnauthorized(
    await app.inject({ method: "GET", url: "/", headers: { "api-key": who.api_key, "api-secret": "" } }),
  );
  // Another tenant's secret does not open this tenant's key.
  const other = await tenant(ctx);
  assertUnauthorized(
    await app.inject({
      method: "GET",
      url: "/",
      headers: { "api-key": who.api_key, "api-secret": other.api_secret },
    }),
  );

  const revoked = await ctx.businesses.revokeKey(who.api_key);
  assert.equal(revoked.api_key, who.api_key);
  assertUnauthorized(await app.inject({ method: "GET", url: "/", headers: who.headers }));
  // The other tenant is unaffected.
  const stillOk = await app.inject({ method: "GET", url: "/", headers: other.headers });
  assert.equal(stillOk.statusCode, 200);
});

async function postWithType(t: Parameters<typeof build>[0], type: string, payload: string) {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  return app.inject({
    method: "POST",
    url: `${API}/validate`,
    headers: { ...who.headers, "content-type": type },
    payload,
  });
}

test("malformed JSON is a 400 envelope that says the body is not valid JSON", async (t) => {
  const body = errorEnvelope(await postWithType(t, "application/json", '{"a":'), 400);
  assert.match(details(body), /JSON/);
});

test("an empty JSON body is a 400 envelope", async (t) => {
  const body = errorEnvelope(await postWithType(t, "application/json", ""), 400);
  assert.match(details(body), /empty/i);
});

test("a text/plain body is a 415 envelope", async (t) => {
  const res = await postWithType(t, "text/plain", '{"business_id":"x"}');
  const body = errorEnvelope(res, 415);
  assert.match(details(body), /application\/json/);
});

test("a form-encoded body is a 415 envelope", async (t) => {
  const res = await postWithType(t, "application/x-www-form-urlencoded", "business_id=x");
  const body = errorEnvelope(res, 415);
  assert.match(details(body), /application\/json/);
});

test("a body over 1 MiB is a 413 envelope", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  const payload = JSON.stringify({ note: "x".repeat(Math.ceil(1.1 * 1024 * 1024)) });
  assert.ok(Buffer.byteLength(payload) > 1024 * 1024);
  const res = await app.inject({
    method: "POST",
    url: `${API}/validate`,
    headers: { ...who.headers, "content-type": "application/json" },
    payload,
  });
  const body = errorEnvelope(res, 413);
  assert.match(details(body), /1 MiB|limit|large/i);
});

test("path parameters with traversal or SQL-looking text answer a 4xx envelope, never 5xx", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  const irns = [
    "..%2F..%2Fetc",
    "../../etc/passwd",
    "'%20OR%201=1%20--",
    encodeURIComponent("' OR 1=1 --"),
    encodeURIComponent("x'; DROP TABLE invoices; --"),
    "%00",
    "a".repeat(150),
  ];
  for (const irn of irns) {
    for (const url of [`${API}/lookup/${irn}`, `${API}/transmit/${irn}`, `${API}/${irn}/simple`]) {
      const res = await app.inject({ method: "GET", url, headers: who.headers });
      assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${url}: ${res.statusCode} ${res.body}`);
      const body = json(res);
      assert.equal(body.code, res.statusCode, url);
      assert.equal(body.data, null, url);
      assert.equal(typeof body.message, "string");
    }
  }
  // The raw, unencoded form as a client might send it.
  const raw = await app.inject({ method: "GET", url: `${API}/lookup/' OR 1=1 --`, headers: who.headers });
  assert.ok(raw.statusCode >= 400 && raw.statusCode < 500, `${raw.statusCode} ${raw.body}`);
  assert.equal(json(raw).code, raw.statusCode);

  // The database is intact afterwards: the tenant still authenticates and the app is healthy.
  const health = await app.inject({ method: "GET", url: "/", headers: who.headers });
  assert.equal(health.statusCode, 200);
});

test("a NUL character in a body, a path or a query is a 400 envelope on every engine", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  const irn = `INV1-${who.service_id}-20261115`;
  for (const req of [
    { method: "GET" as const, url: `${API}/lookup/%00` },
    { method: "GET" as const, url: `${API}/resources/products?search=%00` },
    {
      method: "PATCH" as const,
      url: `${API}/update/${irn}`,
      payload: '{"payment_status":"PAID","reference":"a\\u0000b"}',
    },
    { method: "POST" as const, url: `${API}/validate`, payload: '{"note":"\\u0000"}' },
  ]) {
    const res = await app.inject({ ...req, headers: { ...who.headers, "content-type": "application/json" } });
    const body = errorEnvelope(res, 400);
    assert.match(details(body), /NUL/, req.url);
  }
});

test("inputs the fuzzer found: each answers a 4xx envelope, quickly", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  const invoice = { ...fixture("invoice-minimal", who), note: "\ud800" };
  const lone = await app.inject({
    method: "POST",
    url: `${API}/sign`,
    headers: { ...who.headers, "content-type": "application/json" },
    // JSON.stringify writes the lone surrogate as the escape `\ud800`.
    payload: JSON.stringify(invoice),
  });
  assert.match(details(errorEnvelope(lone, 400)), /surrogate/);
  const infinite = await app.inject({
    method: "POST",
    url: `${API}/sign`,
    headers: { ...who.headers, "content-type": "application/json" },
    payload: JSON.stringify(fixture("invoice-minimal", who)).replace("{", `{"": 1${"0".repeat(309)},`),
  });
  assert.match(details(errorEnvelope(infinite, 400)), /too large to represent/);
  for (const url of [`${API}/%zz`, `${API}/lookup/%E0%A4%A`, `${API}/${"A".repeat(201)}`]) {
    const res = await app.inject({ url, headers: who.headers });
    errorEnvelope(res, 400);
  }
  const offset = await app.inject({ url: `${API}/resources/products?start=1e19`, headers: who.headers });
  assert.match(details(errorEnvelope(offset, 400)), /start/);
  const business = await ctx.businesses.find(who.business_id);
  const created = await app.inject({
    method: "POST",
    url: `${API}/qr-code/create`,
    headers: who.headers,
    payload: {
      public_key: Buffer.from(ctx.qr.publicKeyPem).toString("base64"),
      certificate: `${business?.certificate}${"c".repeat(300)}`,
      irn: `INV1-${who.service_id}-20261115`,
    },
  });
  assert.match(details(errorEnvelope(created, 400)), /at most 245/);
  // A 1-bit PNG header claiming 16,000 × 16,000 pixels is refused before any decoding.
  const header = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(header, 0);
  header.writeUInt32BE(13, 8);
  header.write("IHDR", 12, "latin1");
  header.writeUInt32BE(16000, 16);
  header.writeUInt32BE(16000, 20);
  const started = Date.now();
  const bomb = await app.inject({
    method: "POST",
    url: `${API}/qr-code/validate`,
    headers: who.headers,
    payload: { code: `data:image/png;base64,${header.toString("base64")}` },
  });
  assert.match(details(errorEnvelope(bomb, 400)), /too large/);
  assert.ok(Date.now() - started < 1000);
});
