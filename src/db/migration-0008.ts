import { type Kysely, sql } from "kysely";

// 0008 is the one migration with a data backfill: its rule and its data, frozen with it.

/** Minor-unit digits of the currencies without 2, as the reference list had them when 0008 was written. */
const DIGITS_0008: Record<string, number> = {
  AFN: 0,
  ALL: 0,
  AMD: 0,
  BHD: 3,
  BIF: 0,
  CLP: 0,
  COP: 0,
  CRC: 0,
  DJF: 0,
  GNF: 0,
  HUF: 0,
  IDR: 0,
  IQD: 0,
  IRR: 0,
  ISK: 0,
  JOD: 3,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  KWD: 3,
  LBP: 0,
  LYD: 3,
  MGA: 0,
  MMK: 0,
  MUR: 0,
  OMR: 3,
  PKR: 0,
  PYG: 0,
  RSD: 0,
  RWF: 0,
  SOS: 0,
  SYP: 0,
  TND: 3,
  TZS: 0,
  UGX: 0,
  UZS: 0,
  VND: 0,
  XAF: 0,
  XOF: 0,
  YER: 0,
  ZMK: 0,
  ZWL: 0,
};

/** Rows backfilled per statement by 0008. */
const BACKFILL_PAGE = 500;

/**
 * 0008: the balance of each invoice in minor units, so PARTIAL payments add up exactly. Existing
 * invoices take theirs from the stored document (the payable amount is never sealed); PAID ones have
 * paid it all. The rule is written out here, not borrowed from the service, so that what this
 * migration does never changes after it has run somewhere.
 */
export async function partialPayments(db: Kysely<unknown>) {
  for (const column of ["payable_minor", "paid_minor"]) {
    await db.schema
      .alterTable("invoices")
      .addColumn(column, "bigint", (c) => c.notNull().defaultTo(0))
      .execute();
  }
  await db.schema
    .alterTable("invoices")
    .addColumn("currency_digits", "integer", (c) => c.notNull().defaultTo(2))
    .execute();
  let after = "";
  for (;;) {
    const { rows } = await sql<{ irn: string; document: string; payment_status: string }>`
      select irn, document, payment_status from invoices where irn > ${after}
      order by irn limit ${BACKFILL_PAGE}`.execute(db);
    if (rows.length === 0) break;
    const values = rows.map((row) => {
      const document = JSON.parse(row.document) as {
        document_currency_code?: unknown;
        legal_monetary_total?: { payable_amount?: unknown };
      };
      const code = document.document_currency_code;
      const digits = (typeof code === "string" ? DIGITS_0008[code] : undefined) ?? 2;
      const amount = document.legal_monetary_total?.payable_amount;
      const payable = typeof amount === "number" ? Math.round(amount * 10 ** digits) : 0;
      const paid = row.payment_status === "PAID" ? payable : 0;
      return sql`(cast(${row.irn} as text), cast(${payable} as bigint), cast(${paid} as bigint), cast(${digits} as integer))`;
    });
    // One statement a page (UPDATE … FROM: SQLite 3.33 and PostgreSQL alike; VALUES columns are
    // column1… on both), not one a row: on PostgreSQL each statement is a round trip.
    await sql`update invoices set payable_minor = v.column2, paid_minor = v.column3, currency_digits = v.column4
      from (values ${sql.join(values)}) as v where invoices.irn = v.column1`.execute(db);
    after = (rows.at(-1) as { irn: string }).irn;
  }
  // lookup/{IRN} shows the balance too: its index (0005) is rebuilt to cover the three columns.
  await db.schema.dropIndex("invoices_lookup").execute();
  await db.schema
    .createIndex("invoices_lookup")
    .on("invoices")
    .columns([
      "irn",
      "business_id",
      "status",
      "payment_status",
      "payment_reference",
      "signed_at",
      "transmitted_at",
      "authority_reference",
      "payable_minor",
      "paid_minor",
      "currency_digits",
    ])
    .execute();
}
