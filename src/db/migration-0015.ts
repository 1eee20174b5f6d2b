import { type Kysely, sql } from "kysely";
import { engineOf } from "./database.ts";

// 0015: what bounds the messages forwarded to the authority, per invoice and per business. Its rules
// and SQL are frozen with it.

/**
 * Each VAT report numbered among its invoice's reports, unique per invoice: the authority knows a
 * report by that number (the vendor's transaction id), so two reports must never share one. Existing
 * reports take their place in the order they were stored.
 */
async function reportNumbers(db: Kysely<unknown>) {
  await db.schema.alterTable("fiscalization_reports").addColumn("number", "integer").execute();
  await sql`update fiscalization_reports set number = (
    select count(*) from fiscalization_reports earlier
    where earlier.irn = fiscalization_reports.irn and earlier.id <= fiscalization_reports.id)`.execute(db);
  await db.schema
    .createIndex("fiscalization_reports_number")
    .on("fiscalization_reports")
    .columns(["irn", "number"])
    .unique()
    .execute();
  // The new index begins with the IRN: it serves every lookup the old one did.
  await db.schema.dropIndex("fiscalization_reports_irn").execute();
}

/**
 * The payments of each invoice, one row per `payment_updated` entry with an amount, numbered in the
 * history's order: an update finds a retried PARTIAL (same reference and amount) and counts the
 * payments by index, where it used to read the whole payment history. The amount is in the
 * currency's minor units, as the service computes it: the amount of the entry (a number the service
 * wrote from whole minor units) times 10^digits, rounded.
 */
async function invoicePayments(db: Kysely<unknown>) {
  await db.schema
    .createTable("invoice_payments")
    .addColumn("irn", "text", (c) => c.notNull().references("invoices.irn"))
    .addColumn("seq", "integer", (c) => c.notNull())
    .addColumn("reference", "text")
    .addColumn("amount_minor", "bigint", (c) => c.notNull())
    .addColumn("at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("invoice_payments_pk", ["irn", "seq"])
    .execute();
  await db.schema
    .createIndex("invoice_payments_reference")
    .on("invoice_payments")
    .columns(["irn", "reference", "amount_minor"])
    .execute();
  await (engineOf(db) === "postgres"
    ? sql`insert into invoice_payments (irn, seq, reference, amount_minor, at)
        select e.irn, row_number() over (partition by e.irn order by e.id),
          case when json_typeof(e.detail::json -> 'reference') = 'string'
            then e.detail::json ->> 'reference' end,
          round((e.detail::json ->> 'amount')::numeric * power(10::numeric, i.currency_digits))::bigint,
          e.at
        from invoice_events e join invoices i on i.irn = e.irn
        where e.type = 'payment_updated' and json_typeof(e.detail::json -> 'amount') = 'number'`.execute(db)
    : sql`insert into invoice_payments (irn, seq, reference, amount_minor, at)
        select e.irn, row_number() over (partition by e.irn order by e.id),
          case when json_type(e.detail, '$.reference') = 'text'
            then json_extract(e.detail, '$.reference') end,
          cast(round(json_extract(e.detail, '$.amount') * (case i.currency_digits
            when 0 then 1 when 1 then 10 when 2 then 100 when 3 then 1000 else 10000 end)) as integer),
          e.at
        from invoice_events e join invoices i on i.irn = e.irn
        where e.type = 'payment_updated' and json_type(e.detail, '$.amount') in ('integer', 'real')`.execute(
        db,
      ));
}

/** 0015: report numbers, the payments table, and the index that counts a business's queued forwards. */
export async function reportNumbersAndBounds(db: Kysely<unknown>) {
  await reportNumbers(db);
  await invoicePayments(db);
  // A business's messages waiting for the authority are counted before another is queued.
  await db.schema
    .createIndex("outbox_jobs_open_forward_business")
    .on("outbox_jobs")
    .column("business_id")
    .where(sql.ref("state"), "=", "pending")
    .where(sql.ref("kind"), "=", "forward")
    .execute();
}
