import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import openapiTS, { astToString } from "openapi-typescript";
import { einvoiceClient, retryingFetch } from "../../client/index.ts";
import { writeUbl } from "../../src/documents/ubl/write.ts";
import { ENGINE, freshInvoice, listen, REPO_ROOT, SHARED_DIR, tenant } from "../helpers.ts";

const exec = promisify(execFile);

test(`typed client on ${ENGINE}: validate, sign, transmit and look up against a real server; errors come typed`, async (t) => {
  const { ctx, url } = await listen(t);
  const a = await tenant(ctx);
  const api = einvoiceClient({ baseUrl: url, apiKey: a.api_key, apiSecret: a.api_secret });
  const invoice = freshInvoice(a);
  const irn = String(invoice.irn);

  const validated = await api.POST("/api/v1/einvoice/validate", { body: invoice as never });
  assert.equal(validated.data?.message, "Invoice validated sucessfully");
  const signed = await api.POST("/api/v1/einvoice/sign", { body: invoice as never });
  assert.equal(signed.data?.message, "Invoice signed successfully");
  const again = await api.POST("/api/v1/einvoice/sign", { body: invoice as never });
  assert.equal(again.response.status, 400);
  assert.equal(again.error?.message, "IRN already exists.");
  const transmitted = await api.GET("/api/v1/einvoice/transmit/{irn}", { params: { path: { irn } } });
  assert.equal(transmitted.data?.message, "Invoice transmitted successfully");
  const lookup = await api.GET("/api/v1/einvoice/lookup/{irn}", { params: { path: { irn } } });
  assert.equal(lookup.data?.data.status, "TRANSMITTED");

  const stranger = einvoiceClient({ baseUrl: url, apiKey: a.api_key, apiSecret: "sk_wrong" });
  const refused = await stranger.GET("/api/v1/einvoice/lookup/{irn}", { params: { path: { irn } } });
  assert.equal(refused.response.status, 401);
  assert.equal(refused.error?.message, "Unauthorized");
});

