import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { type TestContext, test } from "node:test";
import pino from "pino";
import { loadConfig } from "../../src/config.ts";
import { newProductionSecrets } from "../../src/crypto/keyring.ts";
import { operatorSession } from "../../src/dashboard/session.ts";
import { openDatabase } from "../../src/db/database.ts";
import { migrateToLatest } from "../../src/db/migrations.ts";
import { type Context, createContext, createServer } from "../../src/main.ts";
import { readQrImage } from "../../src/qr/qr-image-decoder.ts";
import {
  build,
  eventually,
  freshDatabase,
  freshInvoice,
  type Json,
  type Tenant,
  tempDir,
  tenant,
} from "../helpers.ts";
import { pair } from "../transmission/pair.ts";

const API = "/api/v1/einvoice";
const LOGIN = "/dashboard/login";
const FORM = { "content-type": "application/x-www-form-urlencoded" };
const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

type App = Awaited<ReturnType<typeof build>>["app"];

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

const unescapeHtml = (text: string) =>
  text
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&amp;", "&");

function passwordOf(ctx: Context): string {
  const { password } = ctx.operator;
  assert.ok(password, "the sandbox has an operator password");
  return password;
}

/** The sign-in form, posted as a browser would. */
const postLogin = (app: App, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  app.inject({ method: "POST", url: LOGIN, headers: { ...FORM, ...headers }, payload: form(fields) });

/** A business's POST to the API (`sign`, `sign-transmit`, `batch/sign`). */
const submit = (app: App, headers: Record<string, string>, path: string, payload: Json) =>
  app.inject({ method: "POST", url: `${API}/${path}`, headers, payload });

const isHtml = (res: { headers: Record<string, unknown> }) =>
  assert.match(String(res.headers["content-type"]), /^text\/html/);

/** Signs in as the operator; answers the Cookie header that carries the session. */
async function login(app: App, password: string): Promise<string> {
  const res = await postLogin(app, { password });
  assert.equal(res.statusCode, 303, res.body);
  const session = res.cookies.find((c) => c.name === "einvoice_operator");
  assert.ok(session, "a session cookie is set");
  return `einvoice_operator=${session.value}`;
}

/** An operator's browser on `app`: GETs and form POSTs with the session cookie. */
async function operator(app: App, password: string) {
  const cookie = await login(app, password);
  return {
    cookie,
    get: (url: string) => app.inject({ url, headers: { cookie } }),
    post: (url: string, fields: Record<string, string> = {}, headers: Record<string, string> = {}) =>
      app.inject({ method: "POST", url, headers: { ...FORM, cookie, ...headers }, payload: form(fields) }),
  };
}

/** The text of the element `<tag id="id">`, as shown (entities decoded). */
function byId(page: string, tag: string, id: string): string {
  const match = new RegExp(`<${tag} id="${id}">([\\s\\S]*?)</${tag}>`).exec(page);
  assert.ok(match, `the page has <${tag} id="${id}">`);
  return unescapeHtml(match[1] as string);
}

/** The IRNs linked from a table of the page; none when the table is not there. */
function irnsIn(page: string, tableId: string): string[] {
  const table = new RegExp(`<table id="${tableId}">([\\s\\S]*?)</table>`).exec(page)?.[1] ?? "";
  return [...table.matchAll(/<a href="\/dashboard\/invoices\/([^"/]+)">/g)].map((m) =>
    decodeURIComponent(unescapeHtml(m[1] as string)),
  );
}

const nextLink = (page: string) => {
  const href = /<a rel="next" href="([^"]+)"/.exec(page)?.[1];
  return href === undefined ? undefined : unescapeHtml(href);
};

const sorted = (values: Iterable<string>) => [...values].sort();

async function auditOf(ctx: Context, subject: string) {
  const rows = await ctx.db
    .selectFrom("audit_log")
    .select(["actor", "action"])
    .where("subject", "=", subject)
    .orderBy("id")
    .execute();
  return rows.map((r) => `${r.actor} ${r.action}`);
}

async function jobCount(ctx: Context, irn: string): Promise<number> {
  return (await ctx.db.selectFrom("outbox_jobs").select("id").where("irn", "=", irn).execute()).length;
}

