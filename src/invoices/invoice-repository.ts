import { type CompiledQuery, sql } from "kysely";
import { compiledByCount, insertRows, type Read } from "../db/batch-statements.ts";
import { type Db, type Executor, engineOf } from "../db/database.ts";
import type { InvoicePaymentTable, InvoiceTable } from "../db/schema.ts";

/** One entry of an invoice's append-only history: what happened, when, and who did it. */
export type InvoiceEvent = { at: string; type: string; actor: string; detail: Record<string, unknown> };

/** SQLite and PostgreSQL report a primary-key clash differently; both mean "IRN already exists". */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "SQLITE_CONSTRAINT_UNIQUE" || code === "23505";
}

/** What lookup/{IRN} reads of an invoice: the columns of the index that answers it (0008). */
export const STATE_COLUMNS = [
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
] as const;

/**
 * Every column of an invoice's row, in the table's order, for its inserts (insertRows): the object
 * has the compiler hold the list complete.
 */
const INVOICE_COLUMNS = Object.keys({
  irn: 1,
  business_id: 1,
  status: 1,
  payment_status: 1,
  payment_reference: 1,
  invoice_type_code: 1,
  issue_date: 1,
  supplier_tin: 1,
  customer_tin: 1,
  document: 1,
  sealed: 1,
  signed_at: 1,
  transmitted_at: 1,
  authority_reference: 1,
  qr_code: 1,
  updated_at: 1,
  chain_seq: 1,
  previous_hash: 1,
  hash: 1,
  signature: 1,
  kid: 1,
  payable_minor: 1,
  paid_minor: 1,
  currency_digits: 1,
} satisfies Record<keyof InvoiceTable, 1>) as (keyof InvoiceTable)[];

/** The columns a history entry is written with (its id is the table's). */
const EVENT_COLUMNS = ["irn", "at", "type", "actor", "detail"] as const;

/** The columns of an invoice's state: what lookup/{IRN} reads. */
export type InvoiceState = Pick<InvoiceTable, (typeof STATE_COLUMNS)[number]>;

/** pg answers a bigint as text (its range exceeds a double's); the amounts are integers below 2^53. */
function counted<T extends { payable_minor: unknown; paid_minor: unknown }>(row: T): T;
function counted<T extends { payable_minor: unknown; paid_minor: unknown }>(
  row: T | undefined,
): T | undefined;
function counted<T extends { payable_minor: unknown; paid_minor: unknown }>(row: T | undefined) {
  return row && { ...row, payable_minor: Number(row.payable_minor), paid_minor: Number(row.paid_minor) };
}

/**
 * The state of an invoice, from the index that covers it. SQLite's planner prefers the primary key
 * (one row, then the row itself, which spills into an overflow page), so there the index is named.
 * Exported so a test can hold the plan.
 */
