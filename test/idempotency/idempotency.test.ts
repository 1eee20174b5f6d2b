import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { fingerprint } from "../../src/idempotency/fingerprint.ts";
import { sameDocument } from "../../src/invoices/registration/duplicates.ts";
import { JsonText } from "../../src/json-text.ts";
import type { Context } from "../../src/main.ts";
import { createWorker } from "../../src/outbox/worker.ts";
import {
  build,
  ENGINE,
  eventually,
  freshInvoice,
  ISO_TIMESTAMP,
  type Json,
  listen,
  secondInstance,
  storedIrns,
  type Tenant,
  tenant,
} from "../helpers.ts";
import { pair } from "../transmission/pair.ts";

const API = "/api/v1/einvoice";
type App = Awaited<ReturnType<typeof build>>["app"];

function post(app: App, path: string, who: Tenant, payload: unknown, key?: string) {
  return app.inject({
    method: "POST",
    url: `${API}/${path}`,
    headers: {
      ...who.headers,
      "content-type": "application/json",
      ...(key ? { "idempotency-key": key } : {}),
    },
    payload: typeof payload === "string" ? payload : JSON.stringify(payload),
  });
}

/** The same JSON, its keys in reverse order and indented. */
function reshuffled(value: unknown): string {
  const reverse = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(reverse)
      : typeof v === "object" && v !== null
        ? Object.fromEntries(
            Object.entries(v)
              .reverse()
              .map(([k, x]) => [k, reverse(x)]),
          )
        : v;
  return JSON.stringify(reverse(value), null, 3);
}

/** What a business's keys keep, in bytes, a slot each. */
async function usageBytes(ctx: Context, businessId: string): Promise<number[]> {
  const rows = await ctx.db
    .selectFrom("idempotency_usage")
    .select("bytes")
    .where("business_id", "=", businessId)
    .execute();
  return rows.map((row) => Number(row.bytes));
}

async function keyRows(ctx: Context, businessId: string) {
  return ctx.db.selectFrom("idempotency_keys").selectAll().where("business_id", "=", businessId).execute();
}

test(`Idempotency-Key on ${ENGINE}: a repeated sign answers the first answer, byte for byte, and signs once`, async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = freshInvoice(a);
  const first = await post(app, "sign", a, invoice, "order-1001-attempt");
  assert.equal(first.statusCode, 200, first.body);
  assert.equal(first.headers["idempotent-replayed"], undefined);

  // Same JSON in another key order and layout: the same request.
  const again = await post(app, "sign", a, reshuffled(invoice), "order-1001-attempt");
  assert.equal(again.statusCode, 200);
  assert.equal(again.headers["idempotent-replayed"], "true");
  assert.equal(again.body, first.body);
  assert.match(String(again.headers["content-type"]), /^application\/json/);

  assert.deepEqual(await storedIrns(ctx, a.business_id), [invoice.irn]);
  const events = await ctx.db
    .selectFrom("invoice_events")
    .select("type")
    .where("irn", "=", String(invoice.irn))
    .execute();
  assert.deepEqual(
    events.map((e) => e.type),
    ["signed"],
  );
  const [row] = await keyRows(ctx, a.business_id);
  assert.equal(row?.status, 200);
  assert.equal(row?.route, `POST ${API}/sign`);
  assert.equal(row?.response, first.body);
});

test(`Idempotency-Key on ${ENGINE}: a sign's answer is stored with the invoice, warnings and all, and replayed byte for byte`, async (t) => {
  const { app, ctx } = await build(t);
  // Another TIN than the invoice's supplier: the sign answers with a warning.
  const a = await tenant(ctx, { tin: "30198222-0003" });
  const invoice = freshInvoice(a);
  const first = await post(app, "sign", a, invoice, "with-warnings");
  assert.equal(first.statusCode, 200, first.body);
  assert.match(String(first.headers["content-type"]), /^application\/json; charset=utf-8/);
  const answer = JSON.parse(first.body) as { message: string; warnings?: Array<{ rule: string }> };
  assert.equal(answer.message, "Invoice signed successfully");
  assert.ok(
    answer.warnings?.some((w) => w.rule === "supplier_tin_mismatch"),
    first.body,
  );
  const [row] = await keyRows(ctx, a.business_id);
  assert.equal(row?.response, first.body);
  assert.deepEqual(await usageBytes(ctx, a.business_id), [Buffer.byteLength(first.body)]);

  const again = await post(app, "sign", a, reshuffled(invoice), "with-warnings");
  assert.equal(again.statusCode, 200);
  assert.equal(again.headers["idempotent-replayed"], "true");
  assert.equal(again.body, first.body);
  assert.deepEqual(await storedIrns(ctx, a.business_id), [invoice.irn]);
});

