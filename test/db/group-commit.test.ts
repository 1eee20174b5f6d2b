import assert from "node:assert/strict";
import { test } from "node:test";
import SQLite from "better-sqlite3";
import { type Kysely, sql } from "kysely";
import pg from "pg";
import { batcher, type Outcome } from "../../src/batcher.ts";
import { businessRepository } from "../../src/businesses/business-repository.ts";
import {
  chunksFor,
  compiledByCount,
  executeTogether,
  insertRows,
  powerOfTwoChunks,
  type Read,
  read,
  readTogether,
} from "../../src/db/batch-statements.ts";
import { type Executor, writeTransaction } from "../../src/db/database.ts";
import { isUniqueViolation } from "../../src/invoices/invoice-repository.ts";
import { build, ENGINE, freshInvoice, type Json, tenant } from "../helpers.ts";

const API = "/api/v1/einvoice";

test(`group commit on ${ENGINE}: one batch per turn, each item its own outcome, answered after the commit`, async (t) => {
  const { ctx, dbFile, databaseUrl } = await build(t);
  await sql`create table probe (id text primary key)`.execute(ctx.db);
  // A connection of its own, outside the service's: it sees only what is committed.
  const outside = dbFile
    ? async () => {
        const reader = new SQLite(dbFile, { readonly: true });
        try {
          return reader.prepare("select id from probe").all() as { id: string }[];
        } finally {
          reader.close();
        }
      }
    : async () => {
        const client = new pg.Client({ connectionString: databaseUrl });
        await client.connect();
        try {
          return (await client.query<{ id: string }>("select id from probe")).rows;
        } finally {
          await client.end();
        }
      };

  const batches: string[][] = [];
  const commit = batcher<string, string>(
    async (ids) => {
      batches.push(ids);
      return writeTransaction(ctx.db, async (tx) => {
        const outcomes: Outcome<string>[] = [];
        for (const id of ids) {
          if (id === "refused") {
            outcomes.push({ ok: false, error: new Error(`${id} is refused alone`) });
            continue;
          }
          await sql`insert into probe (id) values (${id})`.execute(tx);
          outcomes.push({ ok: true, value: id });
        }
        return outcomes;
      });
    },
    { maxBatch: 8, concurrency: 1 },
  );

  // Submitted in one turn of the event loop, as concurrent requests are: batches of at most 8.
  const ids = Array.from({ length: 20 }, (_, i) => (i === 7 ? "refused" : `p${i}`));
  const outcomes = await Promise.allSettled(ids.map((id) => commit.submit(id)));
  assert.deepEqual(
    batches.map((b) => b.length),
    [8, 8, 4],
  );
  outcomes.forEach((outcome, i) => {
    if (i === 7) {
      assert.equal(outcome.status, "rejected");
      assert.equal((outcome as PromiseRejectedResult).reason.message, "refused is refused alone");
    } else {
      assert.deepEqual(outcome, { status: "fulfilled", value: `p${i}` });
    }
  });
  const stored = (await outside()).map((row) => row.id).sort();
  assert.deepEqual(stored, ids.filter((id) => id !== "refused").sort());

  // A batch whose transaction fails (here: a duplicate key the work did not foresee) stores nothing,
  // and every item of it learns why.
  const failing = await Promise.allSettled([commit.submit("fresh"), commit.submit("p1")]);
  for (const outcome of failing) {
    assert.equal(outcome.status, "rejected");
    assert.ok(isUniqueViolation((outcome as PromiseRejectedResult).reason));
  }
  assert.ok(!(await outside()).some((row) => row.id === "fresh"), "the failed batch left nothing");

  // Answered means committed: the moment an item resolves, another connection already sees it.
  const seen = await commit.submit("late");
  assert.ok((await outside()).some((row) => row.id === seen));
});

test("power-of-two chunks keep every row, in order, in a few statement sizes", () => {
  for (const n of [0, 1, 2, 3, 63, 64, 65, 100, 257]) {
    const rows = Array.from({ length: n }, (_, i) => i);
    const chunks = powerOfTwoChunks(rows, 64);
    assert.deepEqual(chunks.flat(), rows, `n=${n}`);
    for (const chunk of chunks) {
      assert.ok(chunk.length <= 64 && (chunk.length & (chunk.length - 1)) === 0, `n=${n}: ${chunk.length}`);
    }
  }
});

