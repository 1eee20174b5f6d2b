import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { activeKeys } from "../../src/businesses/active-keys.ts";
import { businessRepository } from "../../src/businesses/business-repository.ts";
import { changeCounter, writeTransaction } from "../../src/db/database.ts";
import { createContext } from "../../src/main.ts";
import { build, ENGINE, tenant } from "../helpers.ts";

/** The real repository's lookups, counted: how many reads the cache let through. */
function countedKeys(ctx: Awaited<ReturnType<typeof createContext>>) {
  const repository = businessRepository(ctx.db);
  const counted = {
    reads: 0,
    keys: activeKeys({
      find: (apiKey) => {
        counted.reads++;
        return repository.findActiveKey(apiKey);
      },
      changes: changeCounter(ctx.db),
    }),
  };
  return counted;
}

test("a key revoked through another connection (another process) fails on its very next request", async (t) => {
  const { ctx, config } = await build(t);
  const other = await createContext(config);
  t.after(() => other.close());
  const a = await tenant(ctx);
  for (let i = 0; i < 3; i++) {
    assert.equal(typeof (await ctx.businesses.authenticate(a.api_key, a.api_secret)), "object");
  }
  await other.businesses.revokeKey(a.api_key);
  assert.equal(await ctx.businesses.authenticate(a.api_key, a.api_secret), "unknown_key");
});

test("a key revoked by this process fails on its very next request; a new key works on its first", async (t) => {
  const { ctx } = await build(t);
  const a = await tenant(ctx);
  assert.equal(typeof (await ctx.businesses.authenticate(a.api_key, a.api_secret)), "object");
  await ctx.businesses.revokeKey(a.api_key);
  assert.equal(await ctx.businesses.authenticate(a.api_key, a.api_secret), "unknown_key");
  const fresh = await ctx.businesses.createKey(a.business_id);
  assert.equal(typeof (await ctx.businesses.authenticate(fresh.api_key, fresh.api_secret)), "object");
  assert.equal(await ctx.businesses.authenticate(fresh.api_key, "sk_wrong"), "wrong_secret");
});

test("an active key is read once while nothing else commits; any other connection's commit makes it read again", async (t) => {
  const { ctx, config } = await build(t);
  const a = await tenant(ctx);
  const counted = countedKeys(ctx);
  for (let i = 0; i < 5; i++) assert.equal((await counted.keys.find(a.api_key))?.api_key, a.api_key);
  // PostgreSQL has no change counter: every lookup reads.
  assert.equal(counted.reads, ENGINE === "sqlite" ? 1 : 5);
  // This connection's own commits leave the kept rows (they are not revocations: those forget).
  await writeTransaction(ctx.db, (tx) => sql`update businesses set name = name`.execute(tx));
  await counted.keys.find(a.api_key);
  assert.equal(counted.reads, ENGINE === "sqlite" ? 1 : 6);
  const other = await createContext(config);
  t.after(() => other.close());
  await tenant(other);
  await counted.keys.find(a.api_key);
  assert.equal(counted.reads, ENGINE === "sqlite" ? 2 : 7);
  // Unknown keys are never kept.
  for (let i = 0; i < 3; i++) assert.equal(await counted.keys.find("ak_unknown"), undefined);
  assert.equal(counted.reads, ENGINE === "sqlite" ? 5 : 10);
});

test("a revocation committed elsewhere while this connection is inside a transaction is not missed", async (t) => {
  const { ctx, config } = await build(t);
  const a = await tenant(ctx);
  const counted = countedKeys(ctx);
  await counted.keys.find(a.api_key);
  const other = await createContext(config);
  t.after(() => other.close());
  // Revoked by the other connection, then looked up from inside a write transaction of this one
  // (which, having its lock, saw the revocation when it began) before the transaction ends.
  await other.businesses.revokeKey(a.api_key);
  let during: unknown = "not looked up";
  await writeTransaction(ctx.db, async (tx) => {
    await sql`select 1`.execute(tx);
    during = counted.keys.find(a.api_key);
  });
  assert.equal(await during, undefined);
  if (ENGINE === "sqlite") {
    // Inside a transaction not of writeTransaction's (an older snapshot, maybe), it cannot tell.
    const b = await tenant(ctx);
    await counted.keys.find(b.api_key);
    await ctx.db.connection().execute(async (connection) => {
      await sql`begin`.execute(connection);
      assert.equal(changeCounter(ctx.db)?.(), undefined);
      await sql`commit`.execute(connection);
    });
    assert.equal(typeof changeCounter(ctx.db)?.(), "number");
  }
});
