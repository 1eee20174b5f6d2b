import assert from "node:assert/strict";
import { test } from "node:test";
import type { Context } from "../../src/main.ts";
import {
  build,
  ENGINE,
  fixture,
  freshInvoice,
  holdWriteLock,
  ISIC_JSON,
  type Tenant,
  tenant,
} from "../helpers.ts";

const API = "/api/v1/einvoice";
type App = Awaited<ReturnType<typeof build>>["app"];

/** How long the other writer holds the lock. */
const HOLD_MS = 1000;
/**
 * The longest the event loop or /healthz may stall meanwhile: a blocked loop stalls ~HOLD_MS. At
 * 200 ms, a loop that never blocked failed once at 231 ms, with six test processes on two cores.
 */
const STALL_LIMIT_MS = 400;

/**
 * The longest gap between turns of a 10 ms timer, and the slowest /healthz, until `stop`. Stopped
 * when the lock is released: what is measured is the wait, not the commit that follows it (an
 * fsync, on the event loop as every commit of better-sqlite3 is).
 */
function probe(app: App) {
  let last = performance.now();
  let longestGap = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
  }, 10);
  let slowestHealth = 0;
  let healthChecks = 0;
  let running = true;
  const health = (async () => {
    while (running) {
      const started = performance.now();
      const res = await app.inject({ url: "/healthz" });
      assert.equal(res.statusCode, 200);
      slowestHealth = Math.max(slowestHealth, performance.now() - started);
      healthChecks += 1;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return async () => {
    running = false;
    clearInterval(ticker);
    longestGap = Math.max(longestGap, performance.now() - last);
    await health;
    return { longestGap, slowestHealth, healthChecks };
  };
}

type Path = {
  name: string;
  /** The table the write changes (what PostgreSQL's lock holds). */
  table: string;
  /** Done before the lock is taken; answers what `write` needs. */
  prepare?: (ctx: Context, app: App, who: Tenant) => Promise<string>;
  write: (ctx: Context, app: App, who: Tenant, prepared: string) => Promise<void>;
};

/** A fresh invoice signed for `who`: its IRN. */
async function signedIrn(app: App, who: Tenant): Promise<string> {
  const invoice = freshInvoice(who, "invoice-minimal");
  const res = await app.inject({
    method: "POST",
    url: `${API}/sign`,
    headers: who.headers,
    payload: invoice,
  });
  assert.equal(res.statusCode, 200, res.body);
  return String(invoice.irn);
}

const PATHS: Path[] = [
  {
    name: "creating a business",
    table: "businesses",
    async write(ctx) {
      const created = await ctx.businesses.add({ name: "Waits Ltd", tin: "12345678-0001" });
      assert.ok(await ctx.businesses.find(created.business_id));
    },
  },
  {
    name: "creating an API key",
    table: "api_keys",
    async write(ctx, _app, who) {
      const key = await ctx.businesses.createKey(who.business_id);
      assert.equal(typeof (await ctx.businesses.authenticate(key.api_key, key.api_secret)), "object");
    },
  },
  {
    name: "revoking an API key",
    table: "api_keys",
    prepare: async (ctx, _app, who) => (await ctx.businesses.createKey(who.business_id)).api_key,
    async write(ctx, _app, _who, apiKey) {
      assert.ok((await ctx.businesses.revokeKey(apiKey)).revoked_at);
    },
  },
  {
    name: "a payment update",
    table: "invoices",
    prepare: (_ctx, app, who) => signedIrn(app, who),
    async write(_ctx, app, who, irn) {
      const res = await app.inject({
        method: "PATCH",
        url: `${API}/update/${irn}`,
        headers: who.headers,
        payload: { payment_status: "PAID", reference: "waited-for-the-lock" },
      });
      assert.equal(res.statusCode, 200, res.body);
    },
  },
  {
    name: "a fiscalization report",
    table: "fiscalization_reports",
    async prepare(_ctx, app, who) {
      const res = await app.inject({
        method: "POST",
        url: `${API}/sign`,
        headers: who.headers,
        payload: fixture("invoice-full", who),
      });
      assert.equal(res.statusCode, 200, res.body);
      return "";
    },
    async write(_ctx, app, who) {
      const res = await app.inject({
        method: "POST",
        url: `${API}/report-fiscalization`,
        headers: who.headers,
        payload: fixture("report-fiscalization", who),
      });
      assert.equal(res.statusCode, 200, res.body);
    },
  },
  {
    name: "queueing a transmission",
    table: "invoices",
    prepare: (_ctx, app, who) => signedIrn(app, who),
    async write(_ctx, app, who, irn) {
      const res = await app.inject({ url: `${API}/transmit/${irn}`, headers: who.headers });
      assert.equal(res.statusCode, 200, res.body);
    },
  },
  {
    name: "a catalog import",
    table: "services",
    async write(ctx) {
      const imported = await ctx.reference.importServices(ISIC_JSON);
      assert.ok(imported.imported > 400);
    },
  },
];

for (const path of PATHS) {
  test(`${path.name} on ${ENGINE} waits for another writer's lock without stalling the event loop`, async (t) => {
    const { app, ctx, dbFile, databaseUrl } = await build(t);
    const who = await tenant(ctx);
    const prepared = (await path.prepare?.(ctx, app, who)) ?? "";
    // Its first answer compiles what later ones reuse: not what is measured.
    assert.equal((await app.inject({ url: "/healthz" })).statusCode, 200);

    const release = await holdWriteLock(dbFile, databaseUrl, path.table);
    const stop = probe(app);
    const started = performance.now();
    let released = false;
    const releasing = new Promise<Awaited<ReturnType<typeof stop>>>((resolve, reject) => {
      setTimeout(async () => {
        const probed = await stop();
        released = true;
        release().then(() => resolve(probed), reject);
      }, HOLD_MS);
    });
    await path.write(ctx, app, who, prepared);
    const elapsed = performance.now() - started;
    const writtenAfterRelease = released;
    const { longestGap, slowestHealth, healthChecks } = await releasing;
    t.diagnostic(
      `write ${elapsed.toFixed(0)} ms; while the lock was held: longest timer gap ${longestGap.toFixed(0)} ms, slowest /healthz ${slowestHealth.toFixed(0)} ms of ${healthChecks}`,
    );
    assert.ok(writtenAfterRelease, "the write waited for the lock (else this test proves nothing)");
    assert.ok(longestGap < STALL_LIMIT_MS, `the event loop stalled ${longestGap.toFixed(0)} ms`);
    assert.ok(slowestHealth < STALL_LIMIT_MS, `/healthz took ${slowestHealth.toFixed(0)} ms`);
    assert.ok(healthChecks >= 10, `only ${healthChecks} /healthz answers in ${HOLD_MS} ms`);
  });
}
