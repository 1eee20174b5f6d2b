import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import type { Context } from "../../src/main.ts";
import { freePort } from "../cli/run.ts";
import { build, eventually, freshInvoice, type Json, listen, tenant } from "../helpers.ts";
import { FAST, pair } from "./pair.ts";
import { faulty, proxy } from "./proxy.ts";

const API = "/api/v1/einvoice";

async function statusCounts(ctx: Context): Promise<Record<string, number>> {
  const rows = await ctx.db
    .selectFrom("invoices")
    .select((eb) => ["status", eb.fn.countAll<number>().as("n")])
    .groupBy("status")
    .execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

test("authority down: 503 with Retry-After, attempts in lookup, then TRANSMITTED without any client action", async (t) => {
  const { authority, authorityPort, upstream, gateway, local } = await pair(
    t,
    { EINVOICE_TRANSMIT_WAIT_MS: "300", EINVOICE_DELIVERY_TIMEOUT_MS: "200" },
    (port) => `http://127.0.0.1:${port}`,
  );
  const invoice = freshInvoice(local, "invoice-minimal");
  const irn = String(invoice.irn);
  const signed = await gateway.app.inject({
    method: "POST",
    url: `${API}/sign`,
    headers: local.headers,
    payload: invoice,
  });
  assert.equal(signed.statusCode, 200);

  const res = await gateway.app.inject({ url: `${API}/transmit/${irn}`, headers: local.headers });
  assert.equal(res.statusCode, 503, res.body);
  assert.match(String(res.headers["retry-after"]), /^\d+$/);
  const body = res.json();
  assert.equal(body.status, false);
  assert.equal(body.code, 503);
  assert.equal(body.data, null);
  assert.match(body.error.details, /queued and will be retried/);

  gateway.startWorker();
  await eventually(
    async () => {
      const lookup = (
        await gateway.app.inject({ url: `${API}/lookup/${irn}`, headers: local.headers })
      ).json().data;
      return lookup.attempts.length >= 3;
    },
    5000,
    "several failed attempts",
  );
  const lookup = (await gateway.app.inject({ url: `${API}/lookup/${irn}`, headers: local.headers })).json()
    .data;
  assert.equal(lookup.status, "TRANSMITTING");
  assert.equal(lookup.attempts[0].outcome, "error");
  assert.match(lookup.attempts[0].error, /unreachable|ECONNREFUSED/);
  assert.match(lookup.attempts[0].at, /^\d{4}-\d{2}-\d{2}T/);

  // The authority comes back: the worker finishes the job on its own.
  await authority.app.listen({ port: authorityPort, host: "127.0.0.1" });
  await eventually(
    async () => {
      const l = (await gateway.app.inject({ url: `${API}/lookup/${irn}`, headers: local.headers })).json()
        .data;
      return l.status === "TRANSMITTED";
    },
    10_000,
    "TRANSMITTED",
  );
  const done = (await gateway.app.inject({ url: `${API}/lookup/${irn}`, headers: local.headers })).json()
    .data;
  assert.equal(done.attempts.at(-1).outcome, "delivered");
  assert.match(done.authority_reference, /^FISC-/, "the authority's own reference is recorded");
  const there = (
    await authority.app.inject({ url: `${API}/lookup/${irn}`, headers: upstream.headers })
  ).json().data;
  assert.equal(there.status, "TRANSMITTED");
  assert.equal(there.authority_reference, done.authority_reference);

  // Transmitting again sends nothing: the authority saw one sign-transmit for it.
  const again = await gateway.app.inject({ url: `${API}/transmit/${irn}`, headers: local.headers });
  assert.equal(again.statusCode, 200);
  const history = (await authority.app.inject({ url: `${API}/${irn}`, headers: upstream.headers })).json()
    .data.history;
  assert.equal((history as { type: string }[]).filter((e) => e.type === "signed").length, 1);
});

/*
 * 150 invoices by default, EINVOICE_OUTBOX_INVOICES=1000 for the long run. The faults are per
 * request (an error, an answer held past the attempt's limit, a connection dropped after the
 * authority accepted), so what must hold (every invoice TRANSMITTED, none fiscalized twice) is at
 * stake in each delivery: 150 deliveries under 16 at once meet each kind of fault many times (the
 * test asserts each kind happened). 300 were the default until the suite had to fit in five minutes
 * an engine.
 */
const OUTBOX_INVOICES = Number(process.env.EINVOICE_OUTBOX_INVOICES) || 150;

test(`through a proxy failing 30% of requests, ${OUTBOX_INVOICES} sign-transmits all end TRANSMITTED, each fiscalized once`, {
  timeout: 240_000,
}, async (t) => {
  const proxyPort = await freePort();
  // The proxy holds an answer 2 s, past the attempt's limit of 1.5 s. A limit of 400 ms also cut
  // off ordinary answers on a busy machine (the authority answers from this process's event loop):
  // each lost answer was an attempt more of work, and with 4 processes on 2 cores the deliveries
  // collapsed under their own retries (over 180 s, against 47 s with this limit, 21 s when idle).
  const { authority, authorityPort, upstream, gateway, local } = await pair(
    t,
    { EINVOICE_TRANSMIT_WAIT_MS: "800", EINVOICE_DELIVERY_TIMEOUT_MS: "1500", EINVOICE_LEASE_MS: "3000" },
    () => `http://127.0.0.1:${proxyPort}`,
  );
  await authority.app.listen({ port: authorityPort, host: "127.0.0.1" });
  const proxied = await proxy(t, proxyPort, authorityPort, faulty());
  gateway.startWorker(16);

  const total = OUTBOX_INVOICES;
  const invoices = Array.from({ length: total }, () => freshInvoice(local, "invoice-minimal"));
  const answers = new Map<number, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < invoices.length) {
        const payload = invoices[next++];
        const res = await gateway.app.inject({
          method: "POST",
          url: `${API}/sign-transmit`,
          headers: local.headers,
          payload,
        });
        answers.set(res.statusCode, (answers.get(res.statusCode) ?? 0) + 1);
        if (res.statusCode === 503) assert.match(String(res.headers["retry-after"]), /^\d+$/);
      }
    }),
  );
  assert.deepEqual(
    [...answers.keys()].filter((code) => code !== 200 && code !== 503),
    [],
    "only 200 or 503 (queued)",
  );

  await eventually(
    async () => (await statusCounts(gateway.ctx)).TRANSMITTED === total,
    180_000,
    "all invoices TRANSMITTED",
  );
  assert.deepEqual(await statusCounts(gateway.ctx), { TRANSMITTED: total });
  assert.ok(
    proxied.stats.errors > 0 && proxied.stats.held > 0 && proxied.stats.dropped > 0,
    JSON.stringify(proxied.stats),
  );

  // The authority holds exactly these invoices, each once, each transmitted.
  assert.deepEqual(await statusCounts(authority.ctx), { TRANSMITTED: total });
  const held = await authority.ctx.db
    .selectFrom("invoices")
    .select("irn")
    .where("business_id", "=", upstream.business_id)
    .execute();
  assert.deepEqual(new Set(held.map((r) => r.irn)), new Set(invoices.map((i) => String(i.irn))));
  // No invoice was accepted by the authority twice: repeats met `IRN already exists.` and reconciled.
  assert.deepEqual(
    [...proxied.accepted.values()].filter((n) => n > 1),
    [],
  );
  const stats = await gateway.ctx.transmission.stats();
  assert.deepEqual(
    stats.filter((s) => s.kind === "delivery").map((s) => [s.state, s.count]),
    [["done", total]],
  );
});

