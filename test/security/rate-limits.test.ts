import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import type { InjectOptions, LightMyRequestResponse } from "fastify";
import pino from "pino";
import { loadConfig } from "../../src/config.ts";
import { addressKey, BUCKET_MS, rateCounter } from "../../src/http/rate-counter.ts";
import { createContext, createServer } from "../../src/main.ts";
import { build, ENGINE, eventually, freshDatabase, type Json, tempDir, tenant } from "../helpers.ts";

/** A 429 in the spec's envelope, with a Retry-After of 1 to 60 s; returns `error.details`. */
function tooMany(res: LightMyRequestResponse): string {
  assert.equal(res.statusCode, 429, res.body);
  const body = res.json() as Json & { error: Json };
  assert.equal(body.status, false);
  assert.equal(body.code, 429);
  assert.equal(body.message, "Too many requests");
  assert.equal(body.data, null);
  assert.match(String(res.headers["retry-after"]), /^\d+$/);
  const after = Number(res.headers["retry-after"]);
  assert.ok(after >= 1 && after <= 60, `Retry-After ${after}`);
  assert.match(String(body.error.details), new RegExp(`retry after ${after} s$`));
  return String(body.error.details);
}

/** `build`, with the credential check counted (the real one, wrapped) and the log kept. */
async function counted(t: TestContext, env: Record<string, string>) {
  const dir = tempDir(t);
  const database = await freshDatabase(dir);
  const ctx = await createContext(
    loadConfig({
      EINVOICE_DATABASE_URL: database.url,
      EINVOICE_DATA_DIR: dir,
      EINVOICE_LOG_LEVEL: "silent",
      ...env,
    }),
  );
  const checks = { count: 0 };
  const authenticate = ctx.businesses.authenticate;
  ctx.businesses.authenticate = (apiKey, apiSecret) => {
    checks.count += 1;
    return authenticate(apiKey, apiSecret);
  };
  // The server's own log, warnings and above, one JSON line each.
  const logged: Json[] = [];
  const logger = pino({ level: "warn" }, { write: (line: string) => logged.push(JSON.parse(line)) });
  const app = await createServer(ctx, logger);
  t.after(async () => {
    await app.close();
    await ctx.close();
    await database.drop();
  });
  return { app, ctx, checks, logged };
}

const from = (remoteAddress: string, options: InjectOptions): InjectOptions => ({
  ...options,
  remoteAddress,
});

test("failed authentications: unknown keys limited per address, a key's wrong secrets per address and key, both refused before any check where nothing could pass", async (t) => {
  const { app, ctx, checks } = await counted(t, { EINVOICE_AUTH_FAILURES_PER_MIN: "5" });
  const a = await tenant(ctx);
  const wrong = { "api-key": a.api_key, "api-secret": `${a.api_secret}x` };
  const unknown = (i: number) => ({ "api-key": `ak_unknown_${i}`, "api-secret": "whatever" });
  const attacker = "203.0.113.7";

  // No credentials at all is a failure too, counted for the address as an unknown key is.
  assert.equal((await app.inject(from(attacker, { url: "/" }))).statusCode, 401);
  for (let i = 0; i < 4; i++) {
    assert.equal((await app.inject(from(attacker, { url: "/", headers: unknown(i) }))).statusCode, 401);
  }
  assert.equal(checks.count, 5);
  // Past the limit, a request without credentials is refused before anything is looked up.
  const refused = await app.inject(from(attacker, { url: "/api/v1/einvoice/resources/states" }));
  assert.match(tooMany(refused), /^more than 5 failed authentications in a minute from this address;/);
  assert.equal(checks.count, 5, "no credential check without credentials");
  // An unknown key is looked up (it might have been a good one), then refused all the same.
  tooMany(await app.inject(from(attacker, { url: "/", headers: unknown(99) })));
  assert.equal(checks.count, 6);
  // A good key and secret from the same address are served: others' failures are not theirs.
  assert.equal((await app.inject(from(attacker, { url: "/", headers: a.headers }))).statusCode, 200);

  // Wrong secrets for an existing key count for that key at this address, apart from the above.
  for (let i = 0; i < 5; i++) {
    assert.equal((await app.inject(from(attacker, { url: "/", headers: wrong }))).statusCode, 401);
  }
  const before = checks.count;
  const keyLimited = await app.inject(from(attacker, { url: "/", headers: wrong }));
  assert.match(
    tooMany(keyLimited),
    /^more than 5 failed authentications in a minute from this address with this API key;/,
  );
  // Past it, this key from this address waits, good secret included: no secret can be guessed
  // beyond the limit, and the refusal comes before anything is looked up or hashed.
  tooMany(await app.inject(from(attacker, { url: "/", headers: a.headers })));
  assert.equal(checks.count, before, "no credential check for the limited key");

  // Another address, with the same business's credentials, is served: only its own failures count.
  const office = "198.51.100.20";
  assert.equal((await app.inject(from(office, { url: "/", headers: a.headers }))).statusCode, 200);
  assert.equal((await app.inject(from(office, { url: "/", headers: wrong }))).statusCode, 401);
  assert.equal((await app.inject(from(office, { url: "/", headers: unknown(1) }))).statusCode, 401);
  // Routes without credentials stay open to the limited address: they cost no credential check.
  assert.equal((await app.inject(from(attacker, { url: "/healthz" }))).statusCode, 200);
});