test("sign-in: signed-out pages redirect keeping the URL, the session cookie is strict and cannot be forged", async (t) => {
  const { app, ctx } = await build(t);
  const password = passwordOf(ctx);
  const wanted = "/dashboard/invoices?status=SIGNED";

  const out = await app.inject({ url: wanted });
  assert.equal(out.statusCode, 303);
  const location = new URL(String(out.headers.location), "http://x");
  assert.equal(location.pathname, LOGIN);
  assert.equal(location.searchParams.get("next"), wanted);
  const page = await app.inject({ url: `${location.pathname}${location.search}` });
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /<input type="hidden" name="next" value="\/dashboard\/invoices\?status=SIGNED">/);
  // Pages are never cached nor framed, and run no script.
  assert.match(String(page.headers["content-security-policy"]), /default-src 'none'.*frame-ancestors 'none'/);
  assert.equal(page.headers["cache-control"], "no-store");
  // A URL too long to carry through the sign-in lands on the overview instead.
  const long = await app.inject({ url: `/dashboard/invoices?irn=${"A".repeat(2100)}` });
  assert.equal(new URL(String(long.headers.location), "http://x").searchParams.get("next"), "/dashboard");
  assert.equal((await app.inject({ url: String(long.headers.location) })).statusCode, 200);

  const wrong = await postLogin(app, { password: `${password}x`, next: wanted });
  assert.equal(wrong.statusCode, 401);
  assert.match(wrong.body, /That is not the operator password\./);
  assert.equal(wrong.headers["set-cookie"], undefined);

  const right = await postLogin(app, { password, next: wanted });
  assert.equal(right.statusCode, 303);
  assert.equal(right.headers.location, wanted, "back where the operator was going");
  const session = right.cookies.find((c) => c.name === "einvoice_operator");
  assert.ok(session);
  assert.equal(session.httpOnly, true);
  assert.equal(session.sameSite, "Strict");
  assert.equal(session.path, "/dashboard");
  assert.equal(session.maxAge, 12 * 60 * 60);
  const cookie = `einvoice_operator=${session.value}`;
  const inside = await app.inject({ url: wanted, headers: { cookie } });
  assert.equal(inside.statusCode, 200);
  assert.match(inside.body, /<table id="invoices">/);

  // The value is the issue time, signed: a later one under the old signature is refused.
  const value = decodeURIComponent(session.value);
  const issued = /^issued-(\d+)\./.exec(value)?.[1];
  assert.ok(issued, value);
  const forged = `issued-${Number(issued) + 86_400_000}${value.slice(`issued-${issued}`.length)}`;
  const tampered = await app.inject({
    url: "/dashboard",
    headers: { cookie: `einvoice_operator=${encodeURIComponent(forged)}` },
  });
  assert.equal(tampered.statusCode, 303);
  assert.match(String(tampered.headers.location), /^\/dashboard\/login\?/);
  // Signed with the right key, an issue time is accepted; a bare expiry (the earlier format, which
  // no sign-out could end) is not.
  const { cookieSecret } = operatorSession({ operatorPassword: password, pepper: ctx.operator.pepper });
  const signed = (text: string) =>
    `einvoice_operator=${encodeURIComponent(`${text}.${createHmac("sha256", cookieSecret).update(text).digest("base64").replace(/=/g, "")}`)}`;
  const own = await app.inject({ url: "/dashboard", headers: { cookie: signed(`issued-${Date.now()}`) } });
  assert.equal(own.statusCode, 200);
  const legacy = signed(String(Date.now() + 60 * 60 * 1000));
  assert.equal((await app.inject({ url: "/dashboard", headers: { cookie: legacy } })).statusCode, 303);

  // A genuine session ends on its own after twelve hours.
  t.mock.timers.enable({ apis: ["Date"], now: Date.now() + 12 * 60 * 60 * 1000 + 1000 });
  const expired = await app.inject({ url: "/dashboard", headers: { cookie } });
  t.mock.timers.reset();
  assert.equal(expired.statusCode, 303);

  const logout = await app.inject({ method: "POST", url: "/dashboard/logout", headers: { cookie } });
  assert.equal(logout.statusCode, 303);
  assert.equal(logout.headers.location, LOGIN);
  const cleared = logout.cookies.find((c) => c.name === "einvoice_operator");
  assert.ok(cleared, "the cookie is overwritten");
  assert.equal(cleared.value, "");
  assert.equal(cleared.path, "/dashboard");
  assert.ok(cleared.expires !== undefined && cleared.expires.getTime() <= Date.now(), "and expired");

  // A business's API credentials are not an operator's.
  const a = await tenant(ctx);
  const api = await app.inject({ url: "/dashboard", headers: a.headers });
  assert.equal(api.statusCode, 303);
  const before = (await ctx.businesses.list()).length;
  const add = await app.inject({
    method: "POST",
    url: "/dashboard/businesses",
    headers: { ...FORM, ...a.headers },
    payload: form({ name: "Sneaky Ltd", tin: "12345678-0001" }),
  });
  assert.equal(add.statusCode, 401);
  isHtml(add);
  assert.equal((await ctx.businesses.list()).length, before, "nothing was added");
});

test("sign-out ends every session: a captured cookie is refused at once, in another process within a second or two; a changed password ends the sessions before it", async (t) => {
  const first = await build(t);
  const password = passwordOf(first.ctx);
  /** Another API process on the same database and data folder (secrets), as `serve` forks. */
  const processOn = async (env: Record<string, string> = {}) => {
    const ctx = await createContext(
      loadConfig({
        EINVOICE_DATABASE_URL: first.databaseUrl,
        EINVOICE_DATA_DIR: first.dir,
        EINVOICE_LOG_LEVEL: "silent",
        ...env,
      }),
    );
    const app = await createServer(ctx, pino({ level: "silent" }));
    t.after(async () => {
      await app.close();
      await ctx.close();
    });
    return app;
  };
  const second = await processOn();
  const page = (app: App, cookie: string) => app.inject({ url: "/dashboard", headers: { cookie } });
  const signedOut = (res: { statusCode: number; headers: Record<string, unknown> }) => {
    // As for a request with no session at all: to the sign-in page, keeping where it was going.
    assert.equal(res.statusCode, 303);
    assert.equal(String(res.headers.location), `${LOGIN}?next=%2Fdashboard`);
  };

  // A cookie copied from the operator's browser (a shared machine, a proxy log), and the browser's own.
  const captured = await login(first.app, password);
  const browser = await login(first.app, password);
  for (const app of [first.app, second]) {
    assert.equal((await page(app, captured)).statusCode, 200, "any process accepts a session");
  }

  const out = await first.app.inject({
    method: "POST",
    url: "/dashboard/logout",
    headers: { cookie: browser },
  });
  assert.equal(out.statusCode, 303);
  // At once in the process that signed out, for every session issued before it.
  signedOut(await page(first.app, captured));
  signedOut(await page(first.app, browser));
  const post = await first.app.inject({
    method: "POST",
    url: "/dashboard/businesses",
    headers: { ...FORM, cookie: captured },
    payload: form({ name: "After sign-out Ltd", tin: "12345678-0001" }),
  });
  assert.equal(post.statusCode, 401);
  assert.match(post.body, /Signed out/);
  // In the other process as soon as its copy of the last sign-out is renewed (once a second).
  await eventually(async () => (await page(second, captured)).statusCode === 303, 3000, "the other process");
  signedOut(await page(second, captured));

  // Signing in again right after, in either process, gives a session that works everywhere.
  for (const app of [first.app, second]) {
    const fresh = await login(app, password);
    assert.equal((await page(first.app, fresh)).statusCode, 200);
    assert.equal((await page(second, fresh)).statusCode, 200);
  }

  // A changed operator password ends every session issued under the old one: the cookie's
  // signature key is derived from the password. The old password no longer signs in.
  const before = await login(first.app, password);
  const newPassword = "a brand new operator password";
  const changed = await processOn({ EINVOICE_OPERATOR_PASSWORD: newPassword });
  signedOut(await page(changed, before));
  assert.equal((await postLogin(changed, { password })).statusCode, 401);
  const after = await login(changed, newPassword);
  assert.equal((await page(changed, after)).statusCode, 200);
  signedOut(await page(first.app, after));
});

