import assert from "node:assert/strict";
import { test } from "node:test";
import { CompiledQuery, Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { executeTogether } from "../../src/db/batch-statements.ts";
import { type Executor, openDatabase, writeTransaction } from "../../src/db/database.ts";
import { PLANNED_EACH_TIME, preparedName, preparingPool } from "../../src/db/postgres-statements.ts";
import type { Database } from "../../src/db/schema.ts";
import { ENGINE, freshDatabase, tempDir } from "../helpers.ts";

const postgresOnly = { skip: ENGINE !== "postgres" && "prepared statements by name are PostgreSQL's" };

/** A database of one connection, so that every statement meets the same server session. */
async function oneConnection(t: import("node:test").TestContext, preparedKb: number) {
  const { url, drop } = await freshDatabase(tempDir(t));
  const db = openDatabase(
    { engine: "postgres", url },
    { dbPool: { size: 1, statementTimeoutMs: 30_000, sqliteCacheMb: 16, preparedKb } },
  );
  t.after(async () => {
    await db.destroy();
    await drop();
  });
  await sql`create table notes (id integer primary key, note text not null)`.execute(db);
  await sql`insert into notes values (1, 'one'), (2, 'two')`.execute(db);
  /** The statements this session keeps prepared by the protocol (not by SQL `prepare`). */
  const prepared = async () => {
    const { rows } = await sql<{ statement: string }>`
      select statement from pg_prepared_statements where not from_sql order by prepare_time`.execute(db);
    return rows.map((row) => row.statement);
  };
  /** A statement of one parameter, the same text every run. */
  const note = (id: number) => sql<{ note: string }>`select note from notes where id = ${id}`.execute(db);
  /** The ids of the notes stored. */
  const notes = async () =>
    (await sql<{ id: number }>`select id from notes order by id`.execute(db)).rows.map((row) => row.id);
  /** The transaction id of the statement: one for every statement of a transaction. */
  const xid = async (on: Executor = db) =>
    (await sql<{ xid: string }>`select txid_current()::text as xid, ${1}::int as v`.execute(on)).rows[0]?.xid;
  return { db, prepared, note, notes, xid };
}

test(
  "a statement run a second time on a connection is prepared by name, and answers as before",
  postgresOnly,
  async (t) => {
    const { prepared, note } = await oneConnection(t, 256);
    assert.deepEqual((await note(1)).rows, [{ note: "one" }]);
    assert.deepEqual(await prepared(), [], "a statement run once keeps nothing on the server");
    assert.deepEqual((await note(2)).rows, [{ note: "two" }]);
    assert.deepEqual(await prepared(), ["select note from notes where id = $1"]);
    assert.deepEqual((await note(1)).rows, [{ note: "one" }]);
    assert.deepEqual((await note(3)).rows, []);
    assert.equal((await prepared()).length, 1, "its later runs use the one prepared");
  },
);

test(
  "a connection prepares statements up to its budget of text, then runs the others unnamed",
  postgresOnly,
  async (t) => {
    const { db, prepared } = await oneConnection(t, 1);
    // Five distinct texts of about 300 characters: three fit in 1 KiB.
    const texts = [0, 1, 2, 3, 4].map((i) => `select $1::integer + ${i} as v /* ${"x".repeat(270)} */`);
    for (let round = 0; round < 3; round++) {
      for (const [i, text] of texts.entries()) {
        const { rows } = await db.executeQuery<{ v: number }>(CompiledQuery.raw(text, [10]));
        assert.deepEqual(rows, [{ v: 10 + i }]);
      }
    }
    assert.deepEqual(await prepared(), texts.slice(0, 3));
  },
);

test(
  "a statement longer than 16 KiB is never prepared; a budget of 0 prepares none",
  postgresOnly,
  async (t) => {
    const long = await oneConnection(t, 256);
    const text = `select $1::text as v /* ${"y".repeat(16 * 1024)} */`;
    for (let i = 0; i < 3; i++) {
      const answered = await long.db.executeQuery<{ v: string }>(CompiledQuery.raw(text, ["kept"]));
      assert.deepEqual(answered.rows, [{ v: "kept" }]);
    }
    assert.deepEqual(await long.prepared(), []);

    const none = await oneConnection(t, 0);
    for (let i = 0; i < 3; i++) {
      assert.deepEqual((await none.note(1)).rows, [{ note: "one" }]);
    }
    assert.deepEqual(await none.prepared(), []);
  },
);

test(
  "a statement marked to be planned each time is never prepared, and answers as any other",
  postgresOnly,
  async (t) => {
    const { db, prepared, note } = await oneConnection(t, 256);
    const text = `${PLANNED_EACH_TIME}select note from notes where id = $1`;
    for (const [id, expected] of [
      [1, "one"],
      [2, "two"],
      [1, "one"],
      [2, "two"],
    ] as const) {
      const { rows } = await db.executeQuery<{ note: string }>(CompiledQuery.raw(text, [id]));
      assert.deepEqual(rows, [{ note: expected }]);
    }
    assert.deepEqual(await prepared(), [], "run four times, it keeps nothing on the server");
    await note(1);
    await note(1);
    assert.deepEqual(await prepared(), ["select note from notes where id = $1"], "the same text unmarked is");
  },
);

test(
  "a prepared select * whose table gains a column fails once, then is prepared again with it",
  postgresOnly,
  async (t) => {
    const { db, prepared } = await oneConnection(t, 256);
    const row = () => sql<Record<string, unknown>>`select * from notes where id = ${1}`.execute(db);
    await row();
    assert.deepEqual((await row()).rows, [{ id: 1, note: "one" }]);
    assert.equal((await prepared()).length, 1);
    // A migration of another version, say, while this process runs.
    await sql`alter table notes add column extra text not null default 'added'`.execute(db);
    await assert.rejects(row(), (error: { code?: string }) => error.code === "0A000");
    assert.deepEqual((await row()).rows, [{ id: 1, note: "one", extra: "added" }]);
    assert.deepEqual((await row()).rows, [{ id: 1, note: "one", extra: "added" }]);
    assert.equal((await prepared()).length, 2, "the text prepared again, under a new name");
  },
);

test(
  "a prepared statement gone from the server session (a pooler's doing) fails once, and the pool prepares nothing more",
  postgresOnly,
  async (t) => {
    const { db, prepared, note } = await oneConnection(t, 256);
    await note(1);
    await note(1);
    const { rows } = await sql<{ name: string }>`
      select name from pg_prepared_statements where not from_sql`.execute(db);
    assert.equal(rows.length, 1);
    // What a pooler in transaction mode does: the next transaction meets a server session that
    // never saw the statement.
    await sql.raw(`deallocate "${(rows[0] as { name: string }).name}"`).execute(db);
    await assert.rejects(note(1), (error: { code?: string }) => error.code === "26000");
    assert.deepEqual((await note(2)).rows, [{ note: "two" }], "the text runs again, unnamed");
    for (let i = 0; i < 3; i++) assert.deepEqual((await note(1)).rows, [{ note: "one" }]);
    const other = () => sql<{ n: number }>`select count(*)::int as n from notes where id > ${0}`.execute(db);
    for (let i = 0; i < 3; i++) assert.deepEqual((await other()).rows, [{ n: 2 }]);
    assert.deepEqual(await prepared(), [], "nothing is prepared once a statement went missing");
  },
);

test(
  "a name already taken on the server session (another client's, through a pooler) fails once, and the pool prepares nothing more",
  postgresOnly,
  async (t) => {
    const { db, prepared } = await oneConnection(t, 256);
    const text = "select note from notes where id = $1";
    const name = preparedName(text, 0);
    // Prepared by SQL, as a session before this one left it on the server connection.
    await sql.raw(`prepare "${name}" (integer) as ${text.replace("$1", "$1::integer")}`).execute(db);
    const note = (id: number) => db.executeQuery<{ note: string }>(CompiledQuery.raw(text, [id]));
    assert.deepEqual((await note(1)).rows, [{ note: "one" }]);
    await assert.rejects(note(1), (error: { code?: string }) => error.code === "42P05");
    for (let i = 0; i < 3; i++) assert.deepEqual((await note(2)).rows, [{ note: "two" }]);
    assert.deepEqual(await prepared(), [], "none prepared by the protocol");
  },
);

test(
  "a transaction's begin goes out with its first statement, and the transaction is whole: committed, rolled back, failed at its first statement",
  postgresOnly,
  async (t) => {
    const { db, notes, xid } = await oneConnection(t, 256);

    // Committed: both rows, written in one transaction begun before its first statement.
    await writeTransaction(db, async (tx) => {
      const first = await xid(tx);
      await sql`insert into notes values (${3}, ${"three"})`.execute(tx);
      await sql`insert into notes values (${4}, ${"four"})`.execute(tx);
      assert.equal(await xid(tx), first, "one transaction from the first statement on");
    });
    assert.deepEqual(await notes(), [1, 2, 3, 4]);

    // Rolled back: nothing of it stays.
    await assert.rejects(
      writeTransaction(db, async (tx) => {
        await sql`insert into notes values (${5}, ${"five"})`.execute(tx);
        throw new Error("changed my mind");
      }),
      /changed my mind/,
    );
    assert.deepEqual(await notes(), [1, 2, 3, 4]);

    // Failed at its first statement (the key taken): that statement's error, and the connection
    // comes back out of any transaction.
    await assert.rejects(
      writeTransaction(db, (tx) => sql`insert into notes values (${1}, ${"again"})`.execute(tx)),
      (error: { code?: string }) => error.code === "23505",
    );
    assert.notEqual(await xid(), await xid(), "no transaction left open");

    // A statement without parameters first (`flush: false` sets synchronous_commit for the
    // transaction alone): it runs inside the transaction, so the setting does not outlive it.
    await writeTransaction(
      db,
      async (tx) => {
        const { rows } = await sql<{
          value: string;
        }>`select current_setting('synchronous_commit') as value`.execute(tx);
        assert.equal(rows[0]?.value, "off");
        await sql`insert into notes values (${6}, ${"six"})`.execute(tx);
      },
      { flush: false },
    );
    const { rows } = await sql<{
      value: string;
    }>`select current_setting('synchronous_commit') as value`.execute(db);
    assert.equal(rows[0]?.value, "on");
    assert.deepEqual(await notes(), [1, 2, 3, 4, 6]);
  },
);

test(
  "after the server drops a connection, at most one transaction fails on it, and the next runs on a fresh one",
  postgresOnly,
  async (t) => {
    const { db, notes } = await oneConnection(t, 256);
    const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db);
    const pid = (rows[0] as { pid: number }).pid;
    // The connection's own server process ends (an administrator, a failover): this statement fails.
    await assert.rejects(sql`select pg_terminate_backend(${pid})`.execute(db));
    // The pool may hand the dead connection out once more before it learns it is gone (it did so
    // before `begin` was pipelined too): that transaction fails, and stores nothing.
    const [first] = await Promise.allSettled([
      writeTransaction(db, (tx) => sql`insert into notes values (${7}, ${"seven"})`.execute(tx)),
    ]);
    await writeTransaction(db, (tx) => sql`insert into notes values (${8}, ${"eight"})`.execute(tx));
    const after = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db);
    assert.notEqual(after.rows[0]?.pid, pid);
    assert.deepEqual(await notes(), first?.status === "fulfilled" ? [1, 2, 7, 8] : [1, 2, 8]);
  },
);

