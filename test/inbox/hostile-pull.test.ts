import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { MAX_LINES } from "../../src/documents/schema.ts";
import type { Context } from "../../src/runtime/context.ts";
import { PULL_MAX_ENTRIES } from "../../src/transmission/authority/pull-answer.ts";
import { build, eventually, holdWriteLock, type Json, type Tenant, tenant } from "../helpers.ts";
import { pullServer } from "../transmission/mbs.ts";

/*
 * A collection from an MBS that lists, beside good invoices for three businesses, documents built to
 * hurt: each is set aside or kept with its reason, alone; the good ones are stored, each once, and
 * the day's cursor moves on. The MBS here is a plain HTTP server answering what the test gives it,
 * as a hostile or broken authority would.
 */

const today = () => new Date().toISOString().slice(0, 10);

/** The test's MBS, answering each day's pull with the text given. */
const hostileMbs = (t: TestContext, listFor: (day: string) => string) =>
  pullServer(t, (day) => ({ body: listFor(day) }));

async function service(t: TestContext, url: string, env: Record<string, string> = {}) {
  const built = await build(t, {
    EINVOICE_AUTHORITY: "mbs",
    EINVOICE_MBS_URL: url,
    EINVOICE_MBS_API_KEY: "mbs-key-0f3a9c",
    EINVOICE_MBS_API_SECRET: "mbs-secret-7d21e4",
    EINVOICE_INBOX_LOOKBACK_DAYS: "0",
    ...env,
  });
  const buyers: Tenant[] = [];
  for (const tin of ["31845560-0001", "31845560-0002", "31845560-0003"])
    buyers.push(await tenant(built.ctx, { tin }));
  return { ...built, buyers };
}

const invoice = (n: number, buyerTin: string, extra: Json = {}): Json => ({
  irn: `G${n}-A1B2C3D4-${today().replaceAll("-", "")}`,
  issue_date: today(),
  invoice_type_code: "396",
  document_currency_code: "NGN",
  accounting_supplier_party: { party_name: "Supplier Ltd", tin: "20198222-0002" },
  accounting_customer_party: { party_name: "Buyer", tin: buyerTin },
  legal_monetary_total: { payable_amount: 1000 },
  invoice_line: [{ invoiced_quantity: 1, line_extension_amount: 1000, item: { name: "x" } }],
  ...extra,
});

async function rowsByIrn(ctx: Pick<Context, "db">) {
  const rows = await ctx.db
    .selectFrom("received_invoices")
    .select(["irn", "business_id", "checks"])
    .execute();
  const counts = new Map<string, number>();
  for (const { irn } of rows) counts.set(irn, (counts.get(irn) ?? 0) + 1);
  return { rows, counts };
}

test("one poisoned document among 500 good ones for three businesses: the 500 stored, each once, and the one reported", {
  timeout: 120_000,
}, async (t) => {
  const tins = ["31845560-0001", "31845560-0002", "31845560-0003"];
  const good = Array.from({ length: 500 }, (_, i) => JSON.stringify(invoice(i, tins[i % 3] ?? "")));
  // A note nested 6,000 deep: it stopped every collection (a stack overflow inside the batch).
  const poison = `{"irn":"P1-A1B2C3D4-20261124","accounting_customer_party":{"tin":"${tins[0]}"},"note":${"[".repeat(6000)}${"]".repeat(6000)}}`;
  const entries = [...good.slice(0, 250), poison, ...good.slice(250)];
  const mbs = await hostileMbs(t, (day) =>
    day === today() ? `{"code":200,"data":[${entries.join(",")}]}` : `{"code":200,"data":[]}`,
  );
  const { ctx, buyers } = await service(t, mbs.url);

  const first = await ctx.collector.collect("test", { force: true });
  assert.ok(first.pulled);
  assert.equal(first.error, null);
  assert.equal(first.listed, 501);
  assert.equal(first.stored, 500, JSON.stringify(first).slice(0, 1500));
  assert.deepEqual(first.unaddressed, [
    { irn: null, reason: "entry 251 of the list nests deeper than 64 levels" },
  ]);
  assert.equal(first.cursor, today());
  const { counts } = await rowsByIrn(ctx);
  assert.equal(counts.size, 500);
  assert.ok([...counts.values()].every((n) => n === 1));
  for (const buyer of buyers) {
    const n = await ctx.db
      .selectFrom("received_invoices")
      .where("business_id", "=", buyer.business_id)
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    assert.ok(Number(n.n) >= 166, `${buyer.tin}: ${n.n}`);
  }

  // Collected again: the same list, nothing stored twice, the poison reported again, not fatal.
  const again = await ctx.collector.collect("test", { force: true });
  assert.ok(again.pulled);
  assert.equal(again.error, null);
  assert.equal(again.stored, 0);
  assert.equal(again.already, 500);
  assert.equal((await rowsByIrn(ctx)).counts.size, 500);
});

