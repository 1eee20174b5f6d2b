import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { readLed } from "../../src/db/batch-statements.ts";
import { writeTransaction } from "../../src/db/database.ts";
import { fingerprint } from "../../src/idempotency/fingerprint.ts";
import { USAGE_SLOT_MS } from "../../src/idempotency/slots.ts";
import { type AnswerWith, KeyNotClaimed } from "../../src/idempotency/with-work.ts";
import type { Context } from "../../src/main.ts";
import {
  build,
  ENGINE,
  eventually,
  freshInvoice,
  type Json,
  listen,
  secondInstance,
  storedIrns,
  type Tenant,
  tenant,
} from "../helpers.ts";

/*
 * A keyed JSON sign claims its Idempotency-Key in its own transaction, the key's row inserted with
 * the answer the sign gives, before the transaction locks any chain: the claim is exactly as durable
 * as the sign, a key held elsewhere (or a full quota) leaves the document unsigned, and a sign
 * refused in the transaction leaves its key claimed, unanswered, for its refusal.
 */

const API = "/api/v1/einvoice";
const SIGN_ROUTE = `POST ${API}/sign`;
const ANSWER = '{"status":true,"code":200,"message":"Invoice signed successfully","data":[]}';

async function keyRow(ctx: Context, businessId: string, key: string) {
  return ctx.db
    .selectFrom("idempotency_keys")
    .select(["claim", "status", "response"])
    .where("business_id", "=", businessId)
    .where("idempotency_key", "=", key)
    .executeTakeFirst();
}

async function usageBytes(ctx: Context, businessId: string): Promise<number> {
  const rows = await ctx.db
    .selectFrom("idempotency_usage")
    .select("bytes")
    .where("business_id", "=", businessId)
    .execute();
  return rows.reduce((sum, row) => sum + Number(row.bytes), 0);
}

/** The answer to claim `key` with, for signing `invoice`. */
async function answerFor(ctx: Context, who: Tenant, key: string, invoice: Json): Promise<AnswerWith> {
  const answer = ctx.idempotency.claimWith(
    { businessId: who.business_id, key, route: SIGN_ROUTE, fingerprint: await fingerprint(invoice) },
    200,
    ANSWER,
  );
  assert.ok(answer, "an answer of under 1 KiB is claimed with its work");
  return answer;
}

/** Checks and signs `invoice`, its key claimed in the sign's transaction with `answer`. */
async function signClaiming(ctx: Context, who: Tenant, invoice: Json, answer: AnswerWith) {
  const checked = await ctx.invoices.checkSign({ businessId: who.business_id, apiKey: who.api_key }, invoice);
  return checked.commit(() => answer);
}

test(`a sign's key claimed with it on ${ENGINE}: inserted with its answer, counted, and not claimed where held or over quota`, async (t) => {
  const { ctx } = await build(t, { EINVOICE_IDEMPOTENCY_QUOTA_BYTES: "65536" });
  const a = await tenant(ctx);

  // Claimed and answered in the sign's transaction.
  const first = freshInvoice(a);
  const answer = await answerFor(ctx, a, "first", first);
  const signed = await signClaiming(ctx, a, first, answer);
  assert.equal(signed.answered, ANSWER);
  assert.equal(answer.claiming?.won, true);
  assert.deepEqual(await keyRow(ctx, a.business_id, "first"), {
    claim: answer.claim.token,
    status: 200,
    response: ANSWER,
  });
  assert.equal(await usageBytes(ctx, a.business_id), Buffer.byteLength(ANSWER));
  assert.deepEqual(await storedIrns(ctx, a.business_id), [String(first.irn)]);

  // The same key for another document: not claimed, and that document not signed.
  const second = freshInvoice(a);
  const again = await answerFor(ctx, a, "first", second);
  await assert.rejects(signClaiming(ctx, a, second, again), KeyNotClaimed);
  assert.equal(again.claiming?.won, false);
  assert.equal(
    (await keyRow(ctx, a.business_id, "first"))?.claim,
    answer.claim.token,
    "the holder's row as it was",
  );
  assert.deepEqual(await storedIrns(ctx, a.business_id), [String(first.irn)]);

  // The business's quota full: a new key is not claimed, and the document not signed.
  await ctx.db
    .insertInto("idempotency_usage")
    // Two slots back: the slot of an hour ago may be the answer's own, should one have begun since.
    .values({ business_id: a.business_id, slot: Math.floor(Date.now() / USAGE_SLOT_MS) - 2, bytes: 65_536 })
    .execute();
  const third = freshInvoice(a);
  await assert.rejects(
    signClaiming(ctx, a, third, await answerFor(ctx, a, "over-quota", third)),
    KeyNotClaimed,
  );
  assert.equal(await keyRow(ctx, a.business_id, "over-quota"), undefined);
  assert.deepEqual(await storedIrns(ctx, a.business_id), [String(first.irn)]);
});