test(
  "a begin is answered without waiting for the server; its answer comes back with the next statement's",
  postgresOnly,
  async (t) => {
    const { url, drop } = await freshDatabase(tempDir(t));
    const pool = new pg.Pool({ connectionString: url, max: 1, pipeline: true });
    const connection = await preparingPool(pool, 0).connect();
    t.after(async () => {
      await connection.query("rollback", []);
      connection.release();
      await pool.end();
      await drop();
    });
    let begun = false;
    const beginning = (connection.query("begin", []) as Promise<unknown>).then(() => {
      begun = true;
    });
    // A few microtasks, no I/O: a round trip to the server could not have been made.
    for (let i = 0; i < 5; i++) await Promise.resolve();
    assert.equal(begun, true);
    await beginning;
    // The statement after it ran inside the transaction it began: the same transaction id twice.
    const xid = async () =>
      (
        (await connection.query("select txid_current()::text as xid, $1::int as v", [1])) as {
          rows: Array<{ xid: string }>;
        }
      ).rows[0]?.xid;
    const first = await xid();
    assert.equal(await xid(), first);
  },
);

test(
  "a write whose answer is not read goes out with the statement after it, and the transaction is whole: committed, or failed with the write's own error",
  postgresOnly,
  async (t) => {
    const { db, notes, xid } = await oneConnection(t, 256);
    const twoNotes = (a: number, b: number) => [
      sql`insert into notes values (${a}, ${"a"})`,
      sql`insert into notes values (${b}, ${"b"})`,
    ];

    // Committed: the write answered before its answer came (nothing of it read), both rows stored.
    await writeTransaction(db, async (tx) => {
      let answered = false;
      const writing = executeTogether(tx, twoNotes(3, 4)).then(() => {
        answered = true;
      });
      for (let i = 0; i < 20; i++) await Promise.resolve();
      assert.equal(answered, true, "answered without a round trip");
      await writing;
    });
    assert.deepEqual(await notes(), [1, 2, 3, 4]);

    // The write fails (a key taken): not where it is made, but at the commit after it, with the
    // write's error; nothing of the transaction stays.
    let wentOn = false;
    await assert.rejects(
      writeTransaction(db, async (tx) => {
        await sql`insert into notes values (${5}, ${"five"})`.execute(tx);
        await executeTogether(tx, twoNotes(6, 1));
        wentOn = true;
      }),
      (error: { code?: string }) => error.code === "23505",
    );
    assert.equal(wentOn, true, "the write's failure comes with the commit");
    assert.deepEqual(await notes(), [1, 2, 3, 4]);

    // A statement between the failed write and the commit fails with the write's error too, not
    // with PostgreSQL's "current transaction is aborted" (25P02) it gets itself.
    await assert.rejects(
      writeTransaction(db, async (tx) => {
        await executeTogether(tx, twoNotes(6, 2));
        await sql`insert into notes values (${7}, ${"seven"})`.execute(tx);
      }),
      (error: { code?: string }) => error.code === "23505",
    );
    assert.deepEqual(await notes(), [1, 2, 3, 4]);

    // The work fails after the write (its own reason): the work's error is the one reported, and
    // the rollback undoes the write; so too when the write had failed as well (the rollback
    // reports nothing of it).
    for (const second of [9, 1])
      await assert.rejects(
        writeTransaction(db, async (tx) => {
          await executeTogether(tx, twoNotes(8, second));
          throw new Error("changed my mind");
        }),
        /changed my mind/,
      );
    assert.deepEqual(await notes(), [1, 2, 3, 4]);

    // A write pg cannot send (a value it cannot serialize: the server never sees it, and its
    // transaction stays whole): the commit rolls back what came before it.
    await assert.rejects(
      writeTransaction(db, async (tx) => {
        await sql`insert into notes values (${13}, ${"thirteen"})`.execute(tx);
        await executeTogether(tx, [
          sql`insert into notes values (${14}, ${"a"})`,
          sql`insert into notes values (${15}, ${{ big: 15n }}::text)`,
        ]);
      }),
      /BigInt/,
    );
    assert.deepEqual(await notes(), [1, 2, 3, 4]);

    // A statement fails, its caller catches that and goes on (no savepoint): PostgreSQL answers
    // the commit with a rollback, and the commit fails instead of passing for committed.
    await assert.rejects(
      writeTransaction(db, async (tx) => {
        await sql`insert into notes values (${16}, ${"sixteen"})`.execute(tx);
        await sql`insert into notes values (${1}, ${"again"})`.execute(tx).catch(() => {});
      }),
      (error: { code?: string }) => error.code === "25P02",
    );
    assert.deepEqual(await notes(), [1, 2, 3, 4]);

    // Outside a transaction the write is waited for: its failure is its own.
    await assert.rejects(
      executeTogether(db, twoNotes(10, 1)),
      (error: { code?: string }) => error.code === "23505",
    );
    await executeTogether(db, twoNotes(11, 12));
    assert.deepEqual(await notes(), [1, 2, 3, 4, 11, 12]);
    // Each statement its own transaction: none is left open.
    assert.notEqual(await xid(), await xid(), "no transaction left open");
  },
);

