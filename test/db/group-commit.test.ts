import assert from "node:assert/strict";
import { test } from "node:test";
import SQLite from "better-sqlite3";
import { sql } from "kysely";
import pg from "pg";
import { groupCommit } from "../../src/db/group-commit.ts";
import { isUniqueViolation } from "../../src/invoices/repository.ts";
import { build, ENGINE } from "../helpers.ts";

test(`group commit on ${ENGINE}: a failing piece is rolled back alone, each answer comes after its commit`, async (t) => {
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

  const commit = groupCommit(ctx.db);
  const piece = (i: number) =>
    commit.transaction(async (tx) => {
      // Piece 7 repeats piece 3's key: the constraint refuses it. Piece 12 writes, then fails.
      const id = i === 7 ? "p3" : `p${i}`;
      await sql`insert into probe (id) values (${id})`.execute(tx);
      if (i === 12) throw new Error("piece 12 gives up after writing");
      return id;
    });
  // Submitted in one turn of the event loop, as concurrent requests are: one batch on SQLite.
  const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => piece(i)));

  outcomes.forEach((outcome, i) => {
    if (i === 7) {
      assert.equal(outcome.status, "rejected");
      assert.ok(
        isUniqueViolation((outcome as PromiseRejectedResult).reason),
        "the duplicate fails as itself",
      );
    } else if (i === 12) {
      assert.equal(outcome.status, "rejected");
      assert.equal((outcome as PromiseRejectedResult).reason.message, "piece 12 gives up after writing");
    } else {
      assert.deepEqual(outcome, { status: "fulfilled", value: `p${i}` });
    }
  });
  const expected = Array.from({ length: 20 }, (_, i) => `p${i}`).filter((id) => id !== "p7" && id !== "p12");
  const stored = (await outside()).map((row) => row.id).sort();
  assert.deepEqual(
    stored,
    expected.sort(),
    "every answered piece is committed; the failed ones left nothing",
  );

  // Answered means committed: the moment a piece resolves, another connection already sees it.
  const seen = await commit.transaction(async (tx) => {
    await sql`insert into probe (id) values ('late')`.execute(tx);
    return "late";
  });
  assert.ok((await outside()).some((row) => row.id === seen));
});
