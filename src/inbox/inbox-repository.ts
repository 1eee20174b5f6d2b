import type { Selectable } from "kysely";
import { sql } from "kysely";
import type { Db, Executor } from "../db/database.ts";
import type {
  AcknowledgementState,
  InboxPullTable,
  ReceivedInvoiceTable,
  ReceivedStatus,
} from "../db/schema.ts";

export type InboxPull = Selectable<InboxPullTable>;
export type ReceivedRow = Omit<ReceivedInvoiceTable, "id"> & { id: number };
export type NewReceived = Omit<ReceivedInvoiceTable, "id">;
export type ReceivedEvent = { at: string; type: string; actor: string; detail: Record<string, unknown> };

/** The inbox's filters: by supplier, by the day received (both included), by status. */
export type InboxFilter = {
  supplierTin?: string;
  from?: string;
  to?: string;
  status?: ReceivedStatus;
};

/** What a list shows of a received invoice: everything but the document and its sealed part. */
export const SUMMARY_COLUMNS = [
  "id",
  "business_id",
  "irn",
  "source",
  "supplier_tin",
  "supplier_name",
  "customer_tin",
  "issue_date",
  "invoice_type_code",
  "currency",
  "payable_amount",
  "warnings",
  "status",
  "acknowledgement",
  "reason",
  "received_at",
  "decided_at",
  "updated_at",
] as const;
export type ReceivedSummary = Pick<ReceivedRow, (typeof SUMMARY_COLUMNS)[number]>;

/**
 * A day's first and last instant, as `received_at` is written (toISOString, milliseconds): compared
 * as texts of the same shape, any collation orders them as time does. Not the next day's start,
 * computed through a Date: after 9999-12-31 that is `+010000-01-01…`, which sorts before every year.
 */
const dayStart = (day: string) => `${day}T00:00:00.000Z`;
const dayEnd = (day: string) => `${day}T23:59:59.999Z`;

/** pg answers an identity as a number, SQLite too; a count as text on pg. */
const asNumber = (v: unknown) => Number(v);

