import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { sql } from "kysely";
import { build, ENGINE, eventually, freshInvoice, tenant } from "../helpers.ts";

const API = "/api/v1/einvoice";

test("the checkpointer thread copies committed pages into the database file; the committing connection does not", {
  skip: ENGINE !== "sqlite" && "checkpoints are SQLite's",
}, async (t) => {
  const { app, ctx, dbFile } = await build(t);
  const file = dbFile as string;
  const a = await tenant(ctx);
  const sizeBefore = fs.statSync(file).size;
  // About 200 invoices of 4 kB: far below the committing connection's own threshold (40 MB), so
  // only the checkpointer can have moved them from the WAL into the file.
  const answers = await Promise.all(
    Array.from({ length: 200 }, () =>
      app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: freshInvoice(a) }),
    ),
  );
  assert.deepEqual(new Set(answers.map((answer) => answer.statusCode)), new Set([200]));
  // 40 MiB of WAL in the new database's 8 KiB pages.
  const setting = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(ctx.db);
  assert.deepEqual(setting.rows, [{ wal_autocheckpoint: 5_120 }]);
  await eventually(
    async () => fs.statSync(file).size >= sizeBefore + 200 * 4096,
    5_000,
    "the database file to receive the signed invoices from the WAL",
  );
});