test("the session cookie is Secure when the request came over HTTPS through a trusted proxy, and only then", async (t) => {
  const behind = await build(t, { EINVOICE_TRUST_PROXY: "true" });
  const direct = await build(t);
  const cookieOf = async (built: { app: App; ctx: Context }) => {
    const res = await postLogin(
      built.app,
      { password: passwordOf(built.ctx) },
      { "x-forwarded-proto": "https" },
    );
    assert.equal(res.statusCode, 303);
    return String(res.headers["set-cookie"]);
  };
  assert.match(await cookieOf(behind), /; Secure/);
  // Without a trusted proxy the header is anyone's to send: the connection itself is plain HTTP.
  assert.doesNotMatch(await cookieOf(direct), /; Secure/);
});

test("a form posted from another origin is refused with 403 and does nothing", async (t) => {
  const { app, ctx } = await build(t);
  const browser = await operator(app, passwordOf(ctx));
  const a = await tenant(ctx);
  const revoke = `/dashboard/keys/${encodeURIComponent(a.api_key)}/revoke`;
  const host = "operator.example.ng";

  for (const origin of [
    "https://evil.example",
    `http://${host}.evil.example`,
    `http://${host}:8443`,
    "null",
  ]) {
    const res = await browser.post(revoke, {}, { host, origin });
    assert.equal(res.statusCode, 403, origin);
    isHtml(res);
    assert.match(res.body, /Form refused/);
  }
  assert.equal((await app.inject({ url: "/", headers: a.headers })).statusCode, 200, "the key still works");
  assert.deepEqual(await auditOf(ctx, a.api_key), ["cli key.created"], "no revocation recorded");
  // Signing in from elsewhere is refused too (no login CSRF).
  const elsewhere = await postLogin(
    app,
    { password: passwordOf(ctx) },
    { host, origin: "https://evil.example" },
  );
  assert.equal(elsewhere.statusCode, 403);
  assert.equal(elsewhere.headers["set-cookie"], undefined);

  // The same form from the dashboard's own origin goes through.
  const same = await browser.post(revoke, {}, { host, origin: `https://${host}` });
  assert.equal(same.statusCode, 303);
  assert.equal((await app.inject({ url: "/", headers: a.headers })).statusCode, 401);
});

test("businesses: added through the form and audited; bad input re-shown with its error; names escaped", async (t) => {
  const { app, ctx } = await build(t);
  const browser = await operator(app, passwordOf(ctx));

  const added = await browser.post("/dashboard/businesses", {
    name: "Adaeze Foods Ltd",
    tin: "31845560-0001",
  });
  assert.equal(added.statusCode, 303, added.body);
  const location = String(added.headers.location);
  const id = new RegExp(`^/dashboard/businesses/(${UUID})\\?done=business_added$`).exec(location)?.[1];
  assert.ok(id, location);
  const shown = await browser.get(location);
  assert.equal(shown.statusCode, 200);
  assert.match(shown.body, /<h1>Adaeze Foods Ltd<\/h1>/);
  assert.match(shown.body, /Business added\./);
  const list = await browser.get("/dashboard/businesses");
  assert.match(
    list.body,
    new RegExp(`<a href="/dashboard/businesses/${id}">Adaeze Foods Ltd</a></td><td>31845560-0001</td>`),
  );
  assert.deepEqual(await auditOf(ctx, id), ["dashboard business.created"]);

  const bad = await browser.post("/dashboard/businesses", { name: "Kept & Named Ltd", tin: "abc" });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.body, /<p class="error" role="alert">tin &#39;abc&#39; must be digits, a hyphen, digits/);
  assert.match(bad.body, /<input name="name" value="Kept &amp; Named Ltd"/, "what was typed is kept");
  assert.match(bad.body, /<input name="tin" value="abc"/);
  assert.equal((await ctx.businesses.list()).length, 1, "nothing was added");

  const script = "<script>alert(1)</script> Ltd";
  const hostile = await browser.post("/dashboard/businesses", { name: script, tin: "12345678-0001" });
  assert.equal(hostile.statusCode, 303);
  const pages = await Promise.all(
    [String(hostile.headers.location), "/dashboard/businesses", "/dashboard/invoices"].map(browser.get),
  );
  for (const page of pages) {
    assert.equal(page.statusCode, 200);
    assert.ok(!page.body.includes("<script>"), "never raw markup");
    assert.ok(page.body.includes("&lt;script&gt;alert(1)&lt;/script&gt; Ltd"), "shown as text");
  }
});

