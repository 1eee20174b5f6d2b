import assert from "node:assert/strict";
import { test } from "node:test";
import { freePort } from "../cli/run.ts";
import { build, eventually, freshInvoice, type Json, tenant } from "../helpers.ts";
import { BLOCKED_PAGE, firewall } from "./firewall.ts";
import { FAST } from "./pair.ts";

// The `http` connector (to another instance of this API) behind a real web firewall: a 401 or 403
// to a call that carried an invoice is judged by a call that carries none and needs the
// credential, the upstream's health check (`GET /`, 401 without valid credentials).

const API = "/api/v1/einvoice";
const PROBE = "GET /";

type Lookup = Json & { status: string; attempts: Array<{ outcome: string; error?: string }> };

test("http: a refused credential opens the hold, which the health check, not an invoice, lifts; a firewall's 403 to one invoice's note holds nothing and fails that invoice on its own budget", {
  timeout: 60_000,
}, async (t) => {
  const authority = await build(t);
  const port = await freePort();
  await authority.app.listen({ port, host: "127.0.0.1" });
  const upstream = await tenant(authority.ctx);
  const waf = await firewall(t, `http://127.0.0.1:${port}`, {
    blocks: (request) => request.body.includes("<script>"),
    secretHeader: "api-secret",
  });
  const gateway = await build(t, {
    ...FAST,
    EINVOICE_AUTHORITY: "http",
    EINVOICE_AUTHORITY_URL: waf.url,
    EINVOICE_AUTHORITY_API_KEY: upstream.api_key,
    EINVOICE_AUTHORITY_API_SECRET: upstream.api_secret,
    EINVOICE_TRANSMIT_WAIT_MS: "3000",
    EINVOICE_MAX_ATTEMPTS: "3",
    EINVOICE_AUTHORITY_PROBE_MS: "300",
  });
  const local = await tenant(gateway.ctx, { id: upstream.business_id, serviceId: upstream.service_id });
  const signTransmit = (payload: Json) =>
    gateway.app.inject({ method: "POST", url: `${API}/sign-transmit`, headers: local.headers, payload });
  const lookupOf = async (irn: string): Promise<Lookup> =>
    (await gateway.app.inject({ url: `${API}/lookup/${irn}`, headers: local.headers })).json().data;
  const holds = async () => (await gateway.ctx.db.selectFrom("authority_holds").selectAll().execute()).length;

  // The upstream does not take the secret (revoked there, say): its own 401, and the health check
  // refused too.
  waf.replaceSecret("not-the-secret");
  const late = freshInvoice(local, "invoice-minimal");
  const held = await signTransmit(late);
  assert.equal(held.statusCode, 503, held.body);
  assert.equal(await holds(), 1, "the hold opened");
  const [row] = await gateway.ctx.db.selectFrom("authority_holds").selectAll().execute();
  assert.match(String(row?.reason), /^credential probe \(health check\): upstream answered 401/);
  // The worker starts once the hold stands (the bounded wait opened it): none of its jobs was on
  // its way before, so whatever it sends from now on is sent during the hold.
  const opened = waf.seen.length;
  gateway.startWorker(2);
  await eventually(
    async () => ((await gateway.ctx.transmission.authorityHold())?.probes ?? 0) >= 2,
    10_000,
    "two probes",
  );
  assert.deepEqual(
    waf.seen.slice(opened).filter((s) => `${s.method} ${s.path}` !== PROBE),
    [],
    "while it stands, only the health check",
  );
  waf.replaceSecret(undefined);
  await eventually(
    async () => (await lookupOf(String(late.irn))).status === "TRANSMITTED",
    10_000,
    "delivered",
  );
  const after = waf.seen.slice(opened);
  const lifted = after.findIndex((s) => s.status < 300);
  assert.equal(`${after[lifted]?.method} ${after[lifted]?.path}`, PROBE, "the first call that passed");
  assert.equal(await holds(), 0);

  // The credential passes again, and one tenant's invoice carries what the firewall refuses.
  const attack = freshInvoice(local, "invoice-minimal");
  attack.note = "<script>alert(1)</script>";
  const queued = await signTransmit(attack);
  assert.equal(queued.statusCode, 503, queued.body);
  assert.doesNotMatch(queued.body, /paused/);
  const clean = freshInvoice(local, "invoice-minimal");
  const delivered = await signTransmit(clean);
  assert.equal(delivered.statusCode, 200, delivered.body);
  await eventually(
    async () => (await lookupOf(String(attack.irn))).status === "TRANSMISSION_FAILED",
    20_000,
    "the refused invoice failed out",
  );
  const refused = await lookupOf(String(attack.irn));
  assert.deepEqual(
    refused.attempts.map((a) => a.outcome),
    ["error", "error", "error"],
  );
  for (const a of refused.attempts) {
    assert.ok(
      String(a.error).startsWith(`upstream answered 403 ${JSON.stringify(BLOCKED_PAGE.slice(0, 200))}`),
    );
  }
  assert.equal(await holds(), 0, "no hold row");
  assert.ok(waf.seen.some((s) => `${s.method} ${s.path}` === PROBE && s.status === 200));
});
