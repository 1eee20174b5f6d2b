import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { sql } from "kysely";
import { businessRepository } from "../../src/businesses/business-repository.ts";
import { executeTogether, readTogether } from "../../src/db/batch-statements.ts";
import { alone, type Executor, isTransientDatabaseError, writeTransaction } from "../../src/db/database.ts";
import {
  type Answer,
  idempotencyRepository,
  type KeyRow,
  NO_ANSWER,
} from "../../src/idempotency/idempotency-repository.ts";
import { build, ENGINE, tenant } from "../helpers.ts";

/*
 * The claims and the answers of one turn of the event loop are written in a few statements, not one
 * a request (on PostgreSQL, rows as arrays in one round trip): each request's outcome must still be
 * its own, as the primary key and its claim token decide.
 */

const claimOf = (businessId: string, key: string): KeyRow => ({
  business_id: businessId,
  idempotency_key: key,
  route: "POST /api/v1/einvoice/sign",
  fingerprint: "f".repeat(64),
  claim: randomBytes(16).toString("hex"),
  created_at: new Date().toISOString(),
  ...NO_ANSWER,
});

/** A 200 answer kept as it is (small enough not to be gzipped). */
const plainAnswer = (response: string): Answer => ({
  status: 200,
  retry_after: null,
  response,
  response_gzip: null,
  response_bytes: null,
  response_sha256: null,
  replay: null,
});

test(`claims and answers of one batch on ${ENGINE}: each its own outcome, answers stored byte for byte, usage summed by business`, async (t) => {
  const { ctx } = await build(t);
  const [a, b] = [await tenant(ctx), await tenant(ctx)];
  const keys = idempotencyRepository(ctx.db);
  const held = claimOf(a.business_id, "held-before");
  assert.deepEqual(await writeTransaction(ctx.db, (tx) => keys.insertClaims([held], tx)), [true]);

  // 70 rows: chunks of 64, 4 and 2. Two of them name one key (the first wins), one a key held before.
  const rows = Array.from({ length: 67 }, (_, i) => claimOf(i % 2 ? a.business_id : b.business_id, `k${i}`));
  const twin = claimOf(rows[3]?.business_id as string, rows[3]?.idempotency_key as string);
  const batch = [
    ...rows.slice(0, 10),
    twin,
    ...rows.slice(10),
    claimOf(a.business_id, "held-before"),
    claimOf(b.business_id, "k0"),
  ];
  const won = await writeTransaction(ctx.db, (tx) => keys.insertClaims(batch, tx));
  assert.equal(won.length, batch.length);
  assert.deepEqual(
    batch
      .map((row, i) => (won[i] ? "" : `${row.idempotency_key}${row === twin ? " (twin)" : ""}`))
      .filter(Boolean),
    ["k3 (twin)", "held-before", "k0"],
    "only the second claim of a key in the batch, and the key held before, lose",
  );

  // Answers: a plain one, a compressed one, a refusal kept as its outcome; one claim that lost its key.
  const gzip = randomBytes(3000);
  const answers: Answer[] = [
    plainAnswer('{"status":true}'),
    {
      status: 200,
      retry_after: null,
      response: null,
      response_gzip: gzip,
      response_bytes: 70_000,
      response_sha256: "a".repeat(64),
      replay: null,
    },
    {
      status: 503,
      retry_after: 7,
      response: null,
      response_gzip: null,
      response_bytes: 900_000,
      response_sha256: "b".repeat(64),
      replay: "refuse",
    },
  ];
  const stale = { ...(rows[5] as KeyRow), claim: "taken-over-meanwhile" };
  const items = [
    { id: rows[1] as KeyRow, answer: answers[0] as Answer },
    { id: rows[2] as KeyRow, answer: answers[1] as Answer },
    { id: stale, answer: answers[0] as Answer },
    { id: rows[4] as KeyRow, answer: answers[2] as Answer },
  ];
  // Nothing kept to count (bytes 0): the answers alone.
  const stored = await alone(ctx.db, (tx) =>
    keys.storeAnswers(
      items.map((item) => ({ ...item, bytes: 0 })),
      0,
      tx,
    ),
  );
  assert.deepEqual(stored, [true, true, false, true]);
  const read = async (row: KeyRow) => {
    const found = await keys.find(row);
    return (
      found && {
        ...found,
        response_gzip: found.response_gzip && Buffer.from(found.response_gzip).toString("hex"),
      }
    );
  };
  const expect = (row: KeyRow, answer: Answer) => ({
    ...row,
    ...answer,
    response_gzip: answer.response_gzip ? answer.response_gzip.toString("hex") : null,
  });
  assert.deepEqual(await read(rows[1] as KeyRow), expect(rows[1] as KeyRow, answers[0] as Answer));
  assert.deepEqual(await read(rows[2] as KeyRow), expect(rows[2] as KeyRow, answers[1] as Answer));
  assert.deepEqual(await read(rows[4] as KeyRow), expect(rows[4] as KeyRow, answers[2] as Answer));
  assert.deepEqual(await read(rows[5] as KeyRow), rows[5], "the stale claim stored nothing");

  // Usage: several rows of one business and slot add up; the batch's rows in any order.
  await writeTransaction(ctx.db, (tx) =>
    keys.addUsages(
      [
        { businessId: b.business_id, slot: 10, bytes: 5 },
        { businessId: a.business_id, slot: 10, bytes: 7 },
      ],
      tx,
    ),
  );
  await writeTransaction(ctx.db, (tx) =>
    keys.addUsages([{ businessId: a.business_id, slot: 10, bytes: 100 }], tx),
  );
  assert.deepEqual(await keys.usages([a.business_id, b.business_id], 0), [
    { bytes: 107, oldest: 10 },
    { bytes: 5, oldest: 10 },
  ]);
});