test("credentials: a created key works against the API at once; revoked, it fails at once; both audited", async (t) => {
  const { app, ctx } = await build(t);
  const browser = await operator(app, passwordOf(ctx));
  const business = await ctx.businesses.add({ name: "Keyed Ltd", tin: "20198222-0002" });

  const created = await browser.post(`/dashboard/businesses/${business.business_id}/keys`);
  assert.equal(created.statusCode, 200, created.body);
  const apiKey = byId(created.body, "code", "api-key");
  const apiSecret = byId(created.body, "code", "api-secret");
  assert.match(apiKey, /^ak_/);
  const headers = { "api-key": apiKey, "api-secret": apiSecret };
  assert.equal((await app.inject({ url: "/", headers })).statusCode, 200);
  // It acts for that business: it signs the business's invoice.
  const invoice = freshInvoice(business, "invoice-minimal");
  const signed = await submit(app, headers, "sign", invoice);
  assert.equal(signed.statusCode, 200, signed.body);
  const page = await browser.get(`/dashboard/businesses/${business.business_id}`);
  assert.ok(page.body.includes(`action="/dashboard/keys/${apiKey}/revoke"`), "listed with a revoke form");
  assert.ok(!page.body.includes(apiSecret), "the secret is shown once only");

  const revoked = await browser.post(`/dashboard/keys/${apiKey}/revoke`);
  assert.equal(revoked.statusCode, 303);
  assert.equal(revoked.headers.location, `/dashboard/businesses/${business.business_id}?done=key_revoked`);
  assert.equal((await app.inject({ url: "/", headers })).statusCode, 401);
  const after = await browser.get(String(revoked.headers.location));
  assert.ok(!after.body.includes(`action="/dashboard/keys/${apiKey}/revoke"`));
  assert.match(after.body, /badge-revoked/);
  assert.deepEqual(await auditOf(ctx, apiKey), ["dashboard key.created", "dashboard key.revoked"]);
});

/** The minimal invoice issued on `date` (its IRN dated to match), to the customer `customer`. */
function issued(who: Tenant, date: string, customer: string, supplier?: string): Json {
  const doc = freshInvoice(who, "invoice-minimal");
  doc.issue_date = date;
  doc.irn = String(doc.irn).replace(/-\d{8}$/, `-${date.replaceAll("-", "")}`);
  (doc.accounting_customer_party as Json).tin = customer;
  if (supplier) (doc.accounting_supplier_party as Json).tin = supplier;
  return doc;
}

test("invoice search: each filter alone and combined gives exactly the matching IRNs; bad filters are 400", async (t) => {
  const { app, ctx } = await build(t);
  const browser = await operator(app, passwordOf(ctx));
  const a = await tenant(ctx);
  const b = await tenant(ctx);
  const send = async (who: Tenant, path: "sign" | "sign-transmit", doc: Json) => {
    const res = await submit(app, who.headers, path, doc);
    assert.equal(res.statusCode, 200, res.body);
    return String(doc.irn);
  };
  const pay = async (who: Tenant, irn: string, payment_status: string) => {
    const res = await app.inject({
      method: "PATCH",
      url: `${API}/update/${irn}`,
      headers: who.headers,
      payload: { payment_status },
    });
    assert.equal(res.statusCode, 200, res.body);
  };
  const a1 = await send(a, "sign", issued(a, "2026-01-10", "11111111-0001"));
  const a2 = await send(a, "sign-transmit", issued(a, "2026-02-20", "22222222-0001"));
  const a3 = await send(a, "sign", issued(a, "2026-03-30", "11111111-0001"));
  const b1 = await send(b, "sign-transmit", issued(b, "2026-02-20", "11111111-0001", "44444444-0001"));
  const b2 = await send(b, "sign", issued(b, "2026-03-01", "33333333-0001", "44444444-0001"));
  await pay(a, a1, "PAID");
  await pay(b, b1, "REJECTED");

  const search = async (query: string) => {
    const res = await browser.get(`/dashboard/invoices?${query}`);
    assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
    return sorted(irnsIn(res.body, "invoices"));
  };
  const all = [a1, a2, a3, b1, b2];
  const cases: [string, string[]][] = [
    ["", all],
    // The filter form submits every field, the unused ones empty.
    ["irn=&tin=&business_id=&status=&payment_status=&from=&to=", all],
    [`irn=${a2}`, [a2]],
    [`irn=${encodeURIComponent(a2.slice(0, -9))}`, [a2]],
    [`irn=${a2.toLowerCase()}`, []],
    // Wildcards of LIKE and GLOB are plain characters of a prefix.
    ...["%", "_", "*", "?", "[T]"].map((c): [string, string[]] => [`irn=${encodeURIComponent(c)}`, []]),
    [`irn=${encodeURIComponent(`?${a2.slice(1)}`)}`, []],
    [`business_id=${a.business_id}`, [a1, a2, a3]],
    [`business_id=${b.business_id.toUpperCase()}`, [b1, b2]],
    ["tin=11111111-0001", [a1, a3, b1]],
    ["tin=44444444-0001", [b1, b2]],
    ["status=TRANSMITTED", [a2, b1]],
    ["status=SIGNED", [a1, a3, b2]],
    ["status=TRANSMISSION_FAILED", []],
    ["payment_status=PAID", [a1]],
    ["payment_status=REJECTED", [b1]],
    ["payment_status=PENDING", [a2, a3, b2]],
    ["from=2026-02-20", [a2, a3, b1, b2]],
    ["to=2026-02-20", [a1, a2, b1]],
    ["from=2026-02-01&to=2026-03-01", [a2, b1, b2]],
    [`business_id=${b.business_id}&status=TRANSMITTED&tin=11111111-0001`, [b1]],
    [`business_id=${a.business_id}&from=2026-02-01&status=SIGNED`, [a3]],
    ["tin=11111111-0001&payment_status=PENDING", [a3]],
    ["tin=11111111-0001&from=2026-04-01", []],
  ];
  for (const [query, expected] of cases) assert.deepEqual(await search(query), sorted(expected), query);

  for (const [query, field] of [
    ["from=2026-13", "from"],
    ["to=2026-02-31", "to"],
    ["to=yesterday", "to"],
    ["tin=abc", "tin"],
    ["status=LOST", "status"],
    ["business_id=not-a-uuid", "business_id"],
  ]) {
    const res = await browser.get(`/dashboard/invoices?${query}`);
    assert.equal(res.statusCode, 400, query);
    isHtml(res);
    // The field named, with what it must be, once.
    const problems = [...res.body.matchAll(/<li><code>([^<]+)<\/code> ([^<]+)<\/li>/g)];
    assert.deepEqual(
      problems.map((m) => m[1]),
      [`querystring.${field}`],
      query,
    );
  }
  const statusProblem = await browser.get("/dashboard/invoices?status=LOST");
  assert.match(
    unescapeHtml(statusProblem.body),
    /must be one of "SIGNED", "TRANSMITTING", "TRANSMITTED", "TRANSMISSION_FAILED"/,
  );
});

