import { sql } from "kysely";
import { type Db, type Executor, engineOf } from "../db/database.ts";
import type { InvoiceTable } from "../db/schema.ts";

/** What the operator can narrow the invoice list by; every field optional. */
export type InvoiceFilter = {
  /** An IRN or its beginning (case-sensitive, as IRNs are stored). */
  irn?: string | undefined;
  /** The supplier's or the customer's TIN. */
  tin?: string | undefined;
  business_id?: string | undefined;
  status?: InvoiceTable["status"] | undefined;
  payment_status?: InvoiceTable["payment_status"] | undefined;
  /** Issue dates, inclusive, YYYY-MM-DD. */
  from?: string | undefined;
  to?: string | undefined;
};

/** Where the previous page ended: invoices are listed newest signed first. */
export type Cursor = { signed_at: string; irn: string };

/**
 * The query of one page of invoices matching the filter, newest signed first, after `cursor`.
 * Exported so a test can hold its plans.
 */
export function invoiceSearch(
  db: Executor,
  filter: InvoiceFilter,
  cursor: Cursor | undefined,
  limit: number,
) {
  const { irn, tin, business_id, status, payment_status, from, to } = filter;
  const sqlite = engineOf(db) === "sqlite";
  // SQLite has no statistics to weigh a filter against the signing-time index: walking that
  // index for a rare status read the whole register (165 ms at 100,000 invoices) where reading
  // the matches and sorting them takes 10 ms. A filtered page is therefore sorted (`+` keeps the
  // index out of the ordering); an unfiltered one, or one business's, walks an index in order.
  // PostgreSQL's planner decides by its statistics.
  const filtered = Object.entries(filter).some(
    ([name, value]) => name !== "business_id" && value !== undefined,
  );
  const signedAt =
    sqlite && filtered ? sql<string>`+invoices.signed_at` : sql.ref<string>("invoices.signed_at");
  // A case-sensitive prefix on both engines; on SQLite, GLOB reads it from the primary key.
  const irnPrefix = (prefix: string) =>
    sqlite
      ? sql<boolean>`invoices.irn glob ${`${prefix.replace(/[*?[]/g, "[$&]")}*`}`
      : sql<boolean>`substr(invoices.irn, 1, ${prefix.length}) = ${prefix}`;
  let query = db
    .selectFrom("invoices")
    .innerJoin("businesses", "businesses.id", "invoices.business_id")
    .select([
      "invoices.irn",
      "invoices.business_id",
      "businesses.name as business_name",
      "invoices.status",
      "invoices.payment_status",
      "invoices.invoice_type_code",
      "invoices.issue_date",
      "invoices.supplier_tin",
      "invoices.customer_tin",
      "invoices.signed_at",
    ]);
  if (irn !== undefined) query = query.where(irnPrefix(irn));
  if (tin !== undefined) {
    query = query.where((eb) =>
      eb.or([eb("invoices.supplier_tin", "=", tin), eb("invoices.customer_tin", "=", tin)]),
    );
  }
  if (business_id !== undefined) query = query.where("invoices.business_id", "=", business_id);
  if (status !== undefined) query = query.where("invoices.status", "=", status);
  if (payment_status !== undefined) query = query.where("invoices.payment_status", "=", payment_status);
  if (from !== undefined) query = query.where("invoices.issue_date", ">=", from);
  if (to !== undefined) query = query.where("invoices.issue_date", "<=", to);
  if (cursor !== undefined) {
    query = query.where((eb) =>
      eb(eb.refTuple("invoices.signed_at", "invoices.irn"), "<", eb.tuple(cursor.signed_at, cursor.irn)),
    );
  }
  return query.orderBy(signedAt, "desc").orderBy("invoices.irn", "desc").limit(limit);
}

/** The last dashboard sign-out (table dashboard_sessions), which ends every session issued until then. */
function signOuts(db: Db) {
  return {
    /** When the operator last signed out (ms since the epoch), 0 before the first sign-out. */
    async lastSignOut(): Promise<number> {
      const row = await db
        .selectFrom("dashboard_sessions")
        .select("not_before")
        .where("id", "=", 1)
        .executeTakeFirst();
      return row ? Date.parse(row.not_before) : 0;
    },

    /** Records a sign-out at `at`, unless a later one is recorded already. */
    async recordSignOut(at: number): Promise<void> {
      const notBefore = new Date(at).toISOString();
      await db
        .insertInto("dashboard_sessions")
        .values({ id: 1, not_before: notBefore })
        .onConflict((oc) =>
          oc
            .column("id")
            .doUpdateSet({ not_before: notBefore })
            .where("dashboard_sessions.not_before", "<", notBefore),
        )
        .execute();
    },
  };
}

/** The operator's reads across businesses, and the last sign-out. */
export function dashboardRepository(db: Db) {
  /** Delivery jobs that failed for good, of invoices no one has queued again. */
  const failedDeliveries = () =>
    db
      .selectFrom("outbox_jobs")
      .innerJoin("invoices", "invoices.irn", "outbox_jobs.irn")
      .where("outbox_jobs.kind", "=", "delivery")
      .where("outbox_jobs.state", "=", "failed")
      .where("invoices.status", "=", "TRANSMISSION_FAILED");

  return {
    async totals() {
      const row = await db
        .selectFrom("businesses")
        .select((eb) => [
          eb.fn.countAll<number>().as("businesses"),
          eb.fn.sum<number>("chain_length").as("invoices"),
        ])
        .executeTakeFirstOrThrow();
      const keys = await db
        .selectFrom("api_keys")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("revoked_at", "is", null)
        .executeTakeFirstOrThrow();
      return {
        businesses: Number(row.businesses),
        invoices: Number(row.invoices ?? 0),
        active_keys: Number(keys.n),
      };
    },

    /** One page of invoices matching the filter, newest signed first, after `cursor`. */
    searchInvoices: (filter: InvoiceFilter, cursor: Cursor | undefined, limit: number) =>
      invoiceSearch(db, filter, cursor, limit).execute(),

    /** How many invoices' deliveries failed for good and were not queued again. */
    async countFailedTransmissions(): Promise<number> {
      const row = await failedDeliveries()
        .select((eb) => eb.fn.count<number>("invoices.irn").distinct().as("n"))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /** Invoices whose delivery failed for good and that no one has queued again, latest first. */
    async failedTransmissions(limit: number) {
      const rows = await failedDeliveries()
        .innerJoin("businesses", "businesses.id", "invoices.business_id")
        .select([
          "outbox_jobs.id as job_id",
          "invoices.irn",
          "invoices.business_id",
          "businesses.name as business_name",
          "outbox_jobs.attempts",
          "outbox_jobs.last_error",
          "outbox_jobs.updated_at as failed_at",
        ])
        .orderBy("outbox_jobs.updated_at", "desc")
        .orderBy("outbox_jobs.id", "desc")
        .limit(limit)
        .execute();
      // An invoice re-queued and failed again has several failed jobs: its latest speaks for it.
      const seen = new Set<string>();
      return rows.filter((row) => !seen.has(row.irn) && seen.add(row.irn));
    },

    /** Webhook events that ran out of attempts, latest first. */
    async failedWebhooks(limit: number) {
      return db
        .selectFrom("outbox_jobs")
        .select(["id", "business_id", "irn", "attempts", "last_error", "updated_at"])
        .where("kind", "=", "webhook")
        .where("state", "=", "failed")
        .orderBy("updated_at", "desc")
        .orderBy("id", "desc")
        .limit(limit)
        .execute();
    },

    ...signOuts(db),

    /** Every outbox job about one invoice, oldest first. */
    async jobsFor(irn: string) {
      return db
        .selectFrom("outbox_jobs")
        .select([
          "id",
          "kind",
          "state",
          "attempts",
          "next_attempt_at",
          "last_error",
          "created_at",
          "updated_at",
        ])
        .where("irn", "=", irn)
        .orderBy("id")
        .execute();
    },
  };
}

export type DashboardRepository = ReturnType<typeof dashboardRepository>;