test(`answers stored with their usage on ${ENGINE}, alone: only a claim that still holds its key is stored and counted`, async (t) => {
  const { ctx } = await build(t);
  const [a, b, c] = [await tenant(ctx), await tenant(ctx), await tenant(ctx)];
  const keys = idempotencyRepository(ctx.db);
  const rows = [
    claimOf(b.business_id, "b1"),
    claimOf(a.business_id, "a1"),
    claimOf(a.business_id, "a2"),
    claimOf(b.business_id, "b2"),
  ];
  assert.deepEqual(await alone(ctx.db, (tx) => keys.insertClaims(rows, tx)), [true, true, true, true]);
  const items = [
    { id: rows[0] as KeyRow, answer: plainAnswer('{"b":1}'), bytes: 7 },
    { id: rows[1] as KeyRow, answer: plainAnswer('{"a":1}'), bytes: 11 },
    // Taken over meanwhile: neither stored nor counted.
    { id: { ...(rows[2] as KeyRow), claim: "taken-over" }, answer: plainAnswer('{"a":2}'), bytes: 1000 },
    { id: rows[2] as KeyRow, answer: plainAnswer('{"a":2}'), bytes: 13 },
    // Nothing kept (an answer too large to keep): stored, counted as nothing.
    { id: rows[3] as KeyRow, answer: plainAnswer('{"b":2}'), bytes: 0 },
  ];
  const stored = await alone(ctx.db, (tx) => keys.storeAnswers(items, 20, tx));
  assert.deepEqual(stored, [true, true, false, true, true]);
  assert.equal((await keys.find(rows[2] as KeyRow))?.response, '{"a":2}');
  assert.equal((await keys.find(rows[3] as KeyRow))?.status, 200);
  // Again into a slot with bytes already: added to them.
  await alone(ctx.db, (tx) =>
    keys.storeAnswers([{ id: rows[0] as KeyRow, answer: plainAnswer('{"b":1}'), bytes: 5 }], 21, tx),
  );
  assert.deepEqual(await keys.usages([a.business_id, c.business_id, b.business_id, a.business_id], 0), [
    { bytes: 24, oldest: 20 },
    { bytes: 0, oldest: null },
    { bytes: 12, oldest: 20 },
    { bytes: 24, oldest: 20 },
  ]);
  assert.deepEqual(await keys.usages([b.business_id], 21), [{ bytes: 5, oldest: 21 }]);
});