test(`Idempotency-Key on ${ENGINE}: the sign writes its answer in its own transaction: stored when it commits, not when it is refused`, async (t) => {
  const { ctx } = await build(t);
  const a = await tenant(ctx);
  const principal = { businessId: a.business_id, apiKey: a.api_key };
  const claimed = async (key: string) => {
    const begun = await ctx.idempotency.begin({
      businessId: a.business_id,
      key,
      route: `POST ${API}/sign`,
      fingerprint: "f".repeat(64),
    });
    assert.equal(begun.kind, "claimed");
    return (begun as Extract<typeof begun, { kind: "claimed" }>).claim;
  };
  const answerOfKey = (key: string) =>
    ctx.db
      .selectFrom("idempotency_keys")
      .select(["status", "response"])
      .where("business_id", "=", a.business_id)
      .where("idempotency_key", "=", key)
      .executeTakeFirst();
  const body = '{"status":true,"code":200,"message":"Invoice signed successfully","data":[]}';
  const invoice = freshInvoice(a);

  // Nothing but the sign stores it: the service's `complete` is never called here.
  const claim = await claimed("in-the-sign");
  const signed = await ctx.invoices.sign(principal, invoice, () => ({ claim, status: 200, body }));
  assert.equal(signed.answered, body);
  assert.deepEqual(await answerOfKey("in-the-sign"), { status: 200, response: body });

  // The same IRN again: refused, nothing committed, so no answer stored with it.
  const refusedClaim = await claimed("refused");
  await assert.rejects(
    ctx.invoices.sign(principal, invoice, () => ({ claim: refusedClaim, status: 200, body })),
    (err: { code?: string }) => err.code === "irn_exists",
  );
  assert.deepEqual(await answerOfKey("refused"), { status: null, response: null });
  assert.deepEqual(await usageBytes(ctx, a.business_id), [Buffer.byteLength(body)]);
});

test(`Idempotency-Key on ${ENGINE}: a sign's body is fingerprinted by the preparation thread as it reads it, as the event loop would`, async (t) => {
  const { ctx } = await build(t);
  const a = await tenant(ctx);
  const principal = { businessId: a.business_id, apiKey: a.api_key };
  const invoice = freshInvoice(a);
  const unparsed = (text: string) => new JsonText(text, async () => JSON.parse(text));
  const expected = await fingerprint(invoice);

  const checked = await ctx.invoices.checkSign(principal, unparsed(JSON.stringify(invoice)));
  assert.equal(checked.fingerprint, expected);
  // Another key order and layout: the same fingerprint.
  assert.equal(
    (await ctx.invoices.checkSign(principal, unparsed(reshuffled(invoice)))).fingerprint,
    expected,
  );
  // A body the event loop parsed: none from the thread, the caller works it out.
  assert.equal((await ctx.invoices.checkSign(principal, invoice)).fingerprint, undefined);
  // Checked is not stored: the commit stores it.
  assert.deepEqual(await storedIrns(ctx, a.business_id), []);
  await checked.commit();
  assert.deepEqual(await storedIrns(ctx, a.business_id), [invoice.irn]);
});

