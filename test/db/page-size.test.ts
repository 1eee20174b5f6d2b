import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import SQLite from "better-sqlite3";
import { sql } from "kysely";
import { openDatabase } from "../../src/db/database.ts";
import { build, ENGINE, freshInvoice, tempDir, tenant } from "../helpers.ts";

const sqliteOnly = { skip: ENGINE !== "sqlite" && "page sizes are SQLite's" };
const pool = {
  dbPool: { size: 1, statementTimeoutMs: 30_000, sqliteCacheMb: 16, preparedKb: 0 },
  checkpointer: true,
};

async function pragma(db: ReturnType<typeof openDatabase>, name: string): Promise<number> {
  const { rows } = await sql<Record<string, number>>`${sql.raw(`pragma ${name}`)}`.execute(db);
  return Number(Object.values(rows[0] ?? {})[0]);
}

test(
  "a new SQLite database has 8 KiB pages, so signed invoices share a page instead of one each; its WAL threshold stays 40 MiB",
  sqliteOnly,
  async (t) => {
    const { app, ctx } = await build(t);
    const a = await tenant(ctx);
    for (let i = 0; i < 2; i++) {
      const signed = await app.inject({
        method: "POST",
        url: "/api/v1/einvoice/sign",
        headers: a.headers,
        payload: freshInvoice(a),
      });
      assert.equal(signed.statusCode, 200, signed.body);
    }
    assert.equal(await pragma(ctx.db, "page_size"), 8192);
    assert.equal(await pragma(ctx.db, "wal_autocheckpoint"), (40 * 1024 * 1024) / 8192);
    // The full sample invoice's row is about 3.5 kB: a 4 KiB page holds one, so every sign wrote a
    // table page of its own (and split one); an 8 KiB page holds two.
    const leaves = await sql<{ ncell: number }>`
      select ncell from dbstat where name = 'invoices' and pagetype = 'leaf'`.execute(ctx.db);
    assert.deepEqual(
      leaves.rows.map((row) => Number(row.ncell)),
      [2],
    );
  },
);

test(
  "a SQLite database made with 4 KiB pages keeps them, and its WAL threshold is counted in its own pages",
  sqliteOnly,
  async (t) => {
    const file = path.join(tempDir(t), "old.db");
    const made = new SQLite(file);
    made.pragma("page_size = 4096");
    made.pragma("journal_mode = WAL");
    made.exec("create table kept (id integer primary key, note text)");
    made.prepare("insert into kept (note) values (?)").run("written before");
    made.close();
    const db = openDatabase({ engine: "sqlite", file }, pool);
    t.after(() => db.destroy());
    assert.equal(await pragma(db, "page_size"), 4096);
    assert.equal(await pragma(db, "wal_autocheckpoint"), (40 * 1024 * 1024) / 4096);
    const { rows } = await sql<{ note: string }>`select note from kept`.execute(db);
    assert.deepEqual(rows, [{ note: "written before" }]);
  },
);