test(`multi-row statements on ${ENGINE}: chunks of a few sizes on SQLite, as few as the limit allows on PostgreSQL`, async (t) => {
  const { ctx } = await build(t);
  const sizes = (n: number, max?: number) =>
    chunksFor(
      ctx.db,
      Array.from({ length: n }, (_, i) => i),
      max,
    ).map((chunk) => chunk.length);
  // SQLite keeps prepared statements by text; PostgreSQL prepares each anew, and each chunk is a
  // round trip (a sign batch's, under its chains' lock).
  if (ENGINE === "sqlite") {
    assert.deepEqual(sizes(7), [4, 2, 1]);
    assert.deepEqual(sizes(70), [64, 4, 2]);
  } else {
    assert.deepEqual(sizes(7), [7]);
    assert.deepEqual(sizes(70), [64, 6]);
    assert.deepEqual(sizes(300, 256), [256, 44]);
  }
  assert.deepEqual(sizes(0), []);
});

test(`writes run together on ${ENGINE}: one statement on PostgreSQL (one snapshot, foreign keys checked at its end), in turn on SQLite`, async (t) => {
  const { ctx } = await build(t);
  await sql`create table parent (id integer primary key)`.execute(ctx.db);
  await sql`create table child (id integer primary key, parent integer not null references parent (id), seen integer)`.execute(
    ctx.db,
  );
  const db = ctx.db as unknown as Kysely<{
    parent: { id: number };
    child: { id: number; parent: number; seen: number };
  }>;
  /** A parent and its child; the child counts the parents it sees. */
  const family = (id: number) => [
    db.insertInto("parent").values({ id }),
    sql`insert into child (id, parent, seen) select ${id}, ${id}, count(*) from parent`,
  ];
  await writeTransaction(ctx.db, (tx) => executeTogether(tx, family(1)));
  const seen = async (id: number) =>
    Number((await db.selectFrom("child").select("seen").where("id", "=", id).executeTakeFirstOrThrow()).seen);
  // Together, the child's clause does not see the parent inserted beside it; its key still holds.
  assert.equal(await seen(1), ENGINE === "postgres" ? 0 : 1);
  // Past PostgreSQL's 65,535 parameters a statement, they run in turn there too.
  // (Three of 30,000: SQLite's own bound is 32,766 a statement.)
  const many = [0, 1, 2].map((n) =>
    db.insertInto("parent").values(Array.from({ length: 30_000 }, (_, i) => ({ id: 1000 + n * 30_000 + i }))),
  );
  await writeTransaction(ctx.db, (tx) => executeTogether(tx, [...many, ...family(2)]));
  assert.equal(await seen(2), 90_002);
  // A child without its parent fails the key at the statement's end, and nothing of it stays.
  await assert.rejects(
    writeTransaction(ctx.db, (tx) =>
      executeTogether(tx, [
        db.insertInto("parent").values({ id: 3 }),
        sql`insert into child (id, parent) values (4, 4)`,
      ]),
    ),
  );
  assert.equal((await db.selectFrom("parent").select("id").where("id", "=", 3).execute()).length, 0);
});