test("documents past a signed invoice's bounds are kept for their buyer with the reason, and findings keep an excerpt", {
  timeout: 60_000,
}, async (t) => {
  const tin = "31845560-0001";
  const manyLines = invoice(1, tin, {
    invoice_line: Array.from({ length: MAX_LINES + 1 }, () => ({ item: { name: "x" } })),
  });
  // A field of 900 kB: it was kept whole in the finding that named it, once per finding.
  const wideField = invoice(2, tin, { invoice_type_code: "9".repeat(900_000) });
  const wideMembers = `{"irn":"W3-A1B2C3D4-20261124","accounting_customer_party":{"tin":"${tin}"},${Array.from(
    { length: 5000 },
    (_, i) => `"u${i}":0`,
  ).join(",")}}`;
  const entries = [
    JSON.stringify(manyLines),
    JSON.stringify(wideField),
    wideMembers,
    JSON.stringify(invoice(4, tin)),
  ];
  const mbs = await hostileMbs(t, () => `{"code":200,"data":[${entries.join(",")}]}`);
  const { ctx } = await service(t, mbs.url);

  const started = Date.now();
  const collection = await ctx.collector.collect("test", { force: true });
  assert.ok(collection.pulled);
  assert.equal(collection.error, null);
  assert.equal(collection.stored, 3);
  assert.deepEqual(collection.unaddressed, [
    { irn: null, reason: "an object in entry 3 of the list has 5,002 members; at most 1,000 are accepted" },
  ]);
  assert.ok(Date.now() - started < 30_000);
  const { rows } = await rowsByIrn(ctx);
  const checksOf = (prefix: string) => {
    const row = rows.find((r) => r.irn.startsWith(prefix));
    assert.ok(row, prefix);
    return { size: row.checks.length, checks: JSON.parse(row.checks) as Array<Json> };
  };
  const lines = checksOf("G1-");
  assert.deepEqual(
    lines.checks.map((c) => c.rule),
    ["document_bounds"],
  );
  assert.match(String(lines.checks[0]?.message), /10,001 lines; a signed invoice has at most 10,000/);
  const wide = checksOf("G2-");
  assert.ok(wide.size < 10_000, `the findings of the wide field take ${wide.size} characters`);
  const type = wide.checks.find((c) => c.path === "invoice_type_code" && c.actual !== undefined);
  assert.ok(type, JSON.stringify(wide.checks).slice(0, 500));
  assert.match(String(type.actual), /^9{200}… \(900,000 characters\)$/);
});

test("a day whose answer breaks a bound is retried by the outbox's policy, fails for good alone, and is read again only when queued again", {
  timeout: 120_000,
}, async (t) => {
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  const tin = "31845560-0001";
  const good = [1, 2, 3].map((n) => JSON.stringify(invoice(n, tin)));
  const mbs = await hostileMbs(t, (day) =>
    day === yesterday
      ? `{"code":200,"data":[${"0,".repeat(PULL_MAX_ENTRIES)}0]}`
      : `{"code":200,"data":[${good.join(",")}]}`,
  );
  const { ctx, startWorker } = await service(t, mbs.url, {
    EINVOICE_INBOX_LOOKBACK_DAYS: "1",
    EINVOICE_MAX_ATTEMPTS: "2",
    EINVOICE_RETRY_BASE_MS: "20",
    EINVOICE_RETRY_MAX_MS: "50",
  });
  const pullsOf = (day: string) => mbs.pulls.filter((d) => d === day).length;
  const pullJobs = () =>
    ctx.db
      .selectFrom("outbox_jobs")
      .select(["state", "attempts", "payload", "last_error"])
      .where("kind", "=", "pull")
      .execute();

  const first = await ctx.collector.collect("test", { force: true });
  assert.ok(first.pulled);
  assert.equal(first.stored, 3, JSON.stringify(first));
  assert.match(
    first.error ?? "",
    new RegExp(`^${yesterday}: MBS pull answered 200 with more than ${PULL_MAX_ENTRIES} entries in data`),
  );
  assert.equal(first.cursor, today());

  // The workers spend the day's budget; the other day is done.
  const worker = startWorker();
  await eventually(
    async () => (await pullJobs()).some((job) => job.state === "failed"),
    30_000,
    "yesterday's pull failed for good",
  );
  const jobs = await pullJobs();
  const failed = jobs.find((job) => job.state === "failed");
  assert.equal(failed?.payload, JSON.stringify({ source: "mbs", day: yesterday }));
  assert.equal(failed?.attempts, 2);
  assert.match(failed?.last_error ?? "", /more than 50000 entries/);
  assert.equal(pullsOf(yesterday), 2, "read once per attempt of the budget");
  assert.ok(jobs.every((job) => job.state !== "pending"));
  const state = await ctx.collector.state();
  assert.match(state?.last_error ?? "", new RegExp(yesterday));

  // The next collection, run here alone, queues today again, not the day that failed for good.
  await worker.stop();
  const again = await ctx.collector.collect("test", { force: true });
  assert.ok(again.pulled);
  assert.equal(again.error, null);
  assert.equal(again.already, 3);
  assert.equal(pullsOf(yesterday), 2);

  // Queued again by the operator: read again.
  assert.equal(await ctx.transmission.requeueFailed("pull"), 1);
  await ctx.collector.collect("test", { force: true });
  assert.ok(pullsOf(yesterday) >= 3, `read ${pullsOf(yesterday)} times`);
});