test("webhooks: events are signed t=<unix>,v1=<HMAC>, retried until accepted, and deduplicable by id", async (t) => {
  const { app, ctx, startWorker } = await build(t, { ...FAST, EINVOICE_TRANSMIT_WAIT_MS: "2000" });
  const a = await tenant(ctx);
  const received: { id: string; type: string; signature: string; body: string; data: Json }[] = [];
  let refuseNext = 1;
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const event = JSON.parse(body) as { id: string; type: string; created_at: string; data: Json };
      received.push({
        id: event.id,
        type: event.type,
        signature: String(req.headers["x-einvoice-signature"]),
        body,
        data: event.data,
      });
      // The first delivery fails: the same event must come again.
      if (refuseNext > 0) {
        refuseNext -= 1;
        res.writeHead(500).end();
        return;
      }
      res.writeHead(204).end();
    });
  });
  receiver.listen(0, "127.0.0.1");
  await new Promise((resolve) => receiver.once("listening", resolve));
  t.after(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
  const { secret } = await ctx.webhooks.set(
    a.business_id,
    `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
  );
  assert.match(secret, /^whsec_/);
  startWorker();

  const invoice = freshInvoice(a, "invoice-minimal");
  const irn = String(invoice.irn);
  assert.equal(
    (await app.inject({ method: "POST", url: `${API}/sign-transmit`, headers: a.headers, payload: invoice }))
      .statusCode,
    200,
  );
  const paid = await app.inject({
    method: "PATCH",
    url: `${API}/update/${irn}`,
    headers: a.headers,
    payload: { payment_status: "PAID" },
  });
  assert.equal(paid.statusCode, 200);

  const unique = () => new Map(received.map((r) => [r.id, r]));
  await eventually(
    async () => unique().size === 3 && received.length === 4,
    10_000,
    "three events, one of them twice",
  );
  const events = [...unique().values()];
  assert.deepEqual(events.map((e) => e.type).sort(), [
    "invoice.payment_updated",
    "invoice.signed",
    "invoice.transmitted",
  ]);
  for (const event of received) {
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(event.signature);
    assert.ok(match, event.signature);
    const expected = createHmac("sha256", secret).update(`${match[1]}.${event.body}`).digest("hex");
    assert.equal(match[2], expected, "the signature verifies with the secret");
    assert.ok(Math.abs(Number(match[1]) - Date.now() / 1000) < 60);
    assert.equal(event.data.irn, irn);
  }
  const repeated = received.filter((r) => r.id === received[0]?.id);
  assert.equal(repeated.length, 2, "the refused event came again under the same id");
  assert.equal(repeated[0]?.body, repeated[1]?.body, "with the same body");
  const transmitted = events.find((e) => e.type === "invoice.transmitted");
  assert.equal(transmitted?.data.status, "TRANSMITTED");
  assert.equal(events.find((e) => e.type === "invoice.payment_updated")?.data.payment_status, "PAID");
  assert.equal(
    JSON.stringify(received).includes("Okafor"),
    false,
    "events carry state, not the invoice's content",
  );
});

test("a refusal by the authority is final: TRANSMISSION_FAILED at once; a later transmit re-queues it", async (t) => {
  const authority = await build(t);
  const authorityPort = await freePort();
  await authority.app.listen({ port: authorityPort, host: "127.0.0.1" });
  const upstream = await tenant(authority.ctx);
  const gateway = await build(t, {
    ...FAST,
    EINVOICE_AUTHORITY: "http",
    EINVOICE_AUTHORITY_URL: `http://127.0.0.1:${authorityPort}`,
    EINVOICE_AUTHORITY_API_KEY: upstream.api_key,
    EINVOICE_AUTHORITY_API_SECRET: upstream.api_secret,
    EINVOICE_TRANSMIT_WAIT_MS: "3000",
  });
  // The gateway's business is not the one the upstream credential acts for: the authority refuses.
  const stranger = await tenant(gateway.ctx);
  const invoice = freshInvoice(stranger, "invoice-minimal");
  const irn = String(invoice.irn);
  const res = await gateway.app.inject({
    method: "POST",
    url: `${API}/sign-transmit`,
    headers: stranger.headers,
    payload: invoice,
  });
  assert.equal(res.statusCode, 400, res.body);
  assert.equal(res.json().message, "Transmission failed");
  assert.match(res.json().error.details, /Failed to validate invoice/);
  const lookup = (await gateway.app.inject({ url: `${API}/lookup/${irn}`, headers: stranger.headers })).json()
    .data;
  assert.equal(lookup.status, "TRANSMISSION_FAILED");
  assert.deepEqual(
    lookup.attempts.map((a: { outcome: string }) => a.outcome),
    ["rejected"],
    "a refusal is not retried",
  );

  // The same IRN held upstream with another document is refused too, never overwritten.
  const mirrored = await tenant(gateway.ctx, { id: upstream.business_id, serviceId: upstream.service_id });
  const theirs = freshInvoice(upstream, "invoice-minimal");
  await authority.app.inject({
    method: "POST",
    url: `${API}/sign`,
    headers: upstream.headers,
    payload: { ...theirs, note: "upstream's own" },
  });
  const clash = await gateway.app.inject({
    method: "POST",
    url: `${API}/sign-transmit`,
    headers: mirrored.headers,
    payload: theirs,
  });
  assert.equal(clash.statusCode, 400);
  assert.match(clash.json().error.details, /different document/);

  // Once the upstream holds an identical copy (an earlier attempt got through), it counts as delivered.
  const same = freshInvoice(upstream, "invoice-minimal");
  await authority.app.inject({
    method: "POST",
    url: `${API}/sign`,
    headers: upstream.headers,
    payload: same,
  });
  const reconciled = await gateway.app.inject({
    method: "POST",
    url: `${API}/sign-transmit`,
    headers: mirrored.headers,
    payload: same,
  });
  assert.equal(reconciled.statusCode, 200, reconciled.body);
  const there = (
    await authority.app.inject({ url: `${API}/lookup/${String(same.irn)}`, headers: upstream.headers })
  ).json().data;
  assert.equal(there.status, "TRANSMITTED", "the gateway had the upstream transmit its copy");
});