test("a good key keeps working while 200 bad credentials arrive from its address (one NAT); unknown keys stay capped per address", async (t) => {
  const { app, ctx, checks } = await counted(t, { EINVOICE_AUTH_FAILURES_PER_MIN: "5" });
  const a = await tenant(ctx);
  const b = await tenant(ctx);
  const nat = "192.0.2.77";
  // What other clients behind the same address send: nothing, keys that do not exist, a key
  // without its secret, another business's key with a wrong secret.
  const bad: { kind: "address" | "b"; headers: Record<string, string> }[] = [
    { kind: "address", headers: {} },
    { kind: "address", headers: { "api-key": "ak_nobody", "api-secret": "nothing" } },
    { kind: "address", headers: { "api-key": a.api_key } },
    { kind: "b", headers: { "api-key": b.api_key, "api-secret": `${b.api_secret}x` } },
  ];
  const seen = { address: [] as number[], b: [] as number[] };
  for (let i = 0; i < 200; i++) {
    const { kind, headers } = bad[i % bad.length] as (typeof bad)[number];
    // A fresh unknown key each time: a client cannot be told apart by the key it makes up.
    const sent = headers["api-key"] === "ak_nobody" ? { ...headers, "api-key": `ak_nobody_${i}` } : headers;
    const res = await app.inject(from(nat, { url: "/api/v1/einvoice/resources/states", headers: sent }));
    if (res.statusCode === 429) tooMany(res);
    else assert.equal(res.statusCode, 401, res.body);
    seen[kind].push(res.statusCode);
    if (i % 10 === 9) {
      const good = await app.inject(
        from(nat, { url: "/api/v1/einvoice/resources/states", headers: a.headers }),
      );
      assert.equal(good.statusCode, 200, `the good key after ${i + 1} bad requests: ${good.body}`);
    }
  }
  // Each count: five 401s, then 429s only.
  assert.deepEqual(seen.address, [...Array(5).fill(401), ...Array(145).fill(429)]);
  assert.deepEqual(seen.b, [...Array(5).fill(401), ...Array(45).fill(429)]);

  // Unknown keys stay capped for the address; another address has its own count.
  tooMany(await app.inject(from(nat, { url: "/", headers: { "api-key": "ak_x", "api-secret": "y" } })));
  const elsewhere = { url: "/", headers: { "api-key": "ak_x", "api-secret": "y" } };
  assert.equal((await app.inject(from("192.0.2.78", elsewhere))).statusCode, 401);
  // B's key, past its own failures at this address, waits there, good secret included (no secret is
  // guessed past the limit, whoever tries); from anywhere else it is served.
  tooMany(await app.inject(from(nat, { url: "/", headers: b.headers })));
  assert.equal((await app.inject(from("192.0.2.78", { url: "/", headers: b.headers }))).statusCode, 200);
  // Requests without credentials were refused before any check once the address was past its limit.
  assert.ok(checks.count < 150, `${checks.count} credential checks`);
});