export function stateQuery(tx: Executor, irn: string, businessId: string): CompiledQuery<InvoiceState> {
  if (engineOf(tx) === "sqlite") {
    const columns = sql.join(STATE_COLUMNS.map((column) => sql.ref(column)));
    return sql<InvoiceState>`select ${columns} from invoices indexed by invoices_lookup
      where irn = ${irn} and business_id = ${businessId}`.compile(tx);
  }
  return tx
    .selectFrom("invoices")
    .select(STATE_COLUMNS)
    .where("irn", "=", irn)
    .where("business_id", "=", businessId)
    .compile();
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a repository: one short closure per statement
export function invoiceRepository(db: Db) {
  /** The statements that append to several histories at once, in the order given (one a chunk). */
  function eventInserts(entries: ReadonlyArray<{ irn: string; event: InvoiceEvent }>, tx: Executor) {
    const rows = entries.map(({ irn, event }) => ({
      irn,
      at: event.at,
      type: event.type,
      actor: event.actor,
      detail: JSON.stringify(event.detail),
    }));
    return insertRows(tx, "invoice_events", EVENT_COLUMNS, rows);
  }

  /** Appends to several histories at once, in the order given. */
  async function addEvents(entries: ReadonlyArray<{ irn: string; event: InvoiceEvent }>, tx: Executor = db) {
    for (const statement of eventInserts(entries, tx)) await tx.executeQuery(statement);
  }

  /** The statements that insert these invoices (one a chunk), to run with others (executeTogether). */
  const inserts = (rows: readonly InvoiceTable[], tx: Executor) =>
    insertRows(tx, "invoices", INVOICE_COLUMNS, rows);

  const existingRead = (irns: readonly string[], tx: Executor = db): Read<string[]> => ({
    query: compiledByCount(tx, "irns taken", irns, () =>
      tx.selectFrom("invoices").select("irn").where("irn", "in", irns),
    ),
    answer: (rows) => rows.map((row) => row.irn as string),
  });

  return {
    /** Run, they throw a unique violation when an IRN exists: the constraint has the last word. */
    inserts,
    eventInserts,

    /**
     * Which of these IRNs are registered already, for a few IRNs (a sign batch's: at least one, in
     * one statement). A read built and not run, to be run with others (readTogether).
     */
    existingRead,

    async find(irn: string, businessId: string, tx: Executor = db): Promise<InvoiceTable | undefined> {
      return counted(
        await tx
          .selectFrom("invoices")
          .selectAll()
          .where("irn", "=", irn)
          .where("business_id", "=", businessId)
          .executeTakeFirst(),
      );
    },

    /** The invoice's state, read from the index that covers it (migrations 0005, 0008). */
    async findState(irn: string, businessId: string, tx: Executor = db) {
      return counted((await tx.executeQuery(stateQuery(tx, irn, businessId))).rows[0]);
    },

    /** Any business's invoice: for the outbox, which acts for the service, not for a caller. */
    async findByIrn(irn: string, tx: Executor = db): Promise<InvoiceTable | undefined> {
      return counted(await tx.selectFrom("invoices").selectAll().where("irn", "=", irn).executeTakeFirst());
    },

    async exists(irn: string, tx: Executor = db): Promise<boolean> {
      return (
        (await tx.selectFrom("invoices").select("irn").where("irn", "=", irn).executeTakeFirst()) !==
        undefined
      );
    },

    /**
     * A business's IRNs that begin with `prefix` (an invoice number and the service id), at most
     * `limit`: a credit note's reference to an invoice by its number finds the invoice's IRN. The
     * prefix holds only letters, digits and hyphens (an IRN's), so it needs no escaping for LIKE.
     */
    async irnsStartingWith(businessId: string, prefix: string, limit: number, tx: Executor = db) {
      if (!/^[A-Za-z0-9-]+$/.test(prefix)) return [];
      const rows = await tx
        .selectFrom("invoices")
        .select("irn")
        .where("business_id", "=", businessId)
        .where("irn", "like", `${prefix}%`)
        .limit(limit)
        .execute();
      return rows.map((row) => row.irn);
    },

    /** Changes the transmission state; a TRANSMITTED invoice stays so, whatever arrives late. */
    async setStatus(
      irn: string,
      change: Partial<Pick<InvoiceTable, "status" | "transmitted_at" | "authority_reference">> & {
        updated_at: string;
      },
      tx: Executor = db,
    ): Promise<boolean> {
      const result = await tx
        .updateTable("invoices")
        .set(change)
        .where("irn", "=", irn)
        .where("status", "!=", "TRANSMITTED")
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /**
     * Compare-and-set of the transmission state: changes it only while it is one of `from`, so of
     * two concurrent changes one wins and the other sees what the first left.
     */
    async changeStatusIf(
      irn: string,
      from: readonly InvoiceTable["status"][],
      change: Pick<InvoiceTable, "status" | "updated_at">,
      tx: Executor = db,
    ): Promise<boolean> {
      const result = await tx
        .updateTable("invoices")
        .set(change)
        .where("irn", "=", irn)
        .where("status", "in", from)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /**
     * Compare-and-set of the payment state: changes it only while both the status and the amount
     * paid are what the caller decided from, so of two concurrent payments neither is lost and
     * together they never pay more than the balance: the later one decides again.
     */
    async changePaymentIf(
      irn: string,
      from: Pick<InvoiceTable, "payment_status" | "paid_minor">,
      change: Pick<InvoiceTable, "payment_status" | "payment_reference" | "paid_minor" | "updated_at">,
      tx: Executor = db,
    ): Promise<boolean> {
      const result = await tx
        .updateTable("invoices")
        .set(change)
        .where("irn", "=", irn)
        .where("payment_status", "=", from.payment_status)
        .where("paid_minor", "=", from.paid_minor)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /**
     * PostgreSQL: locks the invoice's row until the transaction ends, so the writes that number
     * something per invoice take turns (other writers of the row wait too; the references other
     * rows make to it do not). SQLite's write transactions take turns already (writeTransaction).
     */
    async lock(irn: string, tx: Executor): Promise<void> {
      if (engineOf(tx) === "sqlite") return;
      await tx.selectFrom("invoices").select("irn").where("irn", "=", irn).forNoKeyUpdate().execute();
    },

    /** Whether a payment with this reference and amount is recorded on the invoice (one index probe). */
    async paymentRecorded(irn: string, reference: string, amountMinor: number, tx: Executor = db) {
      const row = await tx
        .selectFrom("invoice_payments")
        .select("seq")
        .where("irn", "=", irn)
        .where("reference", "=", reference)
        .where("amount_minor", "=", amountMinor)
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** How many payments the invoice has recorded: the last one's number, read from the key. */
    async paymentCount(irn: string, tx: Executor = db): Promise<number> {
      const row = await tx
        .selectFrom("invoice_payments")
        .select("seq")
        .where("irn", "=", irn)
        .orderBy("seq", "desc")
        .limit(1)
        .executeTakeFirst();
      return row ? Number(row.seq) : 0;
    },

    /** Records a payment; its number must follow the last one (the key refuses a number twice). */
    async addPayment(row: InvoicePaymentTable, tx: Executor = db): Promise<void> {
      await tx.insertInto("invoice_payments").values(row).execute();
    },

    /**
     * Sealed values not under `kid`, by IRN after `after`, a page at a time (for data-key rotation).
     * The key id is compared exactly, as a prefix of the value: no pattern, no wildcard.
     */
    async sealedNotUnder(kid: string, after: string, limit: number, tx: Executor = db) {
      const prefix = `v1.${kid}.`;
      return tx
        .selectFrom("invoices")
        .select(["irn", "sealed"])
        .where("irn", ">", after)
        .where("sealed", "is not", null)
        .where(sql<string>`substr(sealed, 1, ${prefix.length})`, "<>", prefix)
        .orderBy("irn")
        .limit(limit)
        .execute();
    },

    /** Replaces a sealed value only while it is still `from`. */
    async setSealedIf(irn: string, from: string, sealed: string, tx: Executor = db): Promise<boolean> {
      const result = await tx
        .updateTable("invoices")
        .set({ sealed })
        .where("irn", "=", irn)
        .where("sealed", "=", from)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** One page of a business's hash chain, in order. */
    async chainPage(businessId: string, afterSeq: number, limit: number, tx: Executor = db) {
      const rows = await tx
        .selectFrom("invoices")
        .select([
          "irn",
          "business_id",
          "status",
          "payment_status",
          "chain_seq",
          "previous_hash",
          "hash",
          "signature",
          "kid",
          "signed_at",
          "document",
          "sealed",
          "payable_minor",
          "paid_minor",
          "currency_digits",
        ])
        .where("business_id", "=", businessId)
        .where("chain_seq", ">", afterSeq)
        .orderBy("chain_seq")
        .limit(limit)
        .execute();
      return rows.map((row) => counted(row));
    },

    /** The histories of several invoices at once, each in order. */
    async eventsFor(irns: readonly string[], tx: Executor = db) {
      if (irns.length === 0) return [];
      return tx
        .selectFrom("invoice_events")
        .select(["irn", "at", "type", "actor", "detail"])
        .where("irn", "in", irns)
        .orderBy("irn")
        .orderBy("id")
        .execute();
    },

    async addEvent(irn: string, event: InvoiceEvent, tx: Executor = db): Promise<void> {
      await addEvents([{ irn, event }], tx);
    },

    addEvents,

    /** An invoice's history in order; with `type`, only the entries of that type. */
    async events(irn: string, tx: Executor = db, type?: string): Promise<InvoiceEvent[]> {
      let query = tx
        .selectFrom("invoice_events")
        .select(["at", "type", "actor", "detail"])
        .where("irn", "=", irn);
      if (type !== undefined) query = query.where("type", "=", type);
      const rows = await query.orderBy("id").execute();
      return rows.map((r) => ({
        at: r.at,
        type: r.type,
        actor: r.actor ?? "unknown",
        detail: JSON.parse(r.detail) as Record<string, unknown>,
      }));
    },
  };
}

export type InvoiceRepository = ReturnType<typeof invoiceRepository>;