test("behind a gateway, an upstream that replays its queued 503 for the IRN's Idempotency-Key is reconciled: TRANSMITTED once", async (t) => {
  // gateway → upstream → authority, the authority down at first: the upstream answers the gateway's
  // sign-transmit with a queued 503, and replays it to every retry with the same key (the IRN).
  const authority = await build(t);
  const authorityPort = await freePort();
  const business = await tenant(authority.ctx);
  const upstream = await listen(t, {
    ...FAST,
    EINVOICE_AUTHORITY: "http",
    EINVOICE_AUTHORITY_URL: `http://127.0.0.1:${authorityPort}`,
    EINVOICE_AUTHORITY_API_KEY: business.api_key,
    EINVOICE_AUTHORITY_API_SECRET: business.api_secret,
    EINVOICE_TRANSMIT_WAIT_MS: "200",
    EINVOICE_DELIVERY_TIMEOUT_MS: "200",
  });
  const there = await tenant(upstream.ctx, { id: business.business_id, serviceId: business.service_id });
  const gateway = await build(t, {
    ...FAST,
    EINVOICE_AUTHORITY: "http",
    EINVOICE_AUTHORITY_URL: upstream.url,
    EINVOICE_AUTHORITY_API_KEY: there.api_key,
    EINVOICE_AUTHORITY_API_SECRET: there.api_secret,
    EINVOICE_TRANSMIT_WAIT_MS: "100",
    EINVOICE_DELIVERY_TIMEOUT_MS: "3000",
  });
  const here = await tenant(gateway.ctx, { id: business.business_id, serviceId: business.service_id });
  const invoice = freshInvoice(here, "invoice-minimal");
  const irn = String(invoice.irn);
  const res = await gateway.app.inject({
    method: "POST",
    url: `${API}/sign-transmit`,
    headers: here.headers,
    payload: invoice,
  });
  assert.equal(res.statusCode, 503, res.body);
  gateway.startWorker();
  const lookup = async (at: typeof gateway, who: typeof here) =>
    (await at.app.inject({ url: `${API}/lookup/${irn}`, headers: who.headers })).json().data;
  await eventually(
    async () => (await lookup(gateway, here)).attempts.length >= 3,
    10_000,
    "several attempts while the authority is down",
  );
  const replayed = await upstream.ctx.db
    .selectFrom("idempotency_keys")
    .select(["idempotency_key", "status"])
    .execute();
  assert.deepEqual(replayed, [{ idempotency_key: irn, status: 503 }], "the upstream kept its queued answer");

  await authority.app.listen({ port: authorityPort, host: "127.0.0.1" });
  await eventually(
    async () => (await lookup(gateway, here)).status === "TRANSMITTED",
    15_000,
    "the gateway's invoice TRANSMITTED",
  );
  assert.equal((await lookup(upstream, there)).status, "TRANSMITTED");
  const held = (await authority.app.inject({ url: `${API}/${irn}`, headers: business.headers })).json().data;
  assert.equal(held.status, "TRANSMITTED");
  assert.equal((held.history as { type: string }[]).filter((e) => e.type === "signed").length, 1);
});

test("outbox status and /metrics report jobs by kind and state", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  await ctx.webhooks.set(a.business_id, "http://127.0.0.1:9/never");
  for (let i = 0; i < 3; i++) {
    const payload = freshInvoice(a, "invoice-minimal");
    assert.equal(
      (await app.inject({ method: "POST", url: `${API}/sign-transmit`, headers: a.headers, payload }))
        .statusCode,
      200,
    );
  }
  const stats = await ctx.transmission.stats();
  assert.deepEqual(stats.map((s) => [s.kind, s.state, s.count]).sort(), [
    ["delivery", "done", 3],
    ["webhook", "pending", 6],
  ]);
  const metrics = await app.inject({ url: "/metrics" });
  assert.equal(metrics.statusCode, 200, "no credentials needed");
  assert.match(metrics.body, /einvoice_outbox_jobs\{kind="delivery",state="done"\} 3/);
  assert.match(metrics.body, /einvoice_outbox_jobs\{kind="webhook",state="pending"\} 6/);
  assert.match(metrics.body, /einvoice_outbox_oldest_pending_seconds\{kind="webhook"\} \d/);
  assert.match(metrics.body, /einvoice_outbox_settled_total\{kind="delivery",outcome="delivered"\} 3/);
});