test("invoice search pages by 50: following rel=next gives the rest once, still filtered", async (t) => {
  const { app, ctx } = await build(t);
  const browser = await operator(app, passwordOf(ctx));
  const a = await tenant(ctx);
  const other = await tenant(ctx);
  // Another business's invoice, signed before (so older than) them all: a second page that lost the
  // filter would show it.
  const stray = freshInvoice(other, "invoice-minimal");
  const alone = await submit(app, other.headers, "sign", stray);
  assert.equal(alone.statusCode, 200, alone.body);
  await new Promise((resolve) => setTimeout(resolve, 10));
  const invoices = Array.from({ length: 55 }, () => freshInvoice(a, "invoice-minimal"));
  const batch = await submit(app, a.headers, "batch/sign", { invoices });
  assert.equal(batch.statusCode, 200, batch.body);
  // A batch's invoices often share a millisecond: here all of them do, so the page ends inside a tie.
  const { signed_at } = await ctx.db
    .selectFrom("invoices")
    .select("signed_at")
    .where("business_id", "=", a.business_id)
    .orderBy("signed_at", "desc")
    .executeTakeFirstOrThrow();
  await ctx.db.updateTable("invoices").set({ signed_at }).where("business_id", "=", a.business_id).execute();

  const first = await browser.get(`/dashboard/invoices?business_id=${a.business_id}`);
  const page1 = irnsIn(first.body, "invoices");
  assert.equal(page1.length, 50);
  const next = nextLink(first.body);
  assert.ok(next, "an Older invoices link");
  const second = await browser.get(next);
  assert.equal(second.statusCode, 200);
  const page2 = irnsIn(second.body, "invoices");
  assert.equal(page2.length, 5, "the other five, and not the other business's");
  assert.equal(nextLink(second.body), undefined, "the last page");
  assert.deepEqual(sorted(new Set([...page1, ...page2])), sorted(invoices.map((i) => String(i.irn))));
});

test("invoice page: the record, a QR image that decodes to the record's qr_code, the history; unknown IRN 404", async (t) => {
  const { app, ctx } = await build(t);
  const browser = await operator(app, passwordOf(ctx));
  const a = await tenant(ctx);
  const invoice: Json = { ...freshInvoice(a), note: "</pre><script>alert(1)</script>" };
  const irn = String(invoice.irn);
  const signed = await submit(app, a.headers, "sign", invoice);
  assert.equal(signed.statusCode, 200, signed.body);
  const record = (await app.inject({ url: `${API}/${irn}`, headers: a.headers })).json().data;

  const page = await browser.get(`/dashboard/invoices/${irn}`);
  assert.equal(page.statusCode, 200);
  assert.match(page.body, new RegExp(`<h1>${irn}</h1>`));
  const src = /<img src="(data:image\/png;base64,[A-Za-z0-9+/=]+)"/.exec(page.body)?.[1];
  assert.ok(src, "a PNG QR image");
  assert.equal(await readQrImage(src), record.qr_code);
  const history = byId(page.body, "table", "history");
  assert.match(history, new RegExp(`<td>signed</td><td><code>key:${a.api_key}</code>`));
  assert.ok(page.body.includes("Okafor Building Supplies Ltd"), "the document is shown");
  assert.ok(!page.body.includes("<script>"), "a business's text never becomes markup");
  assert.ok(page.body.includes("&lt;/pre&gt;&lt;script&gt;"));

  const missing = await browser.get(`/dashboard/invoices/NOPE1-${a.service_id}-20261115`);
  assert.equal(missing.statusCode, 404);
  isHtml(missing);
  assert.match(missing.body, /Invoice not found/);
});