test(`Idempotency-Key on ${ENGINE}: a refused invoice is answered the same 400 again; a batch the same results`, async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const bad: Json = { ...freshInvoice(a), document_currency_code: "XXQ" };
  const refused = await post(app, "sign", a, bad, "bad-1");
  assert.equal(refused.statusCode, 400);
  assert.equal(refused.json().message, "Failed to validate invoice");
  const again = await post(app, "sign", a, bad, "bad-1");
  assert.equal(again.statusCode, 400);
  assert.equal(again.headers["idempotent-replayed"], "true");
  // The same error id and timestamp: the answer is the first one, not a new refusal.
  assert.equal(again.body, refused.body);

  const before = freshInvoice(a, "invoice-minimal");
  assert.equal((await post(app, "sign", a, before)).statusCode, 200);
  const batch = { invoices: [freshInvoice(a), before, { ...freshInvoice(a), issue_date: "2020-02-30" }] };
  const processed = await post(app, "batch/sign", a, batch, "batch-7");
  assert.equal(processed.statusCode, 200, processed.body);
  assert.deepEqual(
    processed.json().data.map((r: { status: string }) => r.status),
    ["signed", "duplicate", "invalid"],
  );
  const stored = await storedIrns(ctx, a.business_id);
  const replayed = await post(app, "batch/sign", a, reshuffled(batch), "batch-7");
  assert.equal(replayed.statusCode, 200);
  assert.equal(replayed.headers["idempotent-replayed"], "true");
  assert.equal(replayed.body, processed.body, "still signed, not duplicate: the first answer");
  assert.deepEqual(await storedIrns(ctx, a.business_id), stored);
  assert.deepEqual(await ctx.audit.verify(a.business_id), { checked: 2, broken: [] });

  // A batch the schema refuses is a final answer too.
  const empty = await post(app, "batch/sign", a, { invoices: [] }, "batch-8");
  assert.equal(empty.statusCode, 400);
  const emptyAgain = await post(app, "batch/sign", a, { invoices: [] }, "batch-8");
  assert.equal(emptyAgain.headers["idempotent-replayed"], "true");
  assert.equal(emptyAgain.body, empty.body);
});

test(`Idempotency-Key on ${ENGINE}: reused with another body or on another route is a 422, and nothing is done`, async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const b = await tenant(ctx, { tin: "30198222-0003" });
  const invoice = freshInvoice(a);
  assert.equal((await post(app, "sign", a, invoice, "k-42")).statusCode, 200);
  const [{ created_at: firstUse } = { created_at: "" }] = await keyRows(ctx, a.business_id);

  const other = freshInvoice(a);
  const reused = await post(app, "sign", a, other, "k-42");
  assert.equal(reused.statusCode, 422, reused.body);
  const body = reused.json();
  assert.equal(body.status, false);
  assert.equal(body.code, 422);
  assert.equal(body.message, "Idempotency-Key reused");
  assert.equal(body.data, null);
  assert.match(body.timestamp, ISO_TIMESTAMP);
  assert.equal(body.error.handler, "invoice.sign");
  assert.match(body.error.details, /'k-42' was used with a different request body on /);
  assert.ok(body.error.details.includes(firstUse), body.error.details);
  assert.equal(reused.headers["idempotent-replayed"], undefined);
  // With a body refused by its check as well: the key answers first (a sign's key is claimed once
  // the body is checked, and a refused body claims it before its refusal is sent).
  const invalid = await post(app, "sign", a, { ...other, issue_date: "not-a-date" }, "k-42");
  assert.equal(invalid.statusCode, 422, invalid.body);
  assert.equal(invalid.json().message, "Idempotency-Key reused");

  for (const path of ["sign-transmit", "batch/sign"]) {
    const elsewhere = await post(app, path, a, path === "batch/sign" ? { invoices: [other] } : other, "k-42");
    assert.equal(elsewhere.statusCode, 422, path);
    assert.match(elsewhere.json().error.details, new RegExp(`'k-42' was used for POST ${API}/sign on `));
  }
  assert.deepEqual(await storedIrns(ctx, a.business_id), [invoice.irn], "the other invoice was not signed");

  // Keys are a business's own: another business's same key is another request.
  const theirs = await post(app, "sign", b, freshInvoice(b), "k-42");
  assert.equal(theirs.statusCode, 200, theirs.body);
  assert.equal(theirs.headers["idempotent-replayed"], undefined);
  assert.equal((await keyRows(ctx, b.business_id)).length, 1);
});