test("X-Forwarded-For without a trusted proxy: one warning naming EINVOICE_TRUST_PROXY, on the first such request", async (t) => {
  const warningsIn = (logged: Json[]) => logged.filter((line) => /X-Forwarded-For/.test(String(line.msg)));

  const direct = await counted(t, {});
  assert.equal((await direct.app.inject({ url: "/healthz" })).statusCode, 200);
  assert.deepEqual(warningsIn(direct.logged), [], "no header, no warning");
  const forwarded = { "x-forwarded-for": "203.0.113.9" };
  for (const url of ["/healthz", "/", "/healthz", "/nowhere"]) {
    await direct.app.inject(from("10.0.0.2", { url, headers: forwarded }));
  }
  const warnings = warningsIn(direct.logged);
  assert.equal(warnings.length, 1, JSON.stringify(direct.logged));
  const [warning] = warnings as [Json];
  assert.equal(warning.level, 40, "warn");
  assert.match(String(warning.msg), /set EINVOICE_TRUST_PROXY to the proxies' addresses/);
  assert.equal(warning.remoteAddress, "10.0.0.2");

  // Behind a proxy it trusts, the header is expected: nothing to say.
  for (const trust of ["10.0.0.0/8", "true"]) {
    const proxied = await counted(t, { EINVOICE_TRUST_PROXY: trust });
    await proxied.app.inject(from("10.0.0.2", { url: "/healthz", headers: forwarded }));
    await proxied.app.inject(from("10.0.0.2", { url: "/", headers: forwarded }));
    assert.deepEqual(warningsIn(proxied.logged), [], trust);
  }
});

test("another business's API key cannot spend that business's budget", async (t) => {
  const { app, ctx } = await build(t, { EINVOICE_RATE_LIMIT_PER_MIN: "5" });
  const a = await tenant(ctx);
  const b = await tenant(ctx);
  // A knows B's API key (it is not secret), not its secret: 30 requests under B's name.
  for (let i = 0; i < 30; i++) {
    const res = await app.inject({ url: "/", headers: { "api-key": b.api_key, "api-secret": a.api_secret } });
    assert.equal(res.statusCode, 401);
  }
  // B's budget is whole: five requests, then the credential limit.
  for (let i = 0; i < 5; i++) {
    const res = await app.inject({ url: "/", headers: b.headers });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["x-ratelimit-limit"], "5");
    assert.equal(res.headers["x-ratelimit-remaining"], String(4 - i));
  }
  const limited = await app.inject({ url: "/", headers: b.headers });
  assert.match(tooMany(limited), /^more than 5 requests in a minute with these credentials;/);
  // The limit follows the credential, not the address: A, from the same address, still has its own.
  assert.equal((await app.inject({ url: "/", headers: a.headers })).statusCode, 200);
});

test("routes without credentials are limited per address, unknown paths included", async (t) => {
  const { app, ctx } = await build(t, { EINVOICE_PUBLIC_RATE_LIMIT_PER_MIN: "3" });
  const a = await tenant(ctx);
  const client = "192.0.2.10";
  for (const url of ["/healthz", "/metrics", "/openapi.json"]) {
    assert.equal((await app.inject(from(client, { url }))).statusCode, 200, url);
  }
  for (const url of [
    "/healthz",
    "/metrics",
    "/openapi.json",
    "/readyz",
    "/.well-known/jwks.json",
    "/docs",
    "/nowhere",
  ]) {
    const details = tooMany(await app.inject(from(client, { url })));
    assert.match(
      details,
      /^more than 3 requests in a minute from this address to routes without credentials;/,
    );
  }
  // Another address has its own budget; the API itself is counted per credential, not here.
  assert.equal((await app.inject(from("192.0.2.11", { url: "/metrics" }))).statusCode, 200);
  assert.equal((await app.inject(from(client, { url: "/", headers: a.headers }))).statusCode, 200);
});

test("addresses come from X-Forwarded-For only behind a trusted proxy; IPv6 counts by /64", async (t) => {
  const limits = { EINVOICE_PUBLIC_RATE_LIMIT_PER_MIN: "1" };
  const proxied = await build(t, { ...limits, EINVOICE_TRUST_PROXY: "127.0.0.1" });
  const via = (client: string) =>
    proxied.app.inject({
      url: "/healthz",
      remoteAddress: "127.0.0.1",
      headers: { "x-forwarded-for": client },
    });
  assert.equal((await via("203.0.113.1")).statusCode, 200);
  assert.equal((await via("203.0.113.2")).statusCode, 200, "each client behind the proxy has its own budget");
  tooMany(await via("203.0.113.1"));

  const direct = await build(t, limits);
  const spoof = (client: string) =>
    direct.app.inject({
      url: "/healthz",
      remoteAddress: "198.51.100.1",
      headers: { "x-forwarded-for": client },
    });
  assert.equal((await spoof("203.0.113.1")).statusCode, 200);
  tooMany(await spoof("203.0.113.2"));

  const v6 = (remoteAddress: string) => direct.app.inject({ url: "/healthz", remoteAddress });
  assert.equal((await v6("2001:db8:1:2::1")).statusCode, 200);
  tooMany(await v6("2001:db8:1:2:ffff::9"));
  assert.equal((await v6("2001:db8:1:3::1")).statusCode, 200, "another /64");
  assert.equal(addressKey("2001:DB8:0:0:1::1"), "2001:db8:0:0::/64");
  assert.equal(addressKey("::ffff:192.0.2.1"), "192.0.2.1");
  assert.equal(addressKey("192.0.2.1"), "192.0.2.1");
});