test("invoice page of a part-paid invoice: payment status, paid, outstanding and each payment; the search finds PARTIAL", async (t) => {
  const { app, ctx } = await build(t);
  const browser = await operator(app, passwordOf(ctx));
  const a = await tenant(ctx);
  const invoice = freshInvoice(a, "invoice-minimal");
  const irn = String(invoice.irn);
  assert.equal((await submit(app, a.headers, "sign", invoice)).statusCode, 200);
  const other = freshInvoice(a, "invoice-minimal");
  assert.equal((await submit(app, a.headers, "sign", other)).statusCode, 200);
  for (const payload of [
    { payment_status: "PARTIAL", amount: 5000, payment_update_date: "2026-11-16", reference: "TRF-<889>" },
    { payment_status: "PARTIAL", amount: 3000.5, payment_update_date: "2026-11-20" },
  ]) {
    const res = await app.inject({
      method: "PATCH",
      url: `${API}/update/${irn}`,
      headers: a.headers,
      payload,
    });
    assert.equal(res.statusCode, 200, res.body);
  }

  const page = await browser.get(`/dashboard/invoices/${irn}`);
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /<dt>Payment<\/dt><dd><span class="badge badge-partial">PARTIAL<\/span>/);
  assert.equal(byId(page.body, "dd", "amount-paid"), "8000.50 NGN");
  assert.equal(byId(page.body, "dd", "amount-outstanding"), "5974.50 NGN");
  // Cells as shown: tags dropped from the markup first, then entities decoded.
  const table = /<table id="payments">([\s\S]*?)<\/table>/.exec(page.body)?.[1] ?? "";
  const rows = [...table.matchAll(/<tr><td>([\s\S]*?)<\/tr>/g)].map((m) =>
    (m[1] as string)
      .split(/<\/td><td[^>]*>/)
      .map((cell) => unescapeHtml(cell.replace(/<[^>]+>/g, "")).trim())
      .slice(0, 6),
  );
  assert.deepEqual(rows, [
    ["2026-11-16", "5000.00 NGN", "TRF-<889>", "5000.00 NGN", "8975.00 NGN", "PARTIAL"],
    ["2026-11-20", "3000.50 NGN", "—", "8000.50 NGN", "5974.50 NGN", "PARTIAL"],
  ]);
  assert.ok(!page.body.includes("TRF-<889>"), "a reference never becomes markup");
  assert.equal(
    [...byId(page.body, "table", "history").matchAll(/<td>payment_updated<\/td>/g)].length,
    2,
    "and both are in the history",
  );
  const unpaid = await browser.get(`/dashboard/invoices/${String(other.irn)}`);
  assert.equal(byId(unpaid.body, "dd", "amount-outstanding"), "13975.00 NGN");
  assert.match(unpaid.body, /<h2>Payments<\/h2>\s*<p class="muted">None recorded.<\/p>/);

  const search = await browser.get("/dashboard/invoices?payment_status=PARTIAL");
  assert.equal(search.statusCode, 200);
  assert.deepEqual(irnsIn(search.body, "invoices"), [irn]);
  assert.match(search.body, /<option selected>PARTIAL<\/option>/, "the filter shows what it filters by");
});