test(
  "a sign batch's transaction goes to the server in two writes: begin with the reads, the write with the commit",
  postgresOnly,
  async (t) => {
    const { url, drop } = await freshDatabase(tempDir(t));
    const pool = new pg.Pool({ connectionString: url, max: 1, pipeline: true });
    // Each write the connection's socket makes (one system call each): what Node hands its stream.
    let writes = 0;
    pool.on("connect", (client) => {
      const socket = (client as unknown as { connection: { stream: Record<string, unknown> } }).connection
        .stream;
      for (const method of ["_write", "_writev"]) {
        const original = socket[method] as (...args: unknown[]) => unknown;
        socket[method] = (...args: unknown[]) => {
          writes += 1;
          return original.apply(socket, args);
        };
      }
    });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool, 0) }) });
    t.after(async () => {
      await db.destroy();
      await drop();
    });
    await sql`create table notes (id integer primary key, note text not null)`.execute(db);
    for (const id of [1, 3]) {
      const before = writes;
      await writeTransaction(db, async (tx) => {
        // The batch's reads, with the chain lock; then its write, whose answer is not read.
        const { rows } = await sql<{
          n: number;
        }>`select count(*)::int as n from notes where id < ${id}`.execute(tx);
        assert.equal(rows[0]?.n, id === 1 ? 0 : 2);
        await executeTogether(tx, [
          sql`insert into notes values (${id}, ${"a"})`,
          sql`insert into notes values (${id + 1}, ${"b"})`,
        ]);
      });
      assert.equal(writes - before, 2, "begin with the reads, the write with the commit");
    }
    const { rows } = await sql<{ id: number }>`select id from notes order by id`.execute(db);
    assert.deepEqual(
      rows.map((row) => row.id),
      [1, 2, 3, 4],
    );
  },
);