test(`insertRows on ${ENGINE}: the builder's statements, compiled once a shape, values bound in column order, run together with others`, async (t) => {
  const { ctx } = await build(t);
  const columns = ["at", "actor", "action", "business_id", "subject", "detail"] as const;
  type Row = {
    at: string;
    actor: string;
    action: string;
    business_id: null;
    subject: string;
    detail: string;
  };
  const rowsOf = (count: number, tag: string): Row[] =>
    Array.from({ length: count }, (_, i) => ({
      at: `2026-12-07T00:00:${String(i % 60).padStart(2, "0")}Z`,
      actor: i % 3 === 0 ? "cli" : `key:${tag}${i}`,
      action: "probe",
      business_id: null,
      // A `$1` in a value is the value's: only the statement's text is numbered again.
      subject: `${tag}-${i}`,
      detail: i % 2 === 0 ? "{}" : `{"note":"$1 and $${i}"}`,
    }));
  for (const count of [1, 3, 7, 64, 70]) {
    const rows = rowsOf(count, `c${count}`);
    // The same text and values as the builder's, chunk by chunk (the builder orders a row's
    // columns as its first row gives them: the same order here).
    const built = chunksFor(ctx.db, rows).map((chunk) =>
      ctx.db.insertInto("audit_log").values(chunk).compile(),
    );
    const compiled = insertRows(ctx.db, "audit_log", columns, rows);
    assert.deepEqual(
      compiled.map(({ sql: text, parameters }) => ({ text, parameters })),
      built.map(({ sql: text, parameters }) => ({ text, parameters })),
    );
    // Run with a builder's statement on either side: on PostgreSQL one statement, its parameters
    // numbered on from the clauses before.
    await writeTransaction(ctx.db, (tx) =>
      executeTogether(tx, [
        tx.insertInto("audit_log").values({ ...(rowsOf(1, "b")[0] as Row), subject: `before-${count}` }),
        ...insertRows(tx, "audit_log", columns, rows),
        tx.insertInto("audit_log").values({ ...(rowsOf(1, "a")[0] as Row), subject: `after-${count}` }),
      ]),
    );
    const stored = await ctx.db
      .selectFrom("audit_log")
      .select(columns)
      .where("subject", "like", `c${count}-%`)
      .execute();
    // The clauses of one statement (PostgreSQL) take their ids in no set order.
    const bySubject = (a: { subject: string }, b: { subject: string }) => a.subject.localeCompare(b.subject);
    assert.deepEqual(stored.sort(bySubject), [...rows].sort(bySubject));
    const around = await ctx.db
      .selectFrom("audit_log")
      .select("subject")
      .where("subject", "in", [`before-${count}`, `after-${count}`])
      .execute();
    assert.equal(around.length, 2);
  }
  // One text three times in a statement, twice over: each at its own offset, its numbering kept by
  // text and offset (kept by text alone, the third would be numbered as the second).
  const subjectOrder = (a: { subject: string }, b: { subject: string }) => a.subject.localeCompare(b.subject);
  for (const round of [1, 2]) {
    const parts = ["x", "y", "z"].map((tag) => ({
      tag: `r${round}${tag}`,
      rows: rowsOf(3, `r${round}${tag}`),
    }));
    await writeTransaction(ctx.db, (tx) =>
      executeTogether(
        tx,
        parts.flatMap(({ rows }) => insertRows(tx, "audit_log", columns, rows)),
      ),
    );
    for (const { tag, rows } of parts) {
      const stored = await ctx.db
        .selectFrom("audit_log")
        .select(columns)
        .where("subject", "like", `${tag}-%`)
        .execute();
      assert.deepEqual(stored.sort(subjectOrder), [...rows].sort(subjectOrder), tag);
    }
  }
  // A row without one of the columns is a mistake, not the column's default.
  const { detail: _left, ...partial } = rowsOf(1, "partial")[0] as Row;
  assert.throws(
    () => insertRows(ctx.db, "audit_log", columns, [partial as Row]),
    /audit_log\.detail is undefined/,
  );
});

test(`reads compiled once a shape and count on ${ENGINE}: the builder's text for each count, run with their values`, async (t) => {
  const { ctx } = await build(t);
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) ids.push((await tenant(ctx)).business_id);
  const businesses = businessRepository(ctx.db);
  // Counts in an order that meets each again after another: a text kept for one count and given
  // to another would have the wrong number of placeholders.
  for (const count of [1, 3, 2, 4, 1, 3]) {
    const wanted = ids.slice(0, count);
    const built = () => ctx.db.selectFrom("businesses").select("id").where("id", "in", wanted).orderBy("id");
    const compiled = compiledByCount(ctx.db, "probe of businesses", wanted, built);
    assert.equal(compiled.sql, built().compile().sql, `${count}: the builder's text`);
    assert.deepEqual(compiled.parameters, wanted);
    const [heads, again] = await writeTransaction(ctx.db, (tx) =>
      readTogether(tx, [
        businesses.chainsLock(wanted, tx),
        { query: compiled, answer: (rows) => rows.map((row) => row.id as string) },
      ]),
    );
    assert.deepEqual(
      heads.map((head) => head.id),
      [...wanted].sort(),
      `${count}: the chains locked`,
    );
    assert.deepEqual(again, [...wanted].sort(), `${count}: the read compiled here`);
  }
});