test("re-queue: a failed transmission is listed, re-queued by the operator, then delivered; others are refused", async (t) => {
  const { authority, authorityPort, upstream, gateway, local } = await pair(t, {
    EINVOICE_MAX_ATTEMPTS: "1",
    EINVOICE_TRANSMIT_WAIT_MS: "3000",
  });
  const browser = await operator(gateway.app, passwordOf(gateway.ctx));
  const lookup = async (irn: string) =>
    (await gateway.app.inject({ url: `${API}/lookup/${irn}`, headers: local.headers })).json().data;
  // With the authority down and one attempt allowed, the first failure is final.
  const failed: string[] = [];
  for (let i = 0; i < 2; i++) {
    const invoice = freshInvoice(local, "invoice-minimal");
    const res = await submit(gateway.app, local.headers, "sign-transmit", invoice);
    assert.equal(res.statusCode, 400, res.body);
    failed.push(String(invoice.irn));
  }
  const [viaOutbox, viaInvoice] = failed as [string, string];
  assert.equal((await lookup(viaOutbox)).status, "TRANSMISSION_FAILED");

  const outbox = await browser.get("/dashboard/outbox");
  assert.deepEqual(sorted(irnsIn(outbox.body, "failed-transmissions")), sorted(failed));
  assert.ok(outbox.body.includes(`action="/dashboard/invoices/${viaOutbox}/requeue"`));
  assert.match((await browser.get("/dashboard")).body, /<strong>2<\/strong> failed transmissions/);

  await authority.app.listen({ port: authorityPort, host: "127.0.0.1" });
  const requeued = await browser.post(`/dashboard/invoices/${viaOutbox}/requeue`, { back: "outbox" });
  assert.equal(requeued.statusCode, 303, requeued.body);
  assert.equal(requeued.headers.location, "/dashboard/outbox?done=requeued");
  const fromPage = await browser.post(`/dashboard/invoices/${viaInvoice}/requeue`, { back: "invoice" });
  assert.equal(fromPage.statusCode, 303, fromPage.body);
  assert.equal(fromPage.headers.location, `/dashboard/invoices/${viaInvoice}?done=requeued`);
  const shown = await browser.get("/dashboard/outbox?done=requeued");
  assert.match(shown.body, /Transmission re-queued/);
  assert.deepEqual(irnsIn(shown.body, "failed-transmissions"), [], "no longer failed");
  const history = (await gateway.app.inject({ url: `${API}/${viaOutbox}`, headers: local.headers })).json()
    .data.history as { type: string; actor: string }[];
  assert.equal(history.at(-1)?.type, "transmission_queued");
  assert.equal(history.at(-1)?.actor, "dashboard", "the operator, not the business, queued it");
  const invoicePage = await browser.get(String(fromPage.headers.location));
  assert.match(invoicePage.body, /Transmission re-queued/);
  assert.match(
    byId(invoicePage.body, "table", "history"),
    /<td>transmission_queued<\/td><td><code>dashboard<\/code>/,
  );

  gateway.startWorker();
  for (const irn of failed) {
    await eventually(async () => (await lookup(irn)).status === "TRANSMITTED", 10_000, `${irn} TRANSMITTED`);
    const there = await authority.app.inject({ url: `${API}/lookup/${irn}`, headers: upstream.headers });
    assert.equal(there.json().data.status, "TRANSMITTED", "the authority holds it");
  }
  assert.deepEqual(irnsIn((await browser.get("/dashboard/outbox")).body, "failed-transmissions"), []);

  // Delivered, or never sent: not the operator's to re-queue.
  const signedOnly = freshInvoice(local, "invoice-minimal");
  assert.equal((await submit(gateway.app, local.headers, "sign", signedOnly)).statusCode, 200);
  for (const [irn, status] of [
    [viaOutbox, "TRANSMITTED"],
    [String(signedOnly.irn), "SIGNED"],
  ] as const) {
    const jobs = await jobCount(gateway.ctx, irn);
    const refused = await browser.post(`/dashboard/invoices/${irn}/requeue`, { back: "outbox" });
    assert.equal(refused.statusCode, 400, irn);
    assert.match(refused.body, new RegExp(`is ${status}: only an invoice whose transmission failed`));
    assert.equal(await jobCount(gateway.ctx, irn), jobs, "no new outbox job");
    assert.equal((await lookup(irn)).status, status);
  }
});

test("a re-queue clicked five times at once queues the invoice once; so do five concurrent transmits", async (t) => {
  const { gateway, local } = await pair(t, { EINVOICE_MAX_ATTEMPTS: "1", EINVOICE_TRANSMIT_WAIT_MS: "2000" });
  const browser = await operator(gateway.app, passwordOf(gateway.ctx));
  const queuedEvents = async (irn: string) =>
    (await gateway.ctx.records.operatorRecord(irn)).history.filter((e) => e.type === "transmission_queued");

  // The authority never answers: the one attempt fails and the invoice is TRANSMISSION_FAILED.
  const failed = freshInvoice(local, "invoice-minimal");
  const irn = String(failed.irn);
  assert.equal((await submit(gateway.app, local.headers, "sign-transmit", failed)).statusCode, 400);
  const clicks = await Promise.all(
    Array.from({ length: 5 }, () => browser.post(`/dashboard/invoices/${irn}/requeue`, { back: "outbox" })),
  );
  assert.deepEqual(
    clicks.map((c) => c.statusCode),
    [303, 303, 303, 303, 303],
    "a double click is not an error",
  );
  assert.equal(await jobCount(gateway.ctx, irn), 2, "the failed job and one new one");
  // Clicked again later: it is queued already, and the page says so.
  const again = await browser.post(`/dashboard/invoices/${irn}/requeue`, { back: "invoice" });
  assert.equal(again.headers.location, `/dashboard/invoices/${irn}?done=already_queued`);
  assert.match((await browser.get(String(again.headers.location))).body, /Already queued for transmission/);
  assert.equal(await jobCount(gateway.ctx, irn), 2);
  assert.deepEqual(
    (await queuedEvents(irn)).map((e) => e.actor),
    [`key:${local.api_key}`, "dashboard"],
  );

  // A signed invoice transmitted five times at once, with no wait and nobody delivering: each answer
  // says it is queued, and it is queued once.
  const quiet = await pair(t, { EINVOICE_TRANSMIT_WAIT_MS: "0" });
  const signed = freshInvoice(quiet.local, "invoice-minimal");
  const signedIrn = String(signed.irn);
  assert.equal((await submit(quiet.gateway.app, quiet.local.headers, "sign", signed)).statusCode, 200);
  const transmits = await Promise.all(
    Array.from({ length: 5 }, () =>
      quiet.gateway.app.inject({ url: `${API}/transmit/${signedIrn}`, headers: quiet.local.headers }),
    ),
  );
  assert.deepEqual(
    transmits.map((res) => res.statusCode),
    [503, 503, 503, 503, 503],
  );
  assert.equal(await jobCount(quiet.gateway.ctx, signedIrn), 1);
  const events = (await quiet.gateway.ctx.records.operatorRecord(signedIrn)).history;
  assert.equal(events.filter((e) => e.type === "transmission_queued").length, 1);
});

// One set for the file's production servers: each key pair costs 0.2–0.4 s of CPU, and what these
// tests look at does not depend on which keys a server has.
let productionSecrets: ReturnType<typeof newProductionSecrets> | undefined;
const secretsOnce = () => {
  productionSecrets ??= newProductionSecrets();
  return productionSecrets;
};