test(`a sign's key claimed with it on ${ENGINE}: a sign refused in its transaction leaves the key claimed and unanswered; a rollback leaves nothing`, async (t) => {
  const { ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = freshInvoice(a);
  await signClaiming(ctx, a, invoice, await answerFor(ctx, a, "signed", invoice));
  const used = await usageBytes(ctx, a.business_id);

  // The IRN taken: refused, its answer taken back, its key still claimed by it, nothing counted.
  const refused = await answerFor(ctx, a, "irn-taken", invoice);
  await assert.rejects(
    signClaiming(ctx, a, invoice, refused),
    (err: { code?: string }) => err.code === "irn_exists",
  );
  assert.equal(refused.claiming?.won, true);
  assert.deepEqual(await keyRow(ctx, a.business_id, "irn-taken"), {
    claim: refused.claim.token,
    status: null,
    response: null,
  });
  assert.equal(await usageBytes(ctx, a.business_id), used);

  // The claims go with the transaction they are made in.
  const other = freshInvoice(a);
  const lost = await answerFor(ctx, a, "rolled-back", other);
  await assert.rejects(
    writeTransaction(ctx.db, async (tx) => {
      const { led } = await readLed(tx, ctx.idempotency.claimsInside([lost]), []);
      assert.deepEqual([...(led ?? [])], [lost.claim.token]);
      throw new Error("rolled back");
    }),
    /rolled back/,
  );
  assert.equal(await keyRow(ctx, a.business_id, "rolled-back"), undefined);
});

test(`a keyed sign whose IRN another document holds on ${ENGINE}: its 400 is kept and replayed`, async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = freshInvoice(a);
  const send = (payload: Json, key?: string) =>
    app.inject({
      method: "POST",
      url: `${API}/sign`,
      headers: {
        ...a.headers,
        "content-type": "application/json",
        ...(key ? { "idempotency-key": key } : {}),
      },
      payload: JSON.stringify(payload),
    });
  assert.equal((await send(invoice)).statusCode, 200);
  // Another document under the same IRN.
  const another = { ...invoice, note: "another document" };
  const refused = await send(another, "taken");
  assert.equal(refused.statusCode, 400, refused.body);
  assert.equal(refused.json().message, "IRN already exists.");
  assert.equal((await keyRow(ctx, a.business_id, "taken"))?.response, refused.body);
  const replayed = await send(another, "taken");
  assert.equal(replayed.statusCode, 400);
  assert.equal(replayed.body, refused.body);
  assert.equal(replayed.headers["idempotent-replayed"], "true");
});

