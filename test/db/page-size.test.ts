import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import SQLite from "better-sqlite3";
import { sql } from "kysely";
import { openDatabase } from "../../src/db/database.ts";
import { migrateToLatest } from "../../src/db/migrations.ts";
import { ENGINE, tempDir } from "../helpers.ts";

const sqliteOnly = { skip: ENGINE !== "sqlite" && "page sizes are SQLite's" };
const pool = { dbPool: { size: 1, statementTimeoutMs: 30_000, sqliteCacheMb: 16 }, checkpointer: true };

async function pragma(db: ReturnType<typeof openDatabase>, name: string): Promise<number> {
  const { rows } = await sql<Record<string, number>>`${sql.raw(`pragma ${name}`)}`.execute(db);
  return Number(Object.values(rows[0] ?? {})[0]);
}

test(
  "a new SQLite database has 8 KiB pages, so an invoice's row fits in one; its WAL threshold stays 40 MiB",
  sqliteOnly,
  async (t) => {
    const file = path.join(tempDir(t), "new.db");
    const db = openDatabase({ engine: "sqlite", file }, pool);
    t.after(() => db.destroy());
    await migrateToLatest(db);
    assert.equal(await pragma(db, "page_size"), 8192);
    assert.equal(await pragma(db, "wal_autocheckpoint"), (40 * 1024 * 1024) / 8192);
    assert.equal(
      String((await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db)).rows[0]?.journal_mode),
      "wal",
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