test("retries: 429, 409 and 503 are sent again after their Retry-After; a sign-transmit 503 is not", async (t) => {
  // A peer that refuses each path's first request, then answers it.
  const seen = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const n = (seen.get(req.url ?? "") ?? 0) + 1;
    seen.set(req.url ?? "", n);
    req.resume();
    req.on("end", () => {
      if (n === 1) {
        const status = req.url?.includes("busy") ? 429 : req.url?.includes("in-progress") ? 409 : 503;
        res.writeHead(status, { "retry-after": "1", "content-type": "application/json" }).end("{}");
      } else {
        res.writeHead(200, { "content-type": "application/json" }).end(`{"attempt":${n}}`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const send = retryingFetch({});

  const started = Date.now();
  const busy = await send(new Request(`${base}/busy`, { method: "POST", body: '{"a":1}' }));
  assert.equal(busy.status, 200);
  assert.deepEqual(await busy.json(), { attempt: 2 });
  assert.ok(Date.now() - started >= 950, "waited for Retry-After");
  const unavailable = await send(new Request(`${base}/api/v1/einvoice/lookup/X`));
  assert.deepEqual(await unavailable.json(), { attempt: 2 });
  // An earlier attempt with the same Idempotency-Key still runs: ask again after Retry-After.
  const inProgress = await send(new Request(`${base}/in-progress`, { method: "POST", body: "{}" }));
  assert.deepEqual(await inProgress.json(), { attempt: 2 });
  // Signed and queued: sending it again would only meet "IRN already exists.".
  const queued = await send(
    new Request(`${base}/api/v1/einvoice/sign-transmit`, { method: "POST", body: "{}" }),
  );
  assert.equal(queued.status, 503);
  assert.equal(seen.get("/api/v1/einvoice/sign-transmit"), 1);
  const patient = retryingFetch({ maxRetryAfterSeconds: 0 });
  assert.equal(
    (await patient(new Request(`${base}/busy-too-long`))).status,
    429,
    "a wait longer than allowed is not made",
  );
});

test(`the client on ${ENGINE} signs with an Idempotency-Key, so a sign whose answer was lost is sent again safely`, async (t) => {
  const { ctx, url } = await listen(t);
  const a = await tenant(ctx);
  // The first attempt reaches the server and is processed, but its answer never arrives.
  let attempts = 0;
  const losingFirstAnswer = async (request: string | URL | Request) => {
    attempts += 1;
    const response = await fetch(request);
    if (attempts > 1) return response;
    await response.arrayBuffer();
    throw new TypeError("fetch failed");
  };
  const api = einvoiceClient({
    baseUrl: url,
    apiKey: a.api_key,
    apiSecret: a.api_secret,
    fetch: losingFirstAnswer,
  });
  const invoice = freshInvoice(a);
  const signed = await api.POST("/api/v1/einvoice/sign", { body: invoice as never });
  assert.equal(attempts, 2);
  assert.equal(signed.response.status, 200);
  assert.equal(signed.data?.message, "Invoice signed successfully");
  assert.equal(signed.response.headers.get("idempotent-replayed"), "true", "the first attempt's answer");
  const keys = await ctx.db.selectFrom("idempotency_keys").select("idempotency_key").execute();
  assert.equal(keys.length, 1);
  assert.match(keys[0]?.idempotency_key ?? "", /^[0-9a-f-]{36}$/);

  // The caller's own key is kept; requests that are not signs carry none.
  const mine = await api.POST("/api/v1/einvoice/batch/sign", {
    body: { invoices: [freshInvoice(a)] },
    params: { header: { "idempotency-key": "erp-batch-2026-11-22" } },
  });
  assert.equal(mine.response.status, 200);
  const stored = await ctx.db.selectFrom("idempotency_keys").select("idempotency_key").execute();
  assert.deepEqual(
    stored.map((k) => k.idempotency_key).sort(),
    ["erp-batch-2026-11-22", keys[0]?.idempotency_key].sort(),
  );
  await api.POST("/api/v1/einvoice/validate", { body: freshInvoice(a) as never });
  assert.equal((await ctx.db.selectFrom("idempotency_keys").select("idempotency_key").execute()).length, 2);
  // Without a key, a lost answer is not sent again: the caller decides.
  attempts = 0;
  await assert.rejects(
    retryingFetch({ fetch: losingFirstAnswer })(
      new Request(`${url}/api/v1/einvoice/validate`, {
        method: "POST",
        headers: { ...a.headers, "content-type": "application/json" },
        body: JSON.stringify(freshInvoice(a)),
      }),
    ),
    /fetch failed/,
  );
  assert.equal(attempts, 1);
});

test("client/schema.d.ts is generated from the committed openapi.json (run `npm run openapi`)", async () => {
  const generated = astToString(await openapiTS(new URL(`file://${path.join(REPO_ROOT, "openapi.json")}`)));
  const committed = fs.readFileSync(path.join(REPO_ROOT, "client", "schema.d.ts"), "utf8");
  assert.equal(
    committed.replace(/^\/\*\*[\s\S]*?\*\/\s*/, ""),
    generated.replace(/^\/\*\*[\s\S]*?\*\/\s*/, ""),
  );
});

test(`the client example runs unchanged against a server on ${ENGINE}`, async (t) => {
  const { ctx, url } = await listen(t);
  const a = await tenant(ctx);
  const { stdout } = await exec(process.execPath, ["--import", "tsx", "client/example.ts"], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      EINVOICE_API: url,
      EINVOICE_API_KEY: a.api_key,
      EINVOICE_API_SECRET: a.api_secret,
      EINVOICE_BUSINESS_ID: a.business_id,
      EINVOICE_SERVICE_ID: a.service_id,
      EINVOICE_SHARED_DIR: SHARED_DIR,
    },
    timeout: 60_000,
  });
  assert.match(stdout, /validated .*Invoice validated sucessfully/);
  assert.match(stdout, /signed .*Invoice signed successfully/);
  assert.match(stdout, /lookup .*TRANSMITTED, payment PENDING/);
});

test(`typed client on ${ENGINE}: a buyer lists, reads and acknowledges what another business sent it`, async (t) => {
  const { ctx, url } = await listen(t);
  const buyer = await tenant(ctx, { tin: "31845560-0001" });
  const seller = await tenant(ctx, { tin: "20198222-0002" });
  const sellerApi = einvoiceClient({ baseUrl: url, apiKey: seller.api_key, apiSecret: seller.api_secret });
  const buyerApi = einvoiceClient({ baseUrl: url, apiKey: buyer.api_key, apiSecret: buyer.api_secret });
  const invoice = freshInvoice(seller);
  invoice.accounting_customer_party = { ...(invoice.accounting_customer_party as object), tin: buyer.tin };
  const irn = String(invoice.irn);
  const sent = await sellerApi.POST("/api/v1/einvoice/sign-transmit", { body: invoice as never });
  assert.equal(sent.response.status, 200);

  const inbox = await buyerApi.GET("/api/v1/einvoice/inbox", {
    params: { query: { status: "RECEIVED", length: 10 } },
  });
  assert.equal(inbox.data?.data.total, 1);
  assert.equal(inbox.data?.data.items[0]?.irn, irn);
  assert.equal(inbox.data?.data.items[0]?.supplier.tin, seller.tin);
  const one = await buyerApi.GET("/api/v1/einvoice/inbox/{irn}", { params: { path: { irn } } });
  assert.equal(one.data?.data.document.irn, irn);
  const acked = await buyerApi.POST("/api/v1/einvoice/inbox/{irn}/acknowledge", {
    params: { path: { irn } },
  });
  assert.equal(acked.data?.data.status, "ACKNOWLEDGED");
  const theirs = await sellerApi.GET("/api/v1/einvoice/inbox/{irn}", { params: { path: { irn } } });
  assert.equal(theirs.response.status, 404);
  assert.equal(theirs.error?.message, "Invoice not found");
});

test("typed client: UBL in (sign, convert) and out (the signed invoice as UBL), answers typed as JSON's", async (t) => {
  const { ctx, url } = await listen(t, { EINVOICE_UBL_SCHEMAS: path.join(SHARED_DIR, "data", "ubl", "xsd") });
  const a = await tenant(ctx);
  const api = einvoiceClient({ baseUrl: url, apiKey: a.api_key, apiSecret: a.api_secret });
  const invoice = freshInvoice(a);
  const irn = String(invoice.irn);
  const xml = writeUbl({ irn, document: invoice });

  const converted = await api.ubl.convert(xml);
  assert.equal(converted.data?.message, "Invoice converted successfully");
  assert.equal(converted.data?.data.document.irn, irn);
  const signed = await api.ubl.sign(xml);
  assert.equal(signed.data?.message, "Invoice signed successfully");
  const again = await api.ubl.sign(xml);
  assert.equal(again.response.status, 400);
  assert.equal(again.error?.message, "IRN already exists.");

  const out = await api.ubl.invoice(irn);
  assert.equal(out.response.status, 200);
  assert.match(String(out.data), new RegExp(`<cbc:ID>${irn}</cbc:ID>`));
  const missing = await api.ubl.invoice(`X${irn}`);
  assert.equal(missing.response.status, 404);
});