test(`claims with their quota checked on ${ENGINE}: a full business claims nothing, each row answers its business's usage`, async (t) => {
  const { ctx } = await build(t);
  const [full, room, fresh] = [await tenant(ctx), await tenant(ctx), await tenant(ctx)];
  const keys = idempotencyRepository(ctx.db);
  await writeTransaction(ctx.db, (tx) =>
    keys.addUsages(
      [
        { businessId: full.business_id, slot: 30, bytes: 600 },
        { businessId: full.business_id, slot: 31, bytes: 400 },
        { businessId: room.business_id, slot: 31, bytes: 999 },
        // Before the window: not counted.
        { businessId: room.business_id, slot: 29, bytes: 5000 },
      ],
      tx,
    ),
  );
  const held = claimOf(room.business_id, "held");
  assert.deepEqual(await alone(ctx.db, (tx) => keys.insertClaims([held], tx)), [true]);
  const rows = [
    claimOf(full.business_id, "f1"),
    claimOf(room.business_id, "r1"),
    claimOf(fresh.business_id, "n1"),
    claimOf(room.business_id, "r1"),
    claimOf(room.business_id, "held"),
    claimOf(full.business_id, "f2"),
  ];
  const answered = await alone(ctx.db, (tx) =>
    keys.claimWithin(rows, { fromSlot: 30, quotaBytes: 1000 }, tx),
  );
  assert.deepEqual(answered, [
    { won: false, bytes: 1000, oldest: 30 },
    { won: true, bytes: 999, oldest: 31 },
    { won: true, bytes: 0, oldest: null },
    { won: false, bytes: 999, oldest: 31 },
    { won: false, bytes: 999, oldest: 31 },
    { won: false, bytes: 1000, oldest: 30 },
  ]);
  assert.equal(await keys.find({ business_id: full.business_id, idempotency_key: "f1" }), undefined);
  assert.equal((await keys.find(rows[1] as KeyRow))?.claim, rows[1]?.claim, "the first claim of r1 holds it");
  assert.deepEqual(await keys.find(rows[2] as KeyRow), rows[2], "stored as given, no answer yet");
  assert.equal((await keys.find(held))?.claim, held.claim, "the key held before is kept by its holder");
  assert.deepEqual(await alone(ctx.db, (tx) => keys.claimWithin([], { fromSlot: 0, quotaBytes: 1 }, tx)), []);
});

test("two processes claiming the same keys in opposite orders never deadlock", {
  skip: ENGINE !== "postgres" && "row locks between connections are PostgreSQL's",
}, async (t) => {
  const { ctx } = await build(t);
  const [a, b] = [await tenant(ctx), await tenant(ctx)];
  const keys = idempotencyRepository(ctx.db);
  const quota = { fromSlot: 0, quotaBytes: 1_000_000 };
  for (let round = 0; round < 20; round++) {
    const names = Array.from({ length: 24 }, (_, i) => [i % 2 ? a : b, `r${round}-k${i}`] as const);
    const rows = (order: typeof names) => order.map(([tenant, key]) => claimOf(tenant.business_id, key));
    // Each statement on a connection of its own, as two API processes' claim batches are.
    const [first, second] = await Promise.all([
      alone(ctx.db, (tx) => keys.claimWithin(rows(names), quota, tx)),
      alone(ctx.db, (tx) => keys.claimWithin(rows([...names].reverse()), quota, tx)),
    ]);
    // Each key went to exactly one of the two.
    const won = names.map((_, i) => Number(first[i]?.won) + Number(second[names.length - 1 - i]?.won));
    assert.deepEqual(won, Array(names.length).fill(1), `round ${round}`);
  }
});

