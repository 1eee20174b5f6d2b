import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import { test } from "node:test";
import type { InjectOptions } from "fastify";
import pg from "pg";
import pino from "pino";
import { loadConfig } from "../../src/config.ts";
import { rotateSandboxDataKey } from "../../src/crypto/keyring.ts";
import { createContext, createServer } from "../../src/main.ts";
import {
  build,
  ENGINE,
  fixture,
  freshDatabase,
  freshInvoice,
  type Json,
  rawStorage,
  tempDir,
  tenant,
} from "../helpers.ts";

const API = "/api/v1/einvoice";

function envelope(
  res: { statusCode: number; headers: Record<string, unknown>; json(): Json },
  status: number,
) {
  assert.equal(res.statusCode, status);
  const body = res.json() as Json & { error: Json };
  assert.equal(body.status, false);
  assert.equal(body.code, status);
  assert.equal(body.data, null);
  assert.equal(typeof body.message, "string");
  assert.match(String(body.timestamp), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  return body;
}

test("rate limit per credential: 429 in the envelope with Retry-After; other credentials unaffected", async (t) => {
  const { app, ctx } = await build(t, { EINVOICE_RATE_LIMIT_PER_MIN: "5" });
  const a = await tenant(ctx);
  const b = await tenant(ctx);
  for (let i = 0; i < 5; i++)
    assert.equal((await app.inject({ url: "/", headers: a.headers })).statusCode, 200);
  const limited = await app.inject({ url: "/", headers: a.headers });
  const body = envelope(limited, 429);
  assert.equal(body.message, "Too many requests");
  assert.match(String(limited.headers["retry-after"]), /^\d+$/);
  assert.ok(Number(limited.headers["retry-after"]) >= 1 && Number(limited.headers["retry-after"]) <= 60);
  assert.equal((await app.inject({ url: "/", headers: b.headers })).statusCode, 200, "B has its own budget");
});

test("bounded input: nesting depth, line count and body size", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const post = (payload: string) =>
    app.inject({
      method: "POST",
      url: `${API}/validate`,
      headers: { ...a.headers, "content-type": "application/json" },
      payload,
    });

  const deep = envelope(await post(`${"[".repeat(100_000)}${"]".repeat(100_000)}`), 400);
  assert.match(String((deep.error as Json).details), /nests deeper than 64/);
  // Brackets inside strings are text, not nesting.
  const text = await post(JSON.stringify({ ...fixture("invoice-minimal", a), note: "[".repeat(1000) }));
  assert.equal(text.statusCode, 200, text.body);

  const many = envelope(
    await post(
      JSON.stringify({
        ...fixture("invoice-minimal", a),
        invoice_line: Array.from({ length: 10_001 }, () => ({})),
      }),
    ),
    400,
  );
  const violations = (many.error as { violations: { path: string; rule: string }[] }).violations;
  assert.ok(
    violations.some((v) => v.path === "invoice_line" && v.rule === "maxItems"),
    "at most 10,000 lines",
  );

  envelope(await post(JSON.stringify({ note: "x".repeat(1024 * 1024) })), 413);
});

test("/healthz answers without credentials; /readyz reports the database", async (t) => {
  const { app } = await build(t);
  const live = await app.inject({ url: "/healthz" });
  assert.equal(live.statusCode, 200);
  assert.deepEqual(live.json(), { status: "ok" });
  const ready = await app.inject({ url: "/readyz" });
  assert.equal(ready.statusCode, 200);
  assert.deepEqual(ready.json(), { status: "ready" });
});

test("the database lost mid-run gives 503 envelopes with Retry-After, then the service recovers by itself", async (t) => {
  const { app, ctx, dbFile, databaseUrl } = await build(t, { EINVOICE_DB_STATEMENT_TIMEOUT_MS: "1000" });
  const a = await tenant(ctx);
  const sign = (payload: Json) =>
    app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload });
  const expectUnavailable = (res: Awaited<ReturnType<typeof sign>>) => {
    const body = envelope(res, 503);
    assert.match(String((body.error as Json).details), /retry/);
    assert.match(String(res.headers["retry-after"]), /^\d+$/);
  };
  const invoice = freshInvoice(a, "invoice-minimal");
  if (ENGINE === "postgres") {
    // The test's database, without the application name that marks the service's connections.
    const adminUrl = new URL(databaseUrl);
    adminUrl.search = "";
    const admin = new pg.Client({ connectionString: adminUrl.toString() });
    await admin.connect();
    t.after(() => admin.end());
    // The database stops answering (a lock held past the statement timeout)…
    const schema = new URL(databaseUrl).searchParams.get("application_name") as string;
    await admin.query("begin");
    await admin.query(`lock table ${schema}.businesses in access exclusive mode`);
    expectUnavailable(await sign(invoice));
    await admin.query("rollback");
    // …or drops every connection, as a restart or failover would.
    const cut = await admin.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1",
      [schema],
    );
    assert.ok((cut.rowCount ?? 0) > 0, "the service's connections were cut");
  } else {
    // Another process holds the write lock longer than the busy timeout.
    const { default: SQLite } = await import("better-sqlite3");
    const holder = new SQLite(dbFile as string);
    holder.exec("begin exclusive");
    try {
      expectUnavailable(await sign(invoice));
    } finally {
      holder.exec("rollback");
      holder.close();
    }
  }
  // Recovery needs no restart: at most a few more 503s while dead connections are discarded.
  let again = await sign(invoice);
  for (let i = 0; i < 20 && again.statusCode === 503; i++) {
    expectUnavailable(again);
    await new Promise((resolve) => setTimeout(resolve, 100));
    again = await sign(invoice);
  }
  assert.equal(again.statusCode, 200, `recovered without a restart: ${again.body}`);
  assert.equal((await app.inject({ url: "/readyz" })).statusCode, 200);
});

