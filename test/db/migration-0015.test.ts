import assert from "node:assert/strict";
import { test } from "node:test";
import { type CompiledQuery, sql } from "kysely";
import { loadConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/database.ts";
import { migrateToLatest, migrator } from "../../src/db/migrations.ts";
import type { InvoiceTable } from "../../src/db/schema.ts";
import { invoiceRepository } from "../../src/invoices/invoice-repository.ts";
import { outboxRepository } from "../../src/outbox/outbox-repository.ts";
import { reportRepository } from "../../src/reports/report-repository.ts";
import { build, ENGINE, fixture, freshDatabase, type Json, tempDir } from "../helpers.ts";

test(`0015 on a ${ENGINE} database with reports and payments: reports numbered in order, payments found by index`, async (t) => {
  const dir = tempDir(t);
  const database = await freshDatabase(dir);
  t.after(() => database.drop());
  const config = loadConfig({ EINVOICE_DATABASE_URL: database.url, EINVOICE_DATA_DIR: dir });
  const db = openDatabase(config.database, config);
  t.after(() => db.destroy());
  const { error } = await (await migrator(db)).migrateTo("0013_authority_holds");
  assert.equal(error, undefined);

  const who = { business_id: "6f0c1d5e-2b4a-4c39-9a57-0d3c2e1f4b11", service_id: "AB12CD34" };
  await db
    .insertInto("businesses")
    .values({
      id: who.business_id,
      name: "Before 0015",
      tin: "20198222-0002",
      service_id: who.service_id,
      certificate: "c",
      created_at: "2026-11-01T00:00:00.000Z",
    })
    .execute();
  const invoice = (irn: string, digits: number, status: InvoiceTable["payment_status"]): InvoiceTable => ({
    irn,
    business_id: who.business_id,
    status: "SIGNED",
    payment_status: status,
    payment_reference: null,
    invoice_type_code: "381",
    issue_date: "2026-11-16",
    supplier_tin: null,
    customer_tin: null,
    document: JSON.stringify({ ...fixture("invoice-minimal", who), irn }),
    sealed: null,
    signed_at: "2026-11-16T10:00:00.000Z",
    transmitted_at: null,
    authority_reference: null,
    qr_code: "q",
    updated_at: "2026-11-16T10:00:00.000Z",
    chain_seq: null,
    previous_hash: null,
    hash: null,
    signature: null,
    kid: null,
    payable_minor: 1_397_500,
    paid_minor: 0,
    currency_digits: digits,
  });
  await db
    .insertInto("invoices")
    .values([invoice("NGN-1", 2, "PAID"), invoice("KWD-1", 3, "PARTIAL"), invoice("NONE-1", 2, "REJECTED")])
    .execute();
  const entry = (irn: string, type: string, detail: Json) => ({
    irn,
    at: "2026-11-20T10:00:00.000Z",
    type,
    actor: "cli",
    detail: JSON.stringify(detail),
  });
  // In the order they were written: reports and payments of several invoices interleaved.
  await db
    .insertInto("invoice_events")
    .values([
      entry("NGN-1", "payment_updated", { from: "PENDING", to: "PARTIAL", reference: "TRF-1", amount: 25.5 }),
      entry("KWD-1", "payment_updated", { from: "PENDING", to: "PARTIAL", reference: null, amount: 1.234 }),
      entry("NGN-1", "fiscalization_reported", { total_amount: "1.00" }),
      entry("NGN-1", "payment_updated", { from: "PARTIAL", to: "PARTIAL", reference: "", amount: 0.1 + 0.2 }),
      entry("NONE-1", "payment_updated", { from: "PENDING", to: "REJECTED", reference: "R" }),
      entry("NGN-1", "payment_updated", { from: "PARTIAL", to: "PAID", reference: "TRF-2", amount: 13949.2 }),
    ])
    .execute();
  const report = (irn: string, n: number) => ({
    irn,
    business_id: who.business_id,
    report: JSON.stringify({ n }),
    created_at: `2026-11-2${n}T10:00:00.000Z`,
  });
  for (const row of [report("NGN-1", 1), report("KWD-1", 1), report("NGN-1", 2), report("NGN-1", 3)]) {
    // Without a number: the rows as a version before 0015 wrote them.
    await sql`insert into fiscalization_reports (irn, business_id, report, created_at)
      values (${row.irn}, ${row.business_id}, ${row.report}, ${row.created_at})`.execute(db);
  }

  await migrateToLatest(db);
  const numbered = await db
    .selectFrom("fiscalization_reports")
    .select(["irn", "report", "number"])
    .orderBy("id")
    .execute();
  assert.deepEqual(
    numbered.map((r) => [r.irn, JSON.parse(r.report).n, Number(r.number)]),
    [
      ["NGN-1", 1, 1],
      ["KWD-1", 1, 1],
      ["NGN-1", 2, 2],
      ["NGN-1", 3, 3],
    ],
  );
  const payments = await db
    .selectFrom("invoice_payments")
    .select(["irn", "seq", "reference", "amount_minor"])
    .orderBy("irn")
    .orderBy("seq")
    .execute();
  assert.deepEqual(
    payments.map((p) => [p.irn, Number(p.seq), p.reference, Number(p.amount_minor)]),
    [
      ["KWD-1", 1, null, 1234],
      ["NGN-1", 1, "TRF-1", 2550],
      ["NGN-1", 2, "", 30],
      ["NGN-1", 3, "TRF-2", 1_394_920],
    ],
  );
  const invoices = invoiceRepository(db);
  assert.equal(await invoices.paymentRecorded("NGN-1", "TRF-1", 2550), true);
  assert.equal(await invoices.paymentRecorded("NGN-1", "TRF-1", 2551), false);
  assert.equal(await invoices.paymentCount("NGN-1"), 3);
  assert.equal(await invoices.paymentCount("NONE-1"), 0);
  assert.equal(await reportRepository(db).countFor("NGN-1"), 3);
  // The index refuses a number twice.
  await assert.rejects(
    db
      .insertInto("fiscalization_reports")
      .values({ ...report("NGN-1", 4), number: 3 })
      .execute(),
  );
});

test(`on ${ENGINE}, a payment update's retry lookup and count, a report's count and a business's queued forwards are read from indexes`, async (t) => {
  const { ctx } = await build(t);
  // Every statement the repositories run, as compiled, to be explained.
  const seen: CompiledQuery[] = [];
  const executor = ctx.db.getExecutor();
  const run = executor.executeQuery.bind(executor);
  executor.executeQuery = ((query: CompiledQuery, ...rest: unknown[]) => {
    seen.push(query);
    return (run as (...args: unknown[]) => ReturnType<typeof run>)(query, ...rest);
  }) as typeof executor.executeQuery;
  const plan = async (work: () => Promise<unknown>) => {
    seen.length = 0;
    await work();
    const [query] = seen;
    assert.ok(query);
    seen.length = 0;
    return ctx.db.transaction().execute(async (tx) => {
      if (ENGINE === "postgres") await sql`set local enable_seqscan = off`.execute(tx);
      const explain = ENGINE === "sqlite" ? "explain query plan" : "explain";
      const { rows } = await tx.executeQuery<Record<string, unknown>>({
        ...query,
        sql: `${explain} ${query.sql}`,
      });
      return rows.map((row) => String(row.detail ?? row["QUERY PLAN"])).join(" | ");
    });
  };
  const invoices = invoiceRepository(ctx.db);
  const outbox = outboxRepository(ctx.db);
  const reports = reportRepository(ctx.db);
  const expectations: [string, () => Promise<unknown>, RegExp][] = [
    ["retry lookup", () => invoices.paymentRecorded("I", "R", 100), /invoice_payments_reference/],
    [
      "payment count",
      () => invoices.paymentCount("I"),
      /invoice_payments_pk|sqlite_autoindex_invoice_payments/,
    ],
    ["report count", () => reports.countFor("I"), /fiscalization_reports_number/],
    ["queued forwards", () => outbox.queuedForwards("B", 1000), /outbox_jobs_open_forward_business/],
  ];
  for (const [what, work, index] of expectations) {
    const found = await plan(work);
    assert.match(found, index, `${what}: ${found}`);
    assert.doesNotMatch(found, /SCAN (invoice_payments|fiscalization_reports|outbox_jobs)\b(?! USING)/, what);
  }
});