test("a deadlock PostgreSQL breaks is a transient failure: the caller is told to retry, not that the server failed", {
  skip: ENGINE !== "postgres" && "deadlocks between connections are PostgreSQL's",
}, async (t) => {
  const { ctx } = await build(t);
  const a = await tenant(ctx);
  const keys = idempotencyRepository(ctx.db);
  const [one, two] = [claimOf(a.business_id, "one"), claimOf(a.business_id, "two")];
  // Two transactions each claim a key, then the other's: one of them PostgreSQL aborts.
  let firstDone: () => void = () => {};
  const bothFirst = new Promise<void>((resolve) => {
    let n = 0;
    firstDone = () => {
      if (++n === 2) resolve();
    };
  });
  const crossing = (mine: KeyRow, theirs: KeyRow) =>
    ctx.db.transaction().execute(async (tx) => {
      await keys.insertClaims([mine], tx);
      firstDone();
      await bothFirst;
      await keys.insertClaims([{ ...theirs, claim: `${mine.claim}-late` }], tx);
    });
  const outcomes = await Promise.allSettled([crossing(one, two), crossing(two, one)]);
  const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
  assert.equal(failed.length, 1, "one of the two is aborted");
  const reason = (failed[0] as PromiseRejectedResult).reason as { code?: string };
  assert.equal(reason.code, "40P01");
  assert.equal(isTransientDatabaseError(reason), true);
});

/**
 * On PostgreSQL: `answer` run for 8 keys while the keys' table is empty and never analyzed (often
 * enough for PostgreSQL to keep a generic plan of a statement it was given by name), the table then
 * grown by 20,000 keys, faster than autovacuum analyzes it, and `answer` run for 3 keys more
 * (`late-0` to `late-2`): the sequential and index scans of the keys' table those 3 made.
 */
async function scansOnceGrown(
  ctx: Awaited<ReturnType<typeof build>>["ctx"],
  businessId: string,
  answer: (key: string) => Promise<void>,
): Promise<{ seq: number; idx: number }> {
  for (let i = 0; i < 8; i++) await answer(`early-${i}`);
  await sql`insert into idempotency_keys (business_id, idempotency_key, route, fingerprint, claim, created_at)
      select ${businessId}, 'grown-' || n, 'POST /api/v1/einvoice/sign', ${"f".repeat(64)}, 'c-' || n, ${new Date().toISOString()}
      from generate_series(1, 20000) as n`.execute(ctx.db);
  const scans = async () => {
    await sql`select pg_stat_force_next_flush()`.execute(ctx.db);
    await sql`select pg_stat_clear_snapshot()`.execute(ctx.db);
    const { rows } = await sql<{ seq: string; idx: string }>`
        select seq_scan::text as seq, coalesce(idx_scan, 0)::text as idx from pg_stat_user_tables
        where relname = 'idempotency_keys' and schemaname = current_schema()`.execute(ctx.db);
    return { seq: Number(rows[0]?.seq), idx: Number(rows[0]?.idx) };
  };
  const before = await scans();
  for (let i = 0; i < 3; i++) await answer(`late-${i}`);
  const after = await scans();
  return { seq: after.seq - before.seq, idx: after.idx - before.idx };
}