/** SQL only: received invoices, their history, and the collection's lease and cursor per source. */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a repository: one short closure per statement
export function inboxRepository(db: Db) {
  return {
    /**
     * Stores those not stored yet for their buyer: a row already there (another process pulled the
     * same IRN, or the source listed it again) is left as it is. The ids of the rows stored now.
     */
    async store(
      rows: readonly NewReceived[],
      tx: Executor,
    ): Promise<Array<{ id: number; business_id: string; irn: string }>> {
      if (rows.length === 0) return [];
      const stored = await tx
        .insertInto("received_invoices")
        .values([...rows])
        .onConflict((oc) => oc.columns(["business_id", "irn"]).doNothing())
        .returning(["id", "business_id", "irn"])
        .execute();
      return stored.map((r) => ({ id: asNumber(r.id), business_id: r.business_id, irn: r.irn }));
    },

    async addEvents(events: ReadonlyArray<ReceivedEvent & { receivedId: number }>, tx: Executor) {
      if (events.length === 0) return;
      await tx
        .insertInto("received_invoice_events")
        .values(
          events.map((e) => ({
            received_id: e.receivedId,
            at: e.at,
            type: e.type,
            actor: e.actor,
            detail: JSON.stringify(e.detail),
          })),
        )
        .execute();
    },

    /** Which of these businesses' invoices are stored already (for a pull to skip the work of checking them). */
    async known(keys: ReadonlyArray<{ businessId: string; irn: string }>, tx: Executor = db) {
      if (keys.length === 0) return new Set<string>();
      const rows = await tx
        .selectFrom("received_invoices")
        .select(["business_id", "irn"])
        .where("irn", "in", [...new Set(keys.map((k) => k.irn))])
        .execute();
      return new Set(rows.map((r) => `${r.business_id} ${r.irn}`));
    },

    async find(businessId: string, irn: string, tx: Executor = db): Promise<ReceivedRow | undefined> {
      const row = await tx
        .selectFrom("received_invoices")
        .selectAll()
        .where("business_id", "=", businessId)
        .where("irn", "=", irn)
        .executeTakeFirst();
      return row && { ...row, id: asNumber(row.id) };
    },

    async findById(id: number, tx: Executor = db): Promise<ReceivedRow | undefined> {
      const row = await tx
        .selectFrom("received_invoices")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst();
      return row && { ...row, id: asNumber(row.id) };
    },

    /** A page of a business's inbox, newest first, and how many match in all. */
    async list(businessId: string, filter: InboxFilter, start: number, length: number) {
      let query = db.selectFrom("received_invoices").where("business_id", "=", businessId);
      if (filter.supplierTin !== undefined) query = query.where("supplier_tin", "=", filter.supplierTin);
      // Both days whole: from the first one's start to the last one's end.
      if (filter.from !== undefined) query = query.where("received_at", ">=", dayStart(filter.from));
      if (filter.to !== undefined) query = query.where("received_at", "<=", dayEnd(filter.to));
      if (filter.status !== undefined) query = query.where("status", "=", filter.status);
      const [rows, count] = await Promise.all([
        query
          .select(SUMMARY_COLUMNS)
          .orderBy("received_at", "desc")
          .orderBy("id", "desc")
          .offset(start)
          .limit(length)
          .execute(),
        query.select((eb) => eb.fn.countAll().as("n")).executeTakeFirst(),
      ]);
      return { rows: rows.map((r) => ({ ...r, id: asNumber(r.id) })), total: asNumber(count?.n ?? 0) };
    },

    async events(receivedId: number, tx: Executor = db): Promise<ReceivedEvent[]> {
      const rows = await tx
        .selectFrom("received_invoice_events")
        .select(["at", "type", "actor", "detail"])
        .where("received_id", "=", receivedId)
        .orderBy("id")
        .execute();
      return rows.map((r) => ({ ...r, detail: JSON.parse(r.detail) as Record<string, unknown> }));
    },

    /**
     * The buyer's decision, once: from RECEIVED only (a compare-and-set, so two requests at once
     * cannot both decide). Whether this call made it.
     */
    async decide(
      id: number,
      change: {
        status: ReceivedStatus;
        acknowledgement: AcknowledgementState;
        reason: string | null;
        at: string;
      },
      tx: Executor,
    ): Promise<boolean> {
      const result = await tx
        .updateTable("received_invoices")
        .set({
          status: change.status,
          acknowledgement: change.acknowledgement,
          reason: change.reason,
          decided_at: change.at,
          updated_at: change.at,
        })
        .where("id", "=", id)
        .where("status", "=", "RECEIVED")
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async setAcknowledgement(id: number, state: AcknowledgementState, at: string, tx: Executor) {
      await tx
        .updateTable("received_invoices")
        .set({ acknowledgement: state, updated_at: at })
        .where("id", "=", id)
        .execute();
    },

    /** The counts of a business's inbox by status, for the dashboard. */
    async counts(businessId: string): Promise<Record<ReceivedStatus, number>> {
      const rows = await db
        .selectFrom("received_invoices")
        .select(["status", (eb) => eb.fn.countAll().as("n")])
        .where("business_id", "=", businessId)
        .groupBy("status")
        .execute();
      const counts: Record<ReceivedStatus, number> = { RECEIVED: 0, ACKNOWLEDGED: 0, REJECTED: 0 };
      for (const r of rows) counts[r.status] = asNumber(r.n);
      return counts;
    },

    /** Rows whose sealed part is not under data key `kid`, after the id `after`: a data-key rotation's pages. */
    async sealedNotUnder(kid: string, after: number, limit: number, tx: Executor = db) {
      const prefix = `v1.${kid}.`;
      const rows = await tx
        .selectFrom("received_invoices")
        .select(["id", "irn", "sealed"])
        .where("id", ">", after)
        .where("sealed", "is not", null)
        .where(sql<string>`substr(sealed, 1, ${prefix.length})`, "<>", prefix)
        .orderBy("id")
        .limit(limit)
        .execute();
      return rows.map((r) => ({ ...r, id: asNumber(r.id), sealed: r.sealed as string }));
    },

    /** Replaces a sealed value only while it is still `from`. */
    async setSealedIf(id: number, from: string, sealed: string, tx: Executor): Promise<boolean> {
      const result = await tx
        .updateTable("received_invoices")
        .set({ sealed })
        .where("id", "=", id)
        .where("sealed", "=", from)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    // --- The collection: one row per source, its schedule and what its pulls did.

    async pull(source: string, tx: Executor = db): Promise<InboxPull | undefined> {
      const row = await tx
        .selectFrom("inbox_pulls")
        .selectAll()
        .where("source", "=", source)
        .executeTakeFirst();
      return row && { ...row, pulls: asNumber(row.pulls), received: asNumber(row.received) };
    },

    /**
     * Takes the source's next collection when it is due (unless `force`): moves its time to `next`
     * and its cursor to `today`, a compare-and-set, so one process in all queues each collection's
     * days. Answers the row as it was before, or undefined when another process took it or it is
     * not due.
     */
    async takeCollection(
      source: string,
      at: { now: string; next: string; today: string },
      force: boolean,
      tx: Executor,
    ): Promise<InboxPull | undefined> {
      await tx
        .insertInto("inbox_pulls")
        .values({ source })
        .onConflict((oc) => oc.column("source").doNothing())
        .execute();
      const before = await this.pull(source, tx);
      if (!before) return undefined;
      const result = await tx
        .updateTable("inbox_pulls")
        .set((eb) => ({ next_pull_at: at.next, cursor_day: at.today, pulls: eb("pulls", "+", 1) }))
        .where("source", "=", source)
        .where((eb) =>
          before.next_pull_at === null
            ? eb("next_pull_at", "is", null)
            : eb("next_pull_at", "=", before.next_pull_at),
        )
        .$if(!force, (q) =>
          q.where((eb) => eb.or([eb("next_pull_at", "is", null), eb("next_pull_at", "<=", at.now)])),
        )
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1 ? before : undefined;
    },

    /** What one day's pull did, told in the transaction that settles its job. */
    async pulled(
      source: string,
      outcome: { at: string; received: number; error: string | null; summary: string | null },
      tx: Executor,
    ): Promise<void> {
      await tx
        .updateTable("inbox_pulls")
        .set((eb) => ({
          last_pulled_at: outcome.at,
          last_error: outcome.error,
          received: eb("received", "+", outcome.received),
          ...(outcome.summary === null ? {} : { last_outcome: outcome.summary }),
        }))
        .where("source", "=", source)
        .execute();
    },

    /** Makes the next pull due now (`invoices pull` asks the workers for one). */
    async pullNow(source: string, now: string, tx: Executor = db): Promise<void> {
      await tx
        .insertInto("inbox_pulls")
        .values({ source, next_pull_at: now })
        .onConflict((oc) => oc.column("source").doUpdateSet({ next_pull_at: sql`${now}` }))
        .execute();
    },
  };
}

export type InboxRepository = ReturnType<typeof inboxRepository>;