test("keys rotate-data-key: old rows are re-encrypted under the new key and stay readable", async (t) => {
  const dir = tempDir(t);
  const database = await freshDatabase(dir);
  const env = { EINVOICE_DATABASE_URL: database.url, EINVOICE_DATA_DIR: dir, EINVOICE_LOG_LEVEL: "silent" };
  const before = await createContext(loadConfig(env));
  const app = await createServer(before, pino({ level: "silent" }));
  const a = await tenant(before);
  const invoices = [freshInvoice(a, "invoice-full"), freshInvoice(a, "invoice-full")];
  for (const payload of invoices)
    await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload });
  const hook = await before.webhooks.set(a.business_id, "https://erp.example/hooks");
  await app.close();
  await before.close();

  const kid = rotateSandboxDataKey(dir);
  assert.equal(kid, "k2");
  const after = await createContext(loadConfig(env));
  const app2 = await createServer(after, pino({ level: "silent" }));
  t.after(async () => {
    await app2.close();
    await after.close();
    await database.drop();
  });
  // Before the re-encryption the old rows are still readable with the old key kept in the ring.
  const old = (await app2.inject({ url: `${API}/${String(invoices[0]?.irn)}`, headers: a.headers })).json()
    .data;
  assert.equal(old.document.payment_terms_note, invoices[0]?.payment_terms_note);

  assert.deepEqual(await after.dataKeys.resealAll(), { kid: "k2", invoices: 2, webhooks: 1, received: 0 });
  assert.deepEqual(
    await after.dataKeys.resealAll(),
    { kid: "k2", invoices: 0, webhooks: 0, received: 0 },
    "idempotent",
  );
  const rows = await after.db.selectFrom("invoices").select("sealed").execute();
  assert.ok(
    rows.every((r) => r.sealed?.startsWith("v1.k2.")),
    "every row under the new key",
  );
  const storedHook = await after.db.selectFrom("webhooks").select("secret").executeTakeFirstOrThrow();
  assert.ok(storedHook.secret.startsWith("v1.k2."));
  assert.equal(after.config.dataDir, dir);

  for (const invoice of invoices) {
    const record = (await app2.inject({ url: `${API}/${String(invoice.irn)}`, headers: a.headers })).json()
      .data;
    assert.equal(record.document.payment_terms_note, invoice.payment_terms_note, "readable after rotation");
  }
  assert.deepEqual(
    await after.audit.verify(),
    { checked: 2, broken: [] },
    "signatures are over the plaintext: unaffected",
  );
  const stored = await rawStorage(after, database.file);
  assert.equal(stored.includes(Buffer.from(String(invoices[0]?.payment_terms_note))), false);
  assert.equal(stored.includes(Buffer.from(hook.secret)), false);
  const secrets = JSON.parse(fs.readFileSync(path.join(dir, "secrets.json"), "utf8")) as {
    data_keys: { kid: string }[];
  };
  assert.deepEqual(
    secrets.data_keys.map((k) => k.kid),
    ["k2", "k1"],
  );
});

test("secrets never reach the logs nor any response after creation", async (t) => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString("utf8"));
      done();
    },
  });
  const dir = tempDir(t);
  const database = await freshDatabase(dir);
  const ctx = await createContext(
    loadConfig({ EINVOICE_DATABASE_URL: database.url, EINVOICE_DATA_DIR: dir, EINVOICE_LOG_LEVEL: "trace" }),
  );
  const app = await createServer(ctx, pino({ level: "trace" }, sink));
  t.after(async () => {
    await app.close();
    await ctx.close();
    await database.drop();
  });
  const a = await tenant(ctx);
  const hook = await ctx.webhooks.set(a.business_id, "https://erp.example/hooks");
  const responses: string[] = [];
  const call = async (req: InjectOptions) => {
    const res = await app.inject(req);
    responses.push(res.body);
    return res;
  };
  const invoice = fixture("invoice-full", a);
  const irn = String(invoice.irn);
  await call({ method: "POST", url: `${API}/sign-transmit`, headers: a.headers, payload: invoice });
  await call({ url: `${API}/${irn}`, headers: a.headers });
  await call({ url: `${API}/lookup/${irn}`, headers: a.headers });
  await call({ url: "/", headers: { "api-key": a.api_key, "api-secret": `${a.api_secret}x` } });
  await call({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: "{broken" });
  await call({ url: "/.well-known/jwks.json" });
  await call({ url: "/metrics" });
  await ctx.businesses.revokeKey(a.api_key);
  await call({ url: "/", headers: a.headers });
  assert.ok(lines.length > 5, "the flow was logged");

  const keyring = JSON.parse(fs.readFileSync(path.join(dir, "secrets.json"), "utf8")) as {
    pepper: string;
    data_keys: { key: string }[];
    qr_keys: string[];
    signing_keys: string[];
  };
  const secrets = [
    a.api_secret,
    hook.secret,
    keyring.pepper,
    ...keyring.data_keys.map((k) => k.key),
    ...[...keyring.qr_keys, ...keyring.signing_keys].map((pem) => pem.split("\n")[1] as string),
  ];
  const logs = lines.join("");
  const answered = responses.join("");
  for (const secret of secrets) {
    assert.equal(logs.includes(secret), false, "a secret appears in the logs");
    assert.equal(answered.includes(secret), false, "a secret appears in a response");
  }
  // The scan can find what is there: the API key (not secret) is in the stored rows, the IRN in the logs.
  assert.equal(logs.includes(irn), true);
});