test(`Idempotency-Key on ${ENGINE}: a key must be 1 to 255 printable ASCII characters`, async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  for (const key of ["k".repeat(256), "caf\u00e9", "tab\there"]) {
    const res = await post(app, "sign", a, freshInvoice(a), key);
    assert.equal(res.statusCode, 400, key);
    const body = res.json();
    assert.equal(body.message, "Failed to validate invoice");
    assert.match(body.error.details, /^the Idempotency-Key header /);
    assert.equal(body.error.violations[0].path, "headers.idempotency-key");
  }
  const empty = await app.inject({
    method: "POST",
    url: `${API}/batch/sign`,
    headers: { ...a.headers, "idempotency-key": "" },
    payload: { invoices: [freshInvoice(a)] },
  });
  assert.equal(empty.statusCode, 400);
  assert.equal(empty.json().message, "Failed to validate batch");
  assert.match(empty.json().error.details, /Idempotency-Key header is empty/);
  assert.deepEqual(await storedIrns(ctx, a.business_id), []);
  assert.equal((await keyRows(ctx, a.business_id)).length, 0);

  const longest = await post(app, "sign", a, freshInvoice(a), `${"~".repeat(200)} !${"Z".repeat(53)}`);
  assert.equal(longest.statusCode, 200, longest.body);
});

test(`Idempotency-Key on ${ENGINE}: after 24 hours a key is free again; expired keys are pruned`, async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  assert.equal((await post(app, "sign", a, freshInvoice(a), "daily")).statusCode, 200);
  const aged = new Date(Date.now() - 25 * 3600_000).toISOString();
  await ctx.db.updateTable("idempotency_keys").set({ created_at: aged }).execute();

  const next = freshInvoice(a);
  const res = await post(app, "sign", a, next, "daily");
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers["idempotent-replayed"], undefined);
  assert.ok((await storedIrns(ctx, a.business_id)).includes(String(next.irn)));
  const [row] = await keyRows(ctx, a.business_id);
  assert.ok(row && Date.parse(row.created_at) > Date.now() - 60_000, "claimed afresh");

  // Pruning deletes only what is past its 24 hours, in chunks, from a worker's housekeeping.
  for (let i = 0; i < 5; i++) {
    assert.equal((await post(app, "sign", a, freshInvoice(a), `old-${i}`)).statusCode, 200);
  }
  await ctx.db
    .updateTable("idempotency_keys")
    .set({ created_at: aged })
    .where("idempotency_key", "like", "old-%")
    .execute();
  assert.equal((await keyRows(ctx, a.business_id)).length, 6);
  const worker = createWorker({
    transmission: ctx.transmission,
    concurrency: 1,
    pollMs: 20,
    logger: { info() {}, warn() {}, error() {} },
    housekeeping: [{ name: "prune", everyMs: 50, run: () => ctx.idempotency.prune() }],
  });
  worker.start();
  try {
    await eventually(
      async () => (await keyRows(ctx, a.business_id)).length === 1,
      5000,
      "expired keys pruned",
    );
  } finally {
    await worker.stop();
  }
  assert.equal((await keyRows(ctx, a.business_id))[0]?.idempotency_key, "daily");
  assert.equal(await ctx.idempotency.prune(), 0);
});

test(`Idempotency-Key on ${ENGINE}: concurrent requests over HTTP with one key, to two instances on one database: one signs, all answer the same bytes`, async (t) => {
  const { ctx, url, config } = await listen(t);
  // A second instance on the same database: only the database can decide.
  const otherUrl = await secondInstance(t, config);
  const a = await tenant(ctx);
  const invoice = freshInvoice(a);
  const send = (base: string) =>
    fetch(`${base}${API}/sign`, {
      method: "POST",
      headers: { ...a.headers, "content-type": "application/json", "idempotency-key": "concurrent" },
      body: JSON.stringify(invoice),
    }).then(async (res) => ({
      status: res.status,
      replayed: res.headers.get("idempotent-replayed"),
      body: await res.text(),
    }));
  const answers = await Promise.all([send(url), send(otherUrl), send(url), send(otherUrl)]);
  assert.deepEqual(
    answers.map((r) => r.status),
    [200, 200, 200, 200],
    JSON.stringify(answers),
  );
  assert.equal(new Set(answers.map((r) => r.body)).size, 1, "byte-identical answers");
  assert.equal(answers.filter((r) => r.replayed === null).length, 1, "exactly one processed");
  assert.deepEqual(await storedIrns(ctx, a.business_id), [invoice.irn]);
  const signed = await ctx.db
    .selectFrom("invoice_events")
    .select("type")
    .where("irn", "=", String(invoice.irn))
    .where("type", "=", "signed")
    .execute();
  assert.equal(signed.length, 1);
});