test("a sign waiting for a key another transaction holds holds no chain meanwhile on postgres", {
  skip: ENGINE !== "postgres" && "row locks between connections are PostgreSQL's",
}, async (t) => {
  const { ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = freshInvoice(a);
  const answer = await answerFor(ctx, a, "held-elsewhere", invoice);
  const elsewhere = '{"answered":"elsewhere"}';
  let signing: Promise<unknown> = Promise.resolve();
  // Another process's transaction: claims the key, then, while the sign waits for that key, takes
  // the chain's lock, as its own sign batch would. Were the chain locked by the waiting sign,
  // PostgreSQL would find the two waiting on each other after a second, and abort one.
  await ctx.db.transaction().execute(async (tx) => {
    await tx
      .insertInto("idempotency_keys")
      .values({
        business_id: a.business_id,
        idempotency_key: "held-elsewhere",
        route: SIGN_ROUTE,
        fingerprint: answer.claiming?.fingerprint as string,
        claim: "a-process-elsewhere",
        created_at: new Date().toISOString(),
        status: 200,
        retry_after: null,
        response: elsewhere,
      })
      .execute();
    signing = signClaiming(ctx, a, invoice, answer).catch((err: unknown) => err);
    await eventually(
      async () => {
        const { rows } = await sql<{
          waiting: number;
        }>`select count(*)::integer as waiting from pg_stat_activity
          where wait_event_type = 'Lock' and datname = current_database()`.execute(ctx.db);
        return (rows[0]?.waiting ?? 0) > 0;
      },
      5000,
      "the sign waiting for the key",
    );
    // NOWAIT: refused at once (55P03) if the waiting sign held the chain.
    await sql`select id from businesses where id = ${a.business_id} for no key update nowait`.execute(tx);
  });
  assert.ok((await signing) instanceof KeyNotClaimed, String(await signing));
  assert.deepEqual(await storedIrns(ctx, a.business_id), []);
  assert.equal((await keyRow(ctx, a.business_id, "held-elsewhere"))?.response, elsewhere);
});

test(`a keyed JSON sign over HTTP on ${ENGINE}: no claim of its own before the sign; its retry replays`, async (t) => {
  const { app, ctx } = await build(t);
  // An id with the look of a three-digit exponent (`e123`), as a third of random ids have: the body
  // is still left unparsed for the preparation thread, which the claim with the sign needs.
  const a = await tenant(ctx, { id: "0e123456-7a8b-4c9d-8e0f-123456789abc" });
  // The claims made the usual way, before a request's work (a spy: the service's own `begin` runs).
  const begun: string[] = [];
  const begin = ctx.idempotency.begin;
  ctx.idempotency.begin = (request, gone) => {
    begun.push(request.key);
    return begin(request, gone);
  };
  const invoice = freshInvoice(a);
  const send = () =>
    app.inject({
      method: "POST",
      url: `${API}/sign`,
      headers: { ...a.headers, "content-type": "application/json", "idempotency-key": "over-http" },
      payload: JSON.stringify(invoice),
    });
  const first = await send();
  assert.equal(first.statusCode, 200, first.body);
  assert.deepEqual(begun, [], "claimed with its invoice");
  assert.equal((await keyRow(ctx, a.business_id, "over-http"))?.response, first.body);

  // The retry's claim with its invoice loses to the first's; claimed the usual way, it replays.
  const retried = await send();
  assert.equal(retried.statusCode, 200);
  assert.equal(retried.body, first.body);
  assert.equal(retried.headers["idempotent-replayed"], "true");
  assert.deepEqual(begun, ["over-http"]);
  assert.deepEqual(await storedIrns(ctx, a.business_id), [String(invoice.irn)]);
});

test(`keyed signs on ${ENGINE}, many keys each sent many times at once to two instances on one database: one invoice a key, every answer its key's`, async (t) => {
  const { ctx, url, config } = await listen(t);
  // A second instance on the same database, as a second process of the cluster would be.
  const otherUrl = await secondInstance(t, config);
  const a = await tenant(ctx);
  const b = await tenant(ctx, { tin: "30198222-0003" });
  // 8 keys, two businesses' invoices, each key sent 6 times, alternately to each instance, in a
  // shuffled order: the batches of both instances hold several keys, and the same keys.
  const keys = Array.from({ length: 8 }, (_, i) => ({
    key: `many-${i}`,
    who: i % 2 ? a : b,
    invoice: freshInvoice(i % 2 ? a : b),
  }));
  const sends = keys.flatMap((k) =>
    Array.from({ length: 6 }, (_, copy) => ({ ...k, base: copy % 2 ? url : otherUrl })),
  );
  for (let i = sends.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [sends[i], sends[j]] = [sends[j] as (typeof sends)[number], sends[i] as (typeof sends)[number]];
  }
  const answers = await Promise.all(
    sends.map(({ key, who, invoice, base }) =>
      fetch(`${base}${API}/sign`, {
        method: "POST",
        headers: { ...who.headers, "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify(invoice),
      }).then(async (res) => ({
        key,
        status: res.status,
        replayed: res.headers.get("idempotent-replayed"),
        body: await res.text(),
      })),
    ),
  );
  assert.deepEqual(
    answers.filter((r) => r.status !== 200),
    [],
    "every request answered 200",
  );
  for (const { key } of keys) {
    const mine = answers.filter((r) => r.key === key);
    assert.equal(new Set(mine.map((r) => r.body)).size, 1, `${key}: one answer`);
    assert.equal(mine.filter((r) => r.replayed === null).length, 1, `${key}: done once`);
  }
  const stored = [...(await storedIrns(ctx, a.business_id)), ...(await storedIrns(ctx, b.business_id))];
  assert.deepEqual(stored.sort(), keys.map((k) => String(k.invoice.irn)).sort());
});