test(`answers written among a transaction's own writes on ${ENGINE}: where each claim holds its key, counted by business, gone with a rollback`, async (t) => {
  const { ctx } = await build(t);
  const [a, b] = [await tenant(ctx), await tenant(ctx)];
  const keys = idempotencyRepository(ctx.db);
  const rows = [claimOf(a.business_id, "w1"), claimOf(b.business_id, "w2"), claimOf(a.business_id, "w3")];
  assert.deepEqual(await writeTransaction(ctx.db, (tx) => keys.insertClaims(rows, tx)), [true, true, true]);
  const stale = { ...(rows[2] as KeyRow), claim: "taken-over-meanwhile" };
  const items = [
    { id: rows[0] as KeyRow, answer: plainAnswer('{"n":1}'), bytes: 7 },
    { id: rows[1] as KeyRow, answer: plainAnswer('{"n":22}'), bytes: 8 },
    { id: stale, answer: plainAnswer('{"n":333}'), bytes: 9 },
  ];
  const usage = async () =>
    Object.fromEntries(
      (await ctx.db.selectFrom("idempotency_usage").select(["business_id", "slot", "bytes"]).execute()).map(
        (row) => [row.business_id, [row.slot, Number(row.bytes)]],
      ),
    );

  // Rolled back with the transaction they were written in: nothing stored, nothing counted.
  await assert.rejects(
    writeTransaction(ctx.db, async (tx) => {
      await executeTogether(tx, keys.answerWrites(items, 5, tx));
      throw new Error("the work failed");
    }),
    /the work failed/,
  );
  assert.equal((await keys.find(rows[0] as KeyRow))?.response, null);
  assert.deepEqual(await usage(), {});

  await writeTransaction(ctx.db, (tx) => executeTogether(tx, keys.answerWrites(items, 5, tx)));
  assert.equal((await keys.find(rows[0] as KeyRow))?.response, '{"n":1}');
  assert.equal((await keys.find(rows[1] as KeyRow))?.response, '{"n":22}');
  assert.equal((await keys.find(rows[2] as KeyRow))?.status, null, "a claim taken over keeps its own answer");
  // Counted in one statement, business by business, the one taken over too (it is not read back).
  assert.deepEqual(await usage(), { [a.business_id]: [5, 16], [b.business_id]: [5, 8] });
  // Counted again in the same slot: added to.
  const more = claimOf(b.business_id, "w4");
  await writeTransaction(ctx.db, (tx) => keys.insertClaims([more], tx));
  await writeTransaction(ctx.db, (tx) =>
    executeTogether(tx, keys.answerWrites([{ id: more, answer: plainAnswer("{}"), bytes: 2 }], 5, tx)),
  );
  assert.deepEqual(await usage(), { [a.business_id]: [5, 16], [b.business_id]: [5, 10] });
});

test("answers written among a transaction's writes find their keys by index on postgres, whatever the plan kept", {
  skip: ENGINE !== "postgres" && "a plan kept by a prepared statement is PostgreSQL's",
}, async (t) => {
  // One connection: every statement meets the server session that keeps its plans.
  const { ctx } = await build(t, { EINVOICE_DB_POOL_SIZE: "1" });
  const a = await tenant(ctx);
  const keys = idempotencyRepository(ctx.db);
  const claimAndAnswer = async (key: string) => {
    const row = claimOf(a.business_id, key);
    assert.deepEqual(await alone(ctx.db, (tx) => keys.insertClaims([row], tx)), [true]);
    await writeTransaction(ctx.db, (tx) =>
      executeTogether(
        tx,
        keys.answerWrites([{ id: row, answer: plainAnswer(`{"k":"${key}"}`), bytes: 0 }], 1, tx),
      ),
    );
  };
  const { seq } = await scansOnceGrown(ctx, a.business_id, claimAndAnswer);
  assert.equal(seq, 0, "no scan of the whole table for an answer");
  assert.equal((await keys.find(claimOf(a.business_id, "late-2")))?.response, '{"k":"late-2"}');
});

test("answers are stored by their keys' index on postgres, when the keys' table grew after the statement was first planned", {
  skip: ENGINE !== "postgres" && "a plan kept by a prepared statement is PostgreSQL's",
}, async (t) => {
  // One connection: every statement meets the server session that keeps its plans.
  const { ctx } = await build(t, { EINVOICE_DB_POOL_SIZE: "1" });
  const a = await tenant(ctx);
  const keys = idempotencyRepository(ctx.db);
  const answer = plainAnswer('{"status":true}');
  const claimAndAnswer = async (key: string) => {
    const row = claimOf(a.business_id, key);
    assert.deepEqual(await alone(ctx.db, (tx) => keys.insertClaims([row], tx)), [true]);
    return alone(ctx.db, (tx) => keys.storeAnswers([{ id: row, answer, bytes: 15 }], 1, tx));
  };
  const { seq, idx } = await scansOnceGrown(ctx, a.business_id, async (key) =>
    assert.deepEqual(await claimAndAnswer(key), [true]),
  );
  assert.equal(seq, 0, "no scan of the whole table for a batch of answers");
  assert.ok(idx > 0, "the keys were found by their index");
  assert.equal((await keys.find(claimOf(a.business_id, "late-2")))?.response, '{"status":true}');
});