test(`Idempotency-Key on ${ENGINE}: a claim in flight makes a retry wait, then 409; a dead one's is taken over`, async (t) => {
  const { app, ctx } = await build(t, { EINVOICE_IDEMPOTENCY_WAIT_MS: "1500" });
  const a = await tenant(ctx);
  const invoice = freshInvoice(a);
  const claim = async (minutesAgo: number) => {
    await ctx.db.deleteFrom("idempotency_keys").execute();
    await ctx.db
      .insertInto("idempotency_keys")
      .values({
        business_id: a.business_id,
        idempotency_key: "held",
        route: `POST ${API}/sign`,
        fingerprint: await fingerprint(invoice),
        claim: "a-process-elsewhere",
        created_at: new Date(Date.now() - minutesAgo * 60_000).toISOString(),
        status: null,
        retry_after: null,
        response: null,
      })
      .execute();
  };

  // Another process holds the key and is still at work (claimed a minute ago).
  await claim(1);
  const started = Date.now();
  const busy = await post(app, "sign", a, invoice, "held");
  assert.equal(busy.statusCode, 409, busy.body);
  assert.ok(Date.now() - started >= 1400, "it waited for the other request first");
  assert.equal(busy.headers["retry-after"], "2");
  assert.equal(busy.json().message, "Request in progress");
  assert.match(busy.json().error.details, /still being processed; retry later/);
  assert.deepEqual(await storedIrns(ctx, a.business_id), []);

  // The other process answers meanwhile: the waiting retry gets its answer.
  const waiting = post(app, "sign", a, invoice, "held");
  await new Promise((resolve) => setTimeout(resolve, 60));
  await ctx.db
    .updateTable("idempotency_keys")
    .set({ status: 200, response: '{"answered":"elsewhere"}' })
    .execute();
  const answered = await waiting;
  assert.equal(answered.statusCode, 200);
  assert.equal(answered.body, '{"answered":"elsewhere"}');
  assert.equal(answered.headers["idempotent-replayed"], "true");

  // A claim in flight for ten minutes was left by a process that died: this request takes it over.
  await claim(10);
  const taken = await post(app, "sign", a, invoice, "held");
  assert.equal(taken.statusCode, 200, taken.body);
  assert.equal(taken.headers["idempotent-replayed"], undefined);
  assert.deepEqual(await storedIrns(ctx, a.business_id), [invoice.irn]);
  const [row] = await keyRows(ctx, a.business_id);
  assert.notEqual(row?.claim, "a-process-elsewhere");
  assert.equal(row?.response, taken.body);
});

test(`Idempotency-Key on ${ENGINE}: a server failure is not kept, so the retry runs afresh`, async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = freshInvoice(a);
  // The history table gone for a moment: the sign fails on the server's side (500).
  await sql`alter table invoice_events rename to invoice_events_away`.execute(ctx.db);
  const failed = await post(app, "sign", a, invoice, "retry-me");
  await sql`alter table invoice_events_away rename to invoice_events`.execute(ctx.db);
  assert.equal(failed.statusCode, 500, failed.body);
  assert.deepEqual(await keyRows(ctx, a.business_id), [], "the key was given back");

  const retried = await post(app, "sign", a, invoice, "retry-me");
  assert.equal(retried.statusCode, 200, retried.body);
  assert.equal(retried.headers["idempotent-replayed"], undefined);
  assert.deepEqual(await storedIrns(ctx, a.business_id), [invoice.irn]);
});