test(`reads run together on ${ENGINE}: the answers of one by one, a read left out answering undefined; on PostgreSQL one statement, its row locks held to the end of the transaction`, async (t) => {
  const { ctx, databaseUrl } = await build(t);
  await sql`create table heads (id text primary key, head text, length integer not null)`.execute(ctx.db);
  await sql`insert into heads values ('a', null, 0), ('b', 'h1', 7), ('c', 'it''s "quoted" ✓', 2)`.execute(
    ctx.db,
  );
  const db = ctx.db as unknown as Kysely<{ heads: { id: string; head: string | null; length: number } }>;
  const rowsOf = (
    ids: string[],
    tx: Executor,
  ): Read<Array<{ id: string; head: string | null; length: number }>> => {
    const query = (tx as unknown as typeof db)
      .selectFrom("heads")
      .selectAll()
      .where("id", "in", ids)
      .orderBy("id");
    return { query: ENGINE === "postgres" ? query.forUpdate() : query, answer: (rows) => rows as never };
  };
  const count: Read<number> = {
    query: db.selectFrom("heads").select((eb) => eb.fn.countAll<number>().as("n")),
    answer: (rows) => Number(rows[0]?.n),
  };
  const none: Read<string[]> = {
    query: db.selectFrom("heads").select("id").where("id", "=", "zz"),
    answer: (rows) => rows.map((row) => row.id as string),
  };
  const lockedElsewhere = async (id: string) => {
    if (ENGINE !== "postgres") return undefined;
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await client.query(
        `set search_path to ${(await sql<{ s: string }>`select current_schema() as s`.execute(ctx.db)).rows[0]?.s}`,
      );
      await client.query("select id from heads where id = $1 for update nowait", [id]);
      return false;
    } catch (err) {
      return (err as { code?: string }).code === "55P03";
    } finally {
      await client.end();
    }
  };
  const [rows, left, counted, empty, held, free] = await writeTransaction(ctx.db, async (tx) => {
    const answers = await readTogether<
      [Array<{ id: string; head: string | null; length: number }>, undefined, number, string[]]
    >(tx, [rowsOf(["c", "a"], tx), undefined, count, none]);
    return [...answers, await lockedElsewhere("a"), await lockedElsewhere("b")] as const;
  });
  assert.deepEqual(rows, [
    { id: "a", head: null, length: 0 },
    { id: "c", head: 'it\'s "quoted" ✓', length: 2 },
  ]);
  assert.equal(left, undefined);
  assert.equal(counted, 3);
  assert.deepEqual(empty, []);
  // The same answers one by one.
  assert.deepEqual(await writeTransaction(ctx.db, (tx) => read(tx, rowsOf(["c", "a"], tx))), rows);
  if (ENGINE === "postgres") {
    assert.equal(held, true, "a row the reads locked stays locked until the transaction ends");
    assert.equal(free, false, "a row they did not lock is free");
    assert.equal(await lockedElsewhere("a"), false, "and is free once it ends");
  }
});

test(`a sign batch on ${ENGINE}: duplicates within it and before it fail alone, the rest chain in order`, async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const b = await tenant(ctx, { tin: "30198222-0003" });
  const sign = (who: typeof a, payload: Json) =>
    app.inject({ method: "POST", url: `${API}/sign`, headers: who.headers, payload });
  const before = freshInvoice(a, "invoice-minimal");
  assert.equal((await sign(a, before)).statusCode, 200);

  // Requests of one turn form one batch: two businesses interleaved, a repeat inside the batch and
  // an IRN registered before it.
  const fresh = Array.from({ length: 12 }, (_, i) => freshInvoice(i % 3 === 0 ? b : a, "invoice-minimal"));
  const submitted: Array<{ who: typeof a; payload: Json }> = fresh.map((payload, i) => ({
    who: i % 3 === 0 ? b : a,
    payload,
  }));
  submitted.splice(5, 0, { who: a, payload: fresh[1] as Json }, { who: a, payload: before });
  const answers = await Promise.all(submitted.map(({ who, payload }) => sign(who, payload)));
  const refused = answers.flatMap((answer, i) => (answer.statusCode === 200 ? [] : [i]));
  // The repeat of fresh[1] fails, whichever of its two copies reached the batch second.
  assert.ok(refused.includes(6), "the IRN registered before the batch is refused");
  assert.equal(refused.length, 2, answers.map((answer) => answer.body).join("\n"));
  assert.ok(refused.includes(5) || refused.includes(1));
  for (const i of refused) assert.equal(answers[i]?.json().message, "IRN already exists.");
  assert.deepEqual(await ctx.audit.verify(), { checked: 13, broken: [] });

  for (const who of [a, b]) {
    const chain = await ctx.db
      .selectFrom("invoices")
      .select(["irn", "chain_seq"])
      .where("business_id", "=", who.business_id)
      .orderBy("chain_seq")
      .execute();
    const expected = [
      ...(who === a ? [String(before.irn)] : []),
      ...fresh.filter((_, i) => (i % 3 === 0) === (who === b)).map((doc) => String(doc.irn)),
    ];
    assert.deepEqual(
      chain.map((row) => row.chain_seq),
      expected.map((_, i) => i + 1),
    );
    // SQLite reads complete in request order, so the chain follows the order of submission; on
    // PostgreSQL the reads before the batch overlap and finish in any order.
    if (ENGINE === "sqlite") {
      assert.deepEqual(
        chain.map((row) => row.irn),
        expected,
      );
    } else {
      assert.deepEqual(chain.map((row) => row.irn).sort(), expected.sort());
    }
  }
});