test("a key is claimed, and an answer counted, while a sign batch holds its business's chain on postgres", {
  skip: ENGINE !== "postgres" && "row locks are PostgreSQL's; SQLite has one writer",
}, async (t) => {
  const { ctx } = await build(t);
  const a = await tenant(ctx);
  const keys = idempotencyRepository(ctx.db);
  const businesses = businessRepository(ctx.db);
  const answer = plainAnswer('{"status":true}');
  const row = claimOf(a.business_id, "while-locked");
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked = () => {};
  const holding = new Promise<void>((resolve) => {
    locked = resolve;
  });
  // A sign batch's transaction: the chain locked, then held until the claims below are done.
  const batch = writeTransaction(ctx.db, async (tx) => {
    const [heads] = await readTogether<[Array<{ id: string }>]>(tx, [
      businesses.chainsLock([a.business_id], tx),
    ]);
    assert.deepEqual(
      heads.map((head) => head.id),
      [a.business_id],
    );
    locked();
    await released;
  });
  await holding;
  const timeout = (what: string) =>
    new Promise<string>((resolve) => setTimeout(() => resolve(`${what} waited for the batch`), 3000).unref());
  try {
    const claimed = await Promise.race([
      alone(ctx.db, (tx) => keys.claimWithin([row], { fromSlot: 0, quotaBytes: 1_000_000 }, tx)).then((won) =>
        JSON.stringify(won.map((w) => w.won)),
      ),
      timeout("the claim"),
    ]);
    assert.equal(claimed, "[true]");
    const stored = await Promise.race([
      alone(ctx.db, (tx) => keys.storeAnswers([{ id: row, answer, bytes: 15 }], 1, tx)).then((ok) =>
        JSON.stringify(ok),
      ),
      timeout("the answer"),
    ]);
    assert.equal(stored, "[true]");
  } finally {
    release();
    await batch;
  }
  assert.deepEqual(await keys.usages([a.business_id], 0), [{ bytes: 15, oldest: 1 }]);
});

test("claims made without a flush on postgres set their own commit unflushed, for their transaction only", {
  skip:
    ENGINE !== "postgres" && "SQLite's claims are made in a transaction of flush: false (writeTransaction)",
}, async (t) => {
  const { ctx } = await build(t);
  const a = await tenant(ctx);
  const keys = idempotencyRepository(ctx.db);
  const setting = async (tx: Executor) =>
    (await sql<{ value: string }>`select current_setting('synchronous_commit') as value`.execute(tx)).rows[0]
      ?.value;
  const quota = { fromSlot: 0, quotaBytes: 1_000_000 };
  // Observed inside a transaction: alone, the statement is its transaction, and commits so.
  const [unflushed, flushed] = await Promise.all([
    writeTransaction(ctx.db, async (tx) => {
      const won = await keys.claimWithin([claimOf(a.business_id, "unflushed")], quota, tx, { flush: false });
      return { won: won.map((w) => w.won), setting: await setting(tx) };
    }),
    writeTransaction(ctx.db, async (tx) => {
      const won = await keys.claimWithin([claimOf(a.business_id, "flushed")], quota, tx);
      return { won: won.map((w) => w.won), setting: await setting(tx) };
    }),
  ]);
  assert.deepEqual(unflushed, { won: [true], setting: "off" });
  assert.deepEqual(flushed, { won: [true], setting: "on" }, "a claim flushed by default");
  assert.equal(await setting(ctx.db), "on", "the next transaction flushed again");
  // A business with no usage in the window (no row of `used`) still sets it.
  const none = await writeTransaction(ctx.db, async (tx) => {
    await keys.claimWithin([claimOf(a.business_id, "fresh")], { fromSlot: 1e6, quotaBytes: 1 }, tx, {
      flush: false,
    });
    return setting(tx);
  });
  assert.equal(none, "off");
});