test(`Idempotency-Key on ${ENGINE}: sign-transmit's queued 503 is an answer: a retry after a timeout hears it again`, async (t) => {
  const { gateway, local } = await pair(t, {
    EINVOICE_TRANSMIT_WAIT_MS: "1500",
    EINVOICE_DELIVERY_TIMEOUT_MS: "200",
  });
  const invoice = freshInvoice(local, "invoice-minimal");
  const send = (signal?: AbortSignal) =>
    fetch(`${gateway.url}${API}/sign-transmit`, {
      method: "POST",
      headers: { ...local.headers, "content-type": "application/json", "idempotency-key": "st-1" },
      body: JSON.stringify(invoice),
      ...(signal ? { signal } : {}),
    });
  // The client gives up once its request is being processed (the authority is down, so the answer
  // would come after 1.5 s)...
  const giveUp = new AbortController();
  const first = send(giveUp.signal);
  await eventually(
    async () => (await keyRows(gateway.ctx, local.business_id)).length === 1,
    10_000,
    "the first request's claim",
  );
  giveUp.abort();
  await assert.rejects(first);
  // ...and retries at once: the first request is still in flight, so the retry waits for its answer.
  const retried = await send();
  assert.equal(retried.status, 503);
  assert.equal(retried.headers.get("idempotent-replayed"), "true");
  assert.match(String(retried.headers.get("retry-after")), /^\d+$/);
  const body = await retried.text();
  assert.equal(JSON.parse(body).message, "Transmission queued");
  const again = await send();
  assert.equal(again.status, 503);
  assert.equal(await again.text(), body);
  const [row] = await keyRows(gateway.ctx, local.business_id);
  assert.equal(row?.status, 503);
  assert.deepEqual(await storedIrns(gateway.ctx, local.business_id), [invoice.irn]);
});

test(`without a key on ${ENGINE}: a repeated sign of the very same document says so in a header; another document does not`, async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = freshInvoice(a);
  assert.equal((await post(app, "sign", a, invoice)).statusCode, 200);
  const record = await app.inject({ url: `${API}/${String(invoice.irn)}`, headers: a.headers });
  const signedAt = (record.json() as { data: { signed_at: string } }).data.signed_at;

  for (const path of ["sign", "sign-transmit"]) {
    const same = await post(app, path, a, reshuffled(invoice));
    assert.equal(same.statusCode, 400);
    const body = same.json();
    // The spec's answer, exactly: `error` is an empty array whatever is registered under the IRN.
    assert.deepEqual(Object.keys(body).sort(), ["code", "data", "error", "message", "status", "timestamp"]);
    assert.equal(body.message, "IRN already exists.");
    assert.equal(body.code, 400);
    assert.deepEqual(body.error, []);
    assert.match(body.timestamp, ISO_TIMESTAMP);
    assert.equal(same.headers["einvoice-identical-document"], `signed-at=${signedAt}`);

    const changed = await post(app, path, a, { ...invoice, note: "another note" });
    assert.equal(changed.statusCode, 400);
    assert.equal(changed.json().message, "IRN already exists.");
    assert.deepEqual(changed.json().error, [], "the spec's answer, unchanged");
    assert.equal(changed.headers["einvoice-identical-document"], undefined);
  }

  // With an Idempotency-Key, the answer that carries the header is not kept for replay (a replay
  // would lose the header): each retry runs afresh and finds the same document signed.
  for (let attempt = 0; attempt < 2; attempt++) {
    const keyed = await post(app, "sign", a, reshuffled(invoice), `same-${process.pid}`);
    assert.equal(keyed.statusCode, 400);
    assert.equal(keyed.headers["idempotent-replayed"], undefined);
    assert.equal(keyed.headers["einvoice-identical-document"], `signed-at=${signedAt}`);
  }

  const batch = await post(app, "batch/sign", a, { invoices: [invoice, { ...invoice, note: "changed" }] });
  const [identical, different] = batch.json().data;
  assert.equal(identical.status, "duplicate");
  assert.equal(identical.message, "IRN already exists.");
  assert.match(identical.details, /with this exact document/);
  assert.equal(different.status, "duplicate");
  assert.equal(different.details, `IRN '${invoice.irn}' is already registered`);
});

test("the same document is recognised whatever the letter case of its business_id (UUIDs are case-insensitive)", () => {
  const who = { business_id: "0d6f7a4e-3c1b-4f5e-9a2d-8b7c6e5f4a3b", service_id: "ABCD1234" };
  const document = freshInvoice(who);
  const shouted = { ...document, business_id: who.business_id.toUpperCase() };
  assert.ok(sameDocument(document, shouted));
  assert.ok(sameDocument(shouted, JSON.parse(reshuffled(document))));
  assert.ok(!sameDocument(document, { ...document, payable_note: "x" }));
  assert.ok(!sameDocument(document, { ...document, irn: String(document.irn).toLowerCase() }));
});