/** A production server on a migrated database of its own. */
async function production(t: TestContext, extra: Record<string, string>) {
  const dir = tempDir(t);
  const database = await freshDatabase(dir);
  const config = loadConfig({
    EINVOICE_MODE: "production",
    EINVOICE_DATABASE_URL: database.url,
    EINVOICE_DATA_DIR: dir,
    EINVOICE_LOG_LEVEL: "silent",
    ...secretsOnce(),
    EINVOICE_OPERATOR_PASSWORD: "",
    ...extra,
  });
  const db = openDatabase(config.database, config);
  await migrateToLatest(db);
  await db.destroy();
  const ctx = await createContext(config);
  const app = await createServer(ctx, pino({ level: "silent" }));
  t.after(async () => {
    await app.close();
    await ctx.close();
    await database.drop();
  });
  return { app, ctx };
}

test("production: the dashboard is off without EINVOICE_OPERATOR_PASSWORD, on with it", async (t) => {
  const off = await production(t, {});
  assert.equal(off.ctx.operator.password, undefined, "production never generates one");
  for (const url of ["/dashboard", "/dashboard/login", "/dashboard/outbox"]) {
    const res = await off.app.inject({ url });
    assert.equal(res.statusCode, 404, url);
    isHtml(res);
    assert.match(res.body, /The operator dashboard is off/);
  }
  const attempt = await postLogin(off.app, { password: "anything at all, long enough" });
  assert.equal(attempt.statusCode, 404);
  assert.equal(attempt.headers["set-cookie"], undefined);

  const password = "correct horse battery staple";
  const on = await production(t, { EINVOICE_OPERATOR_PASSWORD: password });
  assert.equal((await postLogin(on.app, { password: "x" })).statusCode, 401);
  const browser = await operator(on.app, password);
  const overview = await browser.get("/dashboard");
  assert.equal(overview.statusCode, 200);
  assert.match(overview.body, /<strong>0<\/strong> businesses/);
});

test("sign-in guesses are limited per address whatever API-KEY they carry; NUL characters and unprintable targets are 400s", async (t) => {
  const { app, ctx } = await build(t);
  const guesses = [];
  for (let i = 0; i < 11; i++) {
    guesses.push(
      (await postLogin(app, { password: `guess-${i}-xxxxxxxxxx` }, { "api-key": `ak_${i}` })).statusCode,
    );
  }
  assert.deepEqual(guesses, [...Array(10).fill(401), 429]);
  const limited = await postLogin(app, { password: passwordOf(ctx) }, { "api-key": "ak_other" });
  assert.equal(limited.statusCode, 429, "even the right password waits: the address is limited");
  assert.ok(Number(limited.headers["retry-after"]) > 0);
  isHtml(limited);

  const other = await build(t);
  const browser = await operator(other.app, passwordOf(other.ctx));
  const before = (await other.ctx.businesses.list()).length;
  const nul = await browser.post("/dashboard/businesses", { name: "a\u0000b", tin: "12345678-0001" });
  assert.equal(nul.statusCode, 400);
  assert.match(nul.body, /the field name contains a NUL character/);
  assert.equal((await other.ctx.businesses.list()).length, before, "nothing added");
  for (const next of ["/dashboard\r\nSet-Cookie: x=1", "/dashboard/\u20ac", "/dashboardx"]) {
    const res = await postLogin(other.app, { password: passwordOf(other.ctx), next });
    assert.equal(res.statusCode, 400, JSON.stringify(next));
    assert.equal(res.headers["set-cookie"], undefined);
  }
  // The stylesheet may be cached; the pages may not.
  assert.equal(
    (await other.app.inject({ url: "/dashboard/style.css" })).headers["cache-control"],
    "max-age=300",
  );
});

test("behind a trusted proxy that rewrites Host, forms from the public origin are accepted", async (t) => {
  const { app, ctx } = await build(t, { EINVOICE_TRUST_PROXY: "127.0.0.1" });
  const proxied = {
    host: "app:8080",
    "x-forwarded-host": "einvoice.example.ng",
    "x-forwarded-proto": "https",
  };
  const signIn = await postLogin(
    app,
    { password: passwordOf(ctx) },
    { ...proxied, origin: "https://einvoice.example.ng" },
  );
  assert.equal(signIn.statusCode, 303, signIn.body);
  const foreign = await postLogin(
    app,
    { password: passwordOf(ctx) },
    { ...proxied, origin: "https://evil.example" },
  );
  assert.equal(foreign.statusCode, 403);
});

test("an unknown dashboard page is a 404 page, not the API's JSON", async (t) => {
  const { app, ctx } = await build(t);
  const browser = await operator(app, passwordOf(ctx));
  const res = await browser.get("/dashboard/nowhere?x=1");
  assert.equal(res.statusCode, 404);
  isHtml(res);
  assert.match(res.body, /the dashboard has no page at \/dashboard\/nowhere</);
});

test("/openapi.json documents the API and no dashboard page", async (t) => {
  const { app } = await build(t);
  const res = await app.inject({ url: "/openapi.json" });
  assert.equal(res.statusCode, 200);
  const paths = Object.keys((res.json() as { paths: Record<string, unknown> }).paths);
  assert.ok(paths.includes(`${API}/sign`), "the document lists the API");
  assert.deepEqual(
    paths.filter((p) => p.includes("dashboard")),
    [],
  );
});
