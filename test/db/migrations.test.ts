import assert from "node:assert/strict";
import { test } from "node:test";
import type { Kysely } from "kysely";
import { loadConfig } from "../../src/config.ts";
import { newProductionSecrets } from "../../src/crypto/keyring.ts";
import { powerOfTwoChunks } from "../../src/db/batch-statements.ts";
import { openDatabase } from "../../src/db/database.ts";
import { MIGRATIONS, migrateToLatest, migrator, pendingMigrations } from "../../src/db/migrations.ts";
import type { BusinessTable, InvoiceTable } from "../../src/db/schema.ts";
import { historyProblems } from "../../src/invoices/audit/invoice-audit.ts";
import { invoiceRepository } from "../../src/invoices/invoice-repository.ts";
import { amountsOf } from "../../src/invoices/payments/payment-decision.ts";
import { createContext } from "../../src/main.ts";
import { ENGINE, fixture, freshDatabase, type Json, tempDir } from "../helpers.ts";

test(`production refuses a ${ENGINE} schema behind the code; migrate brings it up to date`, async (t) => {
  const dir = tempDir(t);
  const database = await freshDatabase(dir);
  const env = {
    EINVOICE_MODE: "production",
    EINVOICE_DATABASE_URL: database.url,
    EINVOICE_DATA_DIR: dir,
    EINVOICE_LOG_LEVEL: "silent",
    ...newProductionSecrets(),
  };
  const config = loadConfig(env);
  assert.deepEqual(MIGRATIONS.slice(0, 4), ["0001_core", "0002_signatures", "0003_outbox", "0004_audit"]);
  await assert.rejects(createContext(config), (err: Error) => {
    assert.equal(
      err.message,
      `the database schema is behind this version (pending: ${MIGRATIONS.join(", ")}); run \`npx einvoice migrate\``,
    );
    return true;
  });

  const db = openDatabase(config.database, config);
  try {
    assert.deepEqual(await migrateToLatest(db), [...MIGRATIONS]);
    assert.deepEqual(await pendingMigrations(db), []);
    assert.deepEqual(await migrateToLatest(db), [], "applying again changes nothing");
  } finally {
    await db.destroy();
  }
  const ctx = await createContext(config);
  t.after(async () => {
    await ctx.close();
    await database.drop();
  });
  assert.equal(await ctx.businesses.count(), 0, "production never seeds a demo business");
});

/** The invoice row as migrations 0001 to 0007 left it. */
type InvoiceRow0007 = Omit<InvoiceTable, "payable_minor" | "paid_minor" | "currency_digits">;
type Database0007 = { businesses: BusinessTable; invoices: InvoiceRow0007 };

test(`0008 on a ${ENGINE} database that already has invoices: each takes its balance from its document`, async (t) => {
  const dir = tempDir(t);
  const database = await freshDatabase(dir);
  t.after(() => database.drop());
  const config = loadConfig({ EINVOICE_DATABASE_URL: database.url, EINVOICE_DATA_DIR: dir });
  const db = openDatabase(config.database, config);
  t.after(() => db.destroy());
  const { error } = await (await migrator(db)).migrateTo("0007_invoices_by_signing_time");
  assert.equal(error, undefined);

  const old = db as unknown as Kysely<Database0007>;
  const who = { business_id: "6f0c1d5e-2b4a-4c39-9a57-0d3c2e1f4b11", service_id: "AB12CD34" };
  await old
    .insertInto("businesses")
    .values({
      id: who.business_id,
      name: "Before 0008",
      tin: "20198222-0002",
      service_id: who.service_id,
      certificate: "c",
      created_at: "2026-11-01T00:00:00.000Z",
    })
    .execute();
  const row = (
    irn: string,
    document: Json,
    payment_status: InvoiceTable["payment_status"],
  ): InvoiceRow0007 => ({
    irn,
    business_id: who.business_id,
    status: "SIGNED",
    payment_status,
    payment_reference: null,
    invoice_type_code: "381",
    issue_date: "2026-11-16",
    supplier_tin: null,
    customer_tin: null,
    document: JSON.stringify({ ...document, irn }),
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
  });
  const minimal = fixture("invoice-minimal", who);
  const inCurrency = (code: string) => ({
    ...minimal,
    document_currency_code: code,
    tax_currency_code: code,
  });
  const named = [
    row("FULL", fixture("invoice-full", who), "PENDING"),
    row("PAID-NGN", minimal, "PAID"),
    row("REJECTED-NGN", minimal, "REJECTED"),
    row("PENDING-JPY", inCurrency("JPY"), "PENDING"),
    row("PAID-KWD", inCurrency("KWD"), "PAID"),
  ];
  // More than a page of the backfill, each with its own payable amount.
  const bulk = Array.from({ length: 1234 }, (_, i) =>
    row(
      `BULK${String(i).padStart(5, "0")}`,
      { ...minimal, legal_monetary_total: { payable_amount: i + 0.37 } },
      i % 3 === 0 ? "PAID" : "PENDING",
    ),
  );
  for (const chunk of powerOfTwoChunks([...named, ...bulk]))
    await old.insertInto("invoices").values(chunk).execute();

  assert.deepEqual(await migrateToLatest(db), MIGRATIONS.slice(MIGRATIONS.indexOf("0008_partial_payments")));
  const balances = new Map(
    (
      await db
        .selectFrom("invoices")
        .select(["irn", "payable_minor", "paid_minor", "currency_digits"])
        .execute()
    ).map((r) => [r.irn, [Number(r.payable_minor), Number(r.paid_minor), r.currency_digits]]),
  );
  assert.deepEqual(
    named.map((r) => [r.irn, balances.get(r.irn)]),
    [
      ["FULL", [69337500, 0, 2]],
      ["PAID-NGN", [1397500, 1397500, 2]],
      ["REJECTED-NGN", [1397500, 0, 2]],
      ["PENDING-JPY", [13975, 0, 0]],
      ["PAID-KWD", [13975000, 13975000, 3]],
    ],
  );
  bulk.forEach((r, i) => {
    const payable = i * 100 + 37;
    assert.deepEqual(balances.get(r.irn), [payable, i % 3 === 0 ? payable : 0, 2], r.irn);
  });

  // The lookup reads the balance from its index, and a history from before 0008 replays to it.
  const state = await invoiceRepository(db).findState("PAID-KWD", who.business_id);
  assert.deepEqual(state && amountsOf(state), { amount_paid: 13975, amount_outstanding: 0 });
  const legacy = [
    {
      at: "2026-11-16T10:00:00.000Z",
      type: "signed",
      actor: "key:k",
      detail: '{"payment_status":"PENDING"}',
    },
    {
      at: "2026-11-17T10:00:00.000Z",
      type: "payment_updated",
      actor: "key:k",
      detail: '{"from":"PENDING","to":"PAID","reference":"R1"}',
    },
  ];
  const paid = await invoiceRepository(db).findByIrn("PAID-NGN");
  assert.ok(paid);
  assert.deepEqual(historyProblems(paid, legacy), []);
  assert.deepEqual(historyProblems({ ...paid, paid_minor: 0 }, legacy), [
    "amount_paid is 0.00 but the history's payments add up to 13975.00",
  ]);
});