test("a SQLite writer waiting for another process's write lock keeps serving: the wait blocks no request", {
  skip: ENGINE !== "sqlite" && "the write lock is SQLite's",
}, async (t) => {
  const { ctx, dbFile } = await build(t);
  await sql`create table probe (id text primary key)`.execute(ctx.db);
  // Another process's writer, as a second connection to the same file holding the write lock.
  const other = new SQLite(dbFile as string);
  t.after(() => other.close());
  other.exec("begin immediate");

  let ticks = 0;
  const ticker = setInterval(() => ticks++, 5);
  // Cleared whatever the assertions say: a live interval would keep the test process from ending.
  t.after(() => clearInterval(ticker));
  const write = writeTransaction(ctx.db, async (tx) => {
    await sql`insert into probe (id) values ('after the lock')`.execute(tx);
    return "written";
  });
  // While the writer waits, the event loop turns and reads on the same connection are answered. A
  // writer waiting in SQLite's busy handler would hold the whole thread until its 5 s timeout: this
  // pause would then last that long, however idle or busy the machine (ticks alone are not a sign:
  // a busy machine gives a free loop few turns too).
  let paused = 0;
  let read: { n: number } | undefined;
  try {
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 300));
    paused = performance.now() - started;
    read = (await sql<{ n: number }>`select count(*) as n from probe`.execute(ctx.db)).rows[0];
  } finally {
    // Released whatever happened above, so the writer ends before the test does.
    other.exec("commit");
  }
  assert.equal(await write, "written");
  assert.equal(read?.n, 0);
  assert.ok(paused < 2500, `a 300 ms pause took ${Math.round(paused)} ms while the writer waited`);
  assert.ok(ticks >= 1, `the event loop turned ${ticks} times`);
  assert.deepEqual(other.prepare("select id from probe").all(), [{ id: "after the lock" }]);
});

test(`a write that need not reach the disk at once (flush: false) on ${ENGINE} commits, and every later write is flushed again`, async (t) => {
  const { ctx } = await build(t);
  await sql`create table probe (id text primary key)`.execute(ctx.db);
  const level = async () =>
    ENGINE === "sqlite"
      ? (await sql<{ synchronous: number }>`pragma synchronous`.execute(ctx.db)).rows[0]?.synchronous
      : (await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(ctx.db)).rows[0]
          ?.synchronous_commit;
  const durable = await level();
  assert.equal(durable, ENGINE === "sqlite" ? 2 : "on", "FULL / on");

  const inside = await writeTransaction(
    ctx.db,
    async (tx) => {
      await tx
        .insertInto("probe" as never)
        .values({ id: "a" } as never)
        .execute();
      return ENGINE === "sqlite"
        ? undefined
        : (await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(tx)).rows[0]
            ?.synchronous_commit;
    },
    { flush: false },
  );
  if (ENGINE === "postgres") assert.equal(inside, "off", "for that transaction only");
  assert.equal(await level(), durable);
  await assert.rejects(
    writeTransaction(
      ctx.db,
      async () => {
        throw new Error("the work fails");
      },
      { flush: false },
    ),
    /the work fails/,
  );
  assert.equal(await level(), durable, "restored after a failure too");
  const rows = await sql<{ id: string }>`select id from probe`.execute(ctx.db);
  assert.deepEqual(rows.rows, [{ id: "a" }]);
});