test("the minute slides in 10-second buckets: the budget comes back as the oldest buckets leave", () => {
  let clock = 1_000 * BUCKET_MS + 2_000;
  const counter = rateCounter({ now: () => clock });
  for (let i = 0; i < 3; i++) assert.equal(counter.hit("k", 5).allowed, true);
  clock += 25_000;
  for (let i = 0; i < 2; i++) assert.equal(counter.hit("k", 5).allowed, true);
  const refused = counter.hit("k", 5);
  assert.equal(refused.allowed, false);
  // The first three leave the window when their bucket is a minute old: 58 s after this moment.
  assert.equal(refused.retryAfter, 58 - 25);
  assert.equal(counter.peek("k", 5).allowed, false, "refused requests are not counted");
  clock += 33_000;
  assert.equal(counter.peek("k", 5).allowed, true);
  for (let i = 0; i < 3; i++) assert.equal(counter.hit("k", 5).allowed, true);
  assert.equal(counter.hit("k", 5).allowed, false);
  assert.ok(counter.hit("k", 5).retryAfter <= 60);
});

test("with two API processes on one PostgreSQL database the limits hold for both together", {
  skip: ENGINE !== "postgres" && "PostgreSQL only: SQLite processes count per process (documented)",
}, async (t) => {
  const env = { EINVOICE_RATE_LIMIT_PER_MIN: "10", EINVOICE_AUTH_FAILURES_PER_MIN: "4" };
  const first = await build(t, env);
  const other = await createContext(
    loadConfig({
      EINVOICE_DATABASE_URL: first.databaseUrl,
      EINVOICE_DATA_DIR: first.dir,
      EINVOICE_LOG_LEVEL: "silent",
      ...env,
    }),
  );
  const second = await createServer(other, pino({ level: "silent" }));
  t.after(async () => {
    await second.close();
    await other.close();
  });
  const a = await tenant(first.ctx);
  const call = (app: typeof second, headers: Record<string, string>) => app.inject({ url: "/", headers });

  // Ten requests on the first process spend the credential's budget for the deployment.
  for (let i = 0; i < 10; i++) assert.equal((await call(first.app, a.headers)).statusCode, 200);
  tooMany(await call(first.app, a.headers));
  const shared = async () => {
    const rows = await other.db
      .selectFrom("rate_limit_hits")
      .select("hits")
      .where("key", "=", `credential:${a.api_key}`)
      .execute();
    return rows.reduce((sum, row) => sum + Number(row.hits), 0);
  };
  await eventually(async () => (await shared()) === 10, 5000, "the first process's exchange");
  // The second process knows nothing of the credential until it exchanges its first count (about
  // once a second): that one request is what a deployment may serve beyond the budget.
  assert.equal((await call(second, a.headers)).statusCode, 200);
  await eventually(async () => (await shared()) === 11, 5000, "the second process's exchange");
  let served = 0;
  await eventually(
    async () => {
      const res = await call(second, a.headers);
      if (res.statusCode === 200) served += 1;
      else tooMany(res);
      return res.statusCode === 429;
    },
    5000,
    "the second process to refuse the spent credential",
  );
  // Only between its upsert and the read that follows it could one more have passed.
  assert.ok(served <= 1, `${served} served after the exchange`);
  for (let i = 0; i < 3; i++) tooMany(await call(second, a.headers));

  // Failed authentications add up across processes too.
  const wrong = { "api-key": a.api_key, "api-secret": "nope" };
  for (let i = 0; i < 2; i++) assert.equal((await call(first.app, wrong)).statusCode, 401);
  for (let i = 0; i < 2; i++) assert.equal((await call(second, wrong)).statusCode, 401);
  await eventually(
    async () =>
      (await call(first.app, wrong)).statusCode === 429 && (await call(second, wrong)).statusCode === 429,
    5000,
    "both processes to refuse the address past four failures in all",
  );
  const rows = await other.db.selectFrom("rate_limit_hits").selectAll().execute();
  assert.ok(rows.some((r) => r.key === `credential:${a.api_key}` && Number(r.hits) >= 10));
});

test("without its shared table a PostgreSQL process keeps counting on its own", {
  skip: ENGINE !== "postgres" && "PostgreSQL only: SQLite processes count per process (documented)",
}, async (t) => {
  const { app, ctx } = await build(t, { EINVOICE_RATE_LIMIT_PER_MIN: "3" });
  const a = await tenant(ctx);
  await ctx.db.schema.dropTable("rate_limit_hits").execute();
  for (let i = 0; i < 3; i++)
    assert.equal((await app.inject({ url: "/", headers: a.headers })).statusCode, 200);
  tooMany(await app.inject({ url: "/", headers: a.headers }));
  // Exchanges fail in the background meanwhile; requests are neither slowed nor failed by them.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  tooMany(await app.inject({ url: "/", headers: a.headers }));
  assert.equal((await app.inject({ url: "/healthz" })).statusCode, 200);
});