test("a day longer to store than its lease (its database busy with another writer) stops at three quarters of it and goes on past what is stored at the next claim: every invoice stored once", {
  timeout: 180_000,
}, async (t) => {
  const tin = "31845560-0001";
  const many = Array.from({ length: 2_000 }, (_, i) => JSON.stringify(invoice(10_000 + i, tin)));
  // How long storing takes depends on the machine and its load: so the day is made longer than its
  // lease by another writer holding the database's write lock from the moment the day's list is
  // asked for until a little past three quarters of the lease. The day's first slice waits for it;
  // the day stops after that slice, whatever the machine. A lease of 5 s leaves about a second on
  // either side of the release, 3.95 s after the call: to SQLite's 5 s busy timeout (the slice's wait
  // would fail past it), and to the lease's end (the slice and the settle must come before it).
  const LEASE_MS = 5_000;
  let holdWrites: (() => Promise<() => Promise<void>>) | undefined;
  let held: Promise<void> | undefined;
  const mbs = await pullServer(t, async (day) => {
    if (day === today() && holdWrites && !held) {
      const release = await holdWrites();
      held = new Promise((resolve) => setTimeout(resolve, LEASE_MS * 0.75 + 200)).then(release);
    }
    return { body: day === today() ? `{"code":200,"data":[${many.join(",")}]}` : `{"code":200,"data":[]}` };
  });
  const { ctx, startWorker, dbFile, databaseUrl } = await service(t, mbs.url, {
    EINVOICE_LEASE_MS: String(LEASE_MS),
    EINVOICE_DELIVERY_TIMEOUT_MS: "3600",
    EINVOICE_MBS_CALL_TIMEOUT_MS: "1800",
    EINVOICE_RETRY_BASE_MS: "20",
    EINVOICE_RETRY_MAX_MS: "200",
    EINVOICE_MAX_ATTEMPTS: "20",
  });
  holdWrites = () => holdWriteLock(dbFile, databaseUrl, "received_invoices");
  t.after(() => held);
  await ctx.collector.pullNow();
  await ctx.collector.schedule();
  startWorker();
  let stopped = false;
  // The stop stands in the collection's state only until the next attempt, due within tens of
  // milliseconds (EINVOICE_RETRY_BASE_MS): the state is looked at every few of them to see it.
  const deadline = Date.now() + 150_000;
  while ((await rowsByIrn(ctx)).counts.size < 2_000) {
    assert.ok(Date.now() < deadline, "the 2,000 stored within 150 s");
    for (let i = 0; i < 10; i++) {
      const state = await ctx.collector.state();
      if (/before the lease's end/.test(state?.last_error ?? "")) stopped = true;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
  assert.ok(held, "the list was asked for, and the database held meanwhile");
  assert.ok(stopped, "the day stopped at its lease at least once");
  assert.ok(
    mbs.pulls.filter((day) => day === today()).length >= 2,
    "the day's list was asked for again at the next claim",
  );
  const { counts } = await rowsByIrn(ctx);
  assert.equal(counts.size, 2_000);
  assert.ok([...counts.values()].every((n) => n === 1));
  // Stopping at the lease after storing some is not a failure: the day never failed out.
  const jobs = await ctx.db
    .selectFrom("outbox_jobs")
    .select(["state", "attempts"])
    .where("kind", "=", "pull")
    .execute();
  assert.ok(
    jobs.every((job) => job.state !== "failed"),
    JSON.stringify(jobs),
  );
});
