import assert from "node:assert/strict";
import { test } from "node:test";
import SQLite from "better-sqlite3";
import { businessRepository } from "../../src/businesses/business-repository.ts";
import { businessProfiles } from "../../src/businesses/profiles.ts";
import { changeCounter } from "../../src/db/database.ts";
import { catalogRepository } from "../../src/reference/catalog-repository.ts";
import { productCodes } from "../../src/reference/product-codes.ts";
import { referenceService } from "../../src/reference/reference-service.ts";
import { build, ENGINE, HS_CSV, tenant } from "../helpers.ts";

test(`product codes on ${ENGINE}: kept for a while, refreshed after it, at once after an import here`, async (t) => {
  const { ctx } = await build(t);
  let now = 1_000_000;
  t.mock.method(Date, "now", () => now);
  const codes = productCodes(catalogRepository(ctx.db), 5_000);
  assert.equal(await codes.current(), undefined, "no catalog imported: nothing to check against");

  // Another process imports a catalog: seen once the kept answer is older than its age limit.
  await ctx.db
    .insertInto("products")
    .values({
      hscode: "2523.29",
      description: "Portland cement",
      section: "V",
      chapter: "25",
      product_category: "Mineral products",
    })
    .execute();
  now += 4_000;
  assert.equal(await codes.current(), undefined, "within the age limit the kept answer stands");
  now += 2_000;
  assert.deepEqual([...((await codes.current()) ?? [])], ["2523.29"]);

  // Reloaded unchanged, the set is the same object (a thread that has it is not sent it again);
  // changed, it is a new one.
  const first = await codes.current();
  now += 6_000;
  assert.equal(await codes.current(), first, "the same codes: the same set");
  await ctx.db.updateTable("products").set({ hscode: "2523.21" }).execute();
  now += 6_000;
  const changed = await codes.current();
  assert.notEqual(changed, first, "another code: a new set");
  assert.deepEqual([...(changed ?? [])], ["2523.21"]);

  // An import in this process is seen at once.
  const reference = referenceService({
    db: ctx.db,
    catalog: catalogRepository(ctx.db),
    productCodes: codes,
  });
  await reference.importProducts(HS_CSV);
  assert.equal((await codes.current())?.size, 5613);
});

test(`product codes on ${ENGINE}: past their age, read again only when another connection has committed (SQLite's counter), every time on PostgreSQL`, async (t) => {
  const { ctx, dbFile } = await build(t);
  let now = 1_000_000;
  t.mock.method(Date, "now", () => now);
  const repository = catalogRepository(ctx.db);
  let reads = 0;
  const counted = {
    productCodes: () => {
      reads += 1;
      return repository.productCodes();
    },
  };
  const changes = changeCounter(ctx.db);
  assert.equal(changes === undefined, ENGINE === "postgres", "SQLite has a counter, PostgreSQL none");
  const codes = productCodes(counted, 5_000, changes);
  const cement = { hscode: "2523.29", description: "Portland cement", section: "V", chapter: "25" };
  await ctx.db
    .insertInto("products")
    .values({ ...cement, product_category: "Mineral products" })
    .execute();
  assert.deepEqual([...((await codes.current()) ?? [])], ["2523.29"]);
  assert.equal(reads, 1);
  // Past the age limit, nothing committed elsewhere: the kept codes stand without a read on SQLite.
  now += 6_000;
  assert.deepEqual([...((await codes.current()) ?? [])], ["2523.29"]);
  now += 6_000;
  await codes.current();
  assert.equal(reads, ENGINE === "postgres" ? 3 : 1);
  // Another process (its own connection) adds a code: read again once past the age limit.
  if (dbFile) {
    const other = new SQLite(dbFile);
    other
      .prepare(
        "insert into products (hscode, description, section, chapter, product_category) values (?, ?, ?, ?, ?)",
      )
      .run("2523.21", "White cement", "V", "25", "Mineral products");
    other.close();
  } else {
    await ctx.db
      .insertInto("products")
      .values({ ...cement, hscode: "2523.21", product_category: "Mineral products" })
      .execute();
  }
  assert.equal((await codes.current())?.size, 1, "within the age limit the kept answer stands");
  now += 6_000;
  assert.deepEqual([...((await codes.current()) ?? [])].sort(), ["2523.21", "2523.29"]);
  assert.equal(reads, ENGINE === "postgres" ? 4 : 2);
});

test(`business profiles on ${ENGINE}: an unknown id is not kept, so a business added later is found`, async (t) => {
  const { ctx } = await build(t);
  const profiles = businessProfiles(businessRepository(ctx.db));
  const id = "6b8d3c1e-2f4a-4b5c-8d7e-9f0a1b2c3d4e";
  assert.equal(await profiles.find(id), undefined);
  const added = await tenant(ctx, { id });
  const profile = await profiles.find(id);
  assert.equal(profile?.service_id, added.service_id);
  assert.equal("chain_head" in (profile ?? {}), false, "the chain is never read from a kept profile");
});
