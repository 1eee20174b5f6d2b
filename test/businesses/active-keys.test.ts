import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { type TestContext, test } from "node:test";
import { sql } from "kysely";
import pg from "pg";
import { activeKeys, CHANGES_LOOKED_AT_MS, REVOCATION_SETTLES_MS } from "../../src/businesses/active-keys.ts";
import { businessRepository } from "../../src/businesses/business-repository.ts";
import { changeCounter, writeTransaction } from "../../src/db/database.ts";
import { createContext } from "../../src/main.ts";
import { build, ENGINE, tenant } from "../helpers.ts";

/**
 * The real repository's lookups, counted: how many reads the cache let through; `clock.at` is its
 * time, moved by the test.
 */
function countedKeys(ctx: Awaited<ReturnType<typeof createContext>>) {
  const repository = businessRepository(ctx.db);
  const clock = { at: 0 };
  // As context.ts wires it: SQLite's data_version, else the row the triggers on api_keys move.
  const changes = changeCounter(ctx.db) ?? (() => repository.credentialsVersion());
  const counted = {
    reads: 0,
    looks: 0,
    clock,
    keys: activeKeys({
      find: (apiKey) => {
        counted.reads++;
        return repository.findActiveKey(apiKey);
      },
      changes: () => {
        counted.looks++;
        return changes();
      },
      now: () => clock.at,
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

test("a revocation answers only once every process has looked at the database since its commit", async (t) => {
  const { ctx } = await build(t);
  const a = await tenant(ctx);
  const started = performance.now();
  await ctx.businesses.revokeKey(a.api_key);
  assert.ok(performance.now() - started >= REVOCATION_SETTLES_MS);
  assert.ok(REVOCATION_SETTLES_MS > CHANGES_LOOKED_AT_MS);
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

test("a secret verified once is recognised again; every other secret for the key is still refused", async (t) => {
  const { ctx } = await build(t);
  const a = await tenant(ctx);
  const b = await tenant(ctx);
  const secret = a.api_secret;
  const last = secret.at(-1) === "0" ? "1" : "0";
  const near = [
    `${secret.slice(0, -1)}${last}`,
    secret.slice(0, -1),
    `${secret}0`,
    secret.toUpperCase() === secret ? secret.toLowerCase() : secret.toUpperCase(),
    b.api_secret,
    ` ${secret.slice(1)}`,
  ];
  for (let round = 0; round < 3; round++) {
    // Verified, then presented again: the principal each time, with the key's own business.
    assert.deepEqual(await ctx.businesses.authenticate(a.api_key, secret), {
      businessId: a.business_id,
      apiKey: a.api_key,
    });
    for (const wrong of near) {
      assert.notEqual(wrong, secret);
      assert.equal(await ctx.businesses.authenticate(a.api_key, wrong), "wrong_secret", wrong);
    }
  }
  // Another key's own secret stays its own.
  assert.equal(await ctx.businesses.authenticate(b.api_key, secret), "wrong_secret");
  assert.deepEqual(await ctx.businesses.authenticate(b.api_key, b.api_secret), {
    businessId: b.business_id,
    apiKey: b.api_key,
  });
});

test("an active key is read once while nothing else commits; any other connection's commit makes it read again", async (t) => {
  const { ctx, config } = await build(t);
  const a = await tenant(ctx);
  const counted = countedKeys(ctx);
  for (let i = 0; i < 5; i++) assert.equal((await counted.keys.find(a.api_key))?.api_key, a.api_key);
  assert.equal(counted.reads, 1);
  // This connection's own commits leave the kept rows (they are not revocations: those forget).
  await writeTransaction(ctx.db, (tx) => sql`update businesses set name = name`.execute(tx));
  await counted.keys.find(a.api_key);
  assert.equal(counted.reads, 1);
  const other = await createContext(config);
  t.after(() => other.close());
  await tenant(other);
  // Within CHANGES_LOOKED_AT_MS of the last look, the kept row stands (a revocation elsewhere
  // answers only after REVOCATION_SETTLES_MS, by when the next look is due)…
  counted.clock.at += CHANGES_LOOKED_AT_MS;
  await counted.keys.find(a.api_key);
  assert.equal(counted.reads, 1);
  // …and past it the counter is looked at again: another connection committed (on PostgreSQL, a new
  // key: the counter moves with api_keys alone), the row is read again.
  counted.clock.at += 1;
  await counted.keys.find(a.api_key);
  assert.equal(counted.reads, 2);
  // Unknown keys are never kept.
  for (let i = 0; i < 3; i++) assert.equal(await counted.keys.find("ak_unknown"), undefined);
  assert.equal(counted.reads, 5);
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
  counted.clock.at += REVOCATION_SETTLES_MS;
  let during: unknown = "not looked up";
  await writeTransaction(ctx.db, async (tx) => {
    await sql`select 1`.execute(tx);
    during = counted.keys.find(a.api_key);
  });
  assert.equal(await during, undefined);
  if (ENGINE === "sqlite") {
    // Inside a transaction not of writeTransaction's (an older snapshot, maybe), it cannot tell.
    const b = await tenant(ctx);
    counted.clock.at += REVOCATION_SETTLES_MS;
    await counted.keys.find(b.api_key);
    await ctx.db.connection().execute(async (connection) => {
      await sql`begin`.execute(connection);
      assert.equal(changeCounter(ctx.db)?.(), undefined);
      await sql`commit`.execute(connection);
    });
    assert.equal(typeof changeCounter(ctx.db)?.(), "number");
  }
});

test("a key revoked by an operator's own SQL on another connection is refused once the counter is looked at again", async (t) => {
  const { ctx, config } = await build(t);
  const a = await tenant(ctx);
  const b = await tenant(ctx);
  const counted = countedKeys(ctx);
  assert.equal((await counted.keys.find(a.api_key))?.api_key, a.api_key);
  assert.equal((await counted.keys.find(b.api_key))?.api_key, b.api_key);
  const other = await createContext(config);
  t.after(() => other.close());
  // Neither the service nor its CLI: a plain statement, which no cache of this process hears of.
  await sql`update api_keys set revoked_at = ${new Date().toISOString()} where api_key = ${a.api_key}`.execute(
    other.db,
  );
  counted.clock.at += CHANGES_LOOKED_AT_MS + 1;
  assert.equal(await counted.keys.find(a.api_key), undefined);
  // The other key is read again too (every kept row went), and is still active.
  const reads = counted.reads;
  assert.equal((await counted.keys.find(b.api_key))?.api_key, b.api_key);
  assert.equal(counted.reads, reads + 1);
});

test("every change to api_keys moves the credential counter in its own transaction, whoever makes it", async (t) => {
  const { ctx } = await build(t);
  const repository = businessRepository(ctx.db);
  const start = await repository.credentialsVersion();
  assert.equal(typeof start, "number");
  const a = await tenant(ctx);
  const created = (await repository.credentialsVersion()) as number;
  assert.ok(created > (start as number), "a new key moves it");
  // A statement that changes several rows moves it (a trigger per statement on PostgreSQL, per row
  // on SQLite), forwards.
  await tenant(ctx);
  const before = (await repository.credentialsVersion()) as number;
  await sql`update api_keys set created_at = created_at`.execute(ctx.db);
  const updated = (await repository.credentialsVersion()) as number;
  assert.ok(updated > before, "an update of every key moves it");
  // Rolled back, the change and its move go together.
  await assert.rejects(
    writeTransaction(ctx.db, async (tx) => {
      await sql`delete from api_keys where api_key = ${a.api_key}`.execute(tx);
      throw new Error("rolled back");
    }),
    /rolled back/,
  );
  assert.equal(await repository.credentialsVersion(), updated);
  await sql`delete from api_keys where api_key = ${a.api_key}`.execute(ctx.db);
  assert.ok(((await repository.credentialsVersion()) as number) > updated, "a delete moves it");
});

test("the requests that find the last look too old share the next one", async (t) => {
  const { ctx } = await build(t);
  const a = await tenant(ctx);
  const counted = countedKeys(ctx);
  await counted.keys.find(a.api_key);
  assert.equal(counted.looks, 1);
  counted.clock.at += CHANGES_LOOKED_AT_MS + 1;
  const found = await Promise.all(Array.from({ length: 20 }, () => counted.keys.find(a.api_key)));
  for (const row of found) assert.equal(row?.api_key, a.api_key);
  // One look for the twenty, and nothing moved since: the kept row served them all.
  assert.equal(counted.looks, 2);
  assert.equal(counted.reads, 1);
});

test("a counter that cannot be read keeps nothing, and is looked at again only every 50 ms", {
  // SQLite's counter is read in place, from the file this process has open.
  skip: ENGINE !== "postgres" && "PostgreSQL's counter is a round trip that can fail",
}, async (t) => {
  const { ctx, config } = await build(t);
  const a = await tenant(ctx);
  // The counter of a context whose database connections are closed: every look fails.
  const closed = await createContext(config);
  await closed.close();
  const repository = businessRepository(ctx.db);
  const clock = { at: 0 };
  let [reads, looks] = [0, 0];
  const keys = activeKeys({
    find: (apiKey) => {
      reads++;
      return repository.findActiveKey(apiKey);
    },
    changes: () => {
      looks++;
      return businessRepository(closed.db).credentialsVersion();
    },
    now: () => clock.at,
  });
  for (let i = 0; i < 5; i++) assert.equal((await keys.find(a.api_key))?.api_key, a.api_key);
  assert.equal(reads, 5, "nothing is kept");
  // One failed look, then reads alone until CHANGES_LOOKED_AT_MS has passed.
  assert.equal(looks, 1);
  clock.at += CHANGES_LOOKED_AT_MS + 1;
  await keys.find(a.api_key);
  assert.equal(looks, 2);
});

/**
 * For a change made outside the service: a business with a key, the credential counter as it is,
 * and the schema the service's tables are in, for another connection to name them by.
 */
async function outsideWriter(t: TestContext) {
  const { ctx, databaseUrl } = await build(t);
  const a = await tenant(ctx);
  const repository = businessRepository(ctx.db);
  const before = (await repository.credentialsVersion()) as number;
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(ctx.db)).rows[0]
    ?.s as string;
  return { databaseUrl, a, repository, before, schema };
}

test("a key changed by a writer with another search path moves the counter beside the table it changed", {
  skip: ENGINE !== "postgres" && "search paths are PostgreSQL's",
}, async (t) => {
  const { databaseUrl, a, repository, before, schema } = await outsideWriter(t);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // An operator's session on the default path, naming the service's table by its schema.
    await client.query("set search_path to public");
    await client.query(
      `update ${client.escapeIdentifier(schema)}.api_keys set revoked_at = $1 where api_key = $2`,
      [new Date().toISOString(), a.api_key],
    );
  } finally {
    await client.end();
  }
  assert.ok(((await repository.credentialsVersion()) as number) > before);
});

test("a key revoked by another database role, with no right on the counter, moves the counter all the same", {
  skip: ENGINE !== "postgres" && "database roles are PostgreSQL's",
}, async (t) => {
  const { databaseUrl, a, repository, before, schema } = await outsideWriter(t);
  // An operator's own role, allowed to revoke keys and nothing else: the trigger runs as its owner.
  const role = `einvoice_operator_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    const [r, s] = [admin.escapeIdentifier(role), admin.escapeIdentifier(schema)];
    await admin.query(`create role ${r} login`);
    await admin.query(`grant usage on schema ${s} to ${r}`);
    await admin.query(`grant select, update on ${s}.api_keys to ${r}`);
    const url = new URL(databaseUrl as string);
    url.username = role;
    url.password = "";
    const operator = new pg.Client({ connectionString: url.toString() });
    await operator.connect();
    try {
      await assert.rejects(
        operator.query(`update ${s}.credential_changes set version = version + 1`),
        /permission denied/,
        "the role cannot move the counter itself",
      );
      await operator.query(`update ${s}.api_keys set revoked_at = $1 where api_key = $2`, [
        new Date().toISOString(),
        a.api_key,
      ]);
    } finally {
      await operator.end();
    }
    assert.ok(((await repository.credentialsVersion()) as number) > before);
  } finally {
    await admin.query(`drop owned by ${admin.escapeIdentifier(role)}`).catch(() => {});
    await admin.query(`drop role if exists ${admin.escapeIdentifier(role)}`);
    await admin.end();
  }
});
