import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from "kysely";
import { engineOf } from "./database.ts";
import { core0001 } from "./migration-0001.ts";
import { partialPayments } from "./migration-0008.ts";
import { reportNumbersAndBounds } from "./migration-0015.ts";
import { receivedInvoices0017 } from "./migration-0017.ts";
import { pullJobs0018 } from "./migration-0018.ts";
import { credentialChanges0019 } from "./migration-0019.ts";
import { invoiceRows0020 } from "./migration-0020.ts";
import { generatedId } from "./migration-ids.ts";
import type { Database } from "./schema.ts";

/*
 * Migrations are frozen: each carries its own literal SQL, column lists and data, never a live
 * constant of the code, so that a later edit to the code cannot rewrite what a past migration did.
 */

/**
 * Migrations are code, not files, so one list serves every engine and ships inside the package.
 * Append only: a migration that has run anywhere is never edited.
 */
const migrations: Record<string, Migration> = {
  "0001_core": core0001,
  "0002_signatures": {
    async up(db: Kysely<unknown>) {
      // The head of each business's hash chain lives on the business row, so one row lock (or, on
      // SQLite, the write lock its update takes) serializes the signs of one business.
      await db.schema.alterTable("businesses").addColumn("chain_head", "text").execute();
      await db.schema
        .alterTable("businesses")
        .addColumn("chain_length", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      for (const column of ["previous_hash", "hash", "signature", "kid"]) {
        await db.schema.alterTable("invoices").addColumn(column, "text").execute();
      }
      await db.schema.alterTable("invoices").addColumn("chain_seq", "integer").execute();
      await db.schema
        .createIndex("invoices_chain")
        .on("invoices")
        .columns(["business_id", "chain_seq"])
        .unique()
        .execute();
    },
  },
  "0003_outbox": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("outbox_jobs")
        .addColumn("id", "integer", generatedId(db))
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("irn", "text")
        .addColumn("business_id", "text", (c) => c.notNull())
        .addColumn("payload", "text")
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("next_attempt_at", "text", (c) => c.notNull())
        .addColumn("lease_owner", "text")
        .addColumn("lease_expires_at", "text")
        .addColumn("last_error", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("outbox_jobs_due")
        .on("outbox_jobs")
        .columns(["state", "next_attempt_at"])
        .execute();
      // At most one open delivery per invoice, whatever races between transmit calls.
      await db.schema
        .createIndex("outbox_jobs_open_delivery")
        .on("outbox_jobs")
        .column("irn")
        .unique()
        .where(sql.ref("state"), "=", "pending")
        .where(sql.ref("kind"), "=", "delivery")
        .execute();
      await db.schema
        .createTable("webhooks")
        .addColumn("business_id", "text", (c) => c.primaryKey().references("businesses.id"))
        .addColumn("url", "text", (c) => c.notNull())
        .addColumn("secret", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
    },
  },
  "0004_audit": {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("invoice_events").addColumn("actor", "text").execute();
      await db.schema
        .createTable("audit_log")
        .addColumn("id", "integer", generatedId(db))
        .addColumn("at", "text", (c) => c.notNull())
        .addColumn("actor", "text", (c) => c.notNull())
        .addColumn("action", "text", (c) => c.notNull())
        .addColumn("business_id", "text")
        .addColumn("subject", "text", (c) => c.notNull())
        .addColumn("detail", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("audit_log_business")
        .on("audit_log")
        .columns(["business_id", "id"])
        .execute();
    },
  },
  "0005_lookup_index": {
    async up(db: Kysely<unknown>) {
      // lookup/{IRN} answers from this index alone. On SQLite an invoice row (~4.4 kB) spills into
      // an overflow page and the timestamps sit after the document, so reading them from the row
      // cost a second page read per lookup; at a million invoices those reads leave the cache and
      // dominated the lookup.
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
        ])
        .execute();
    },
  },
  "0006_product_search": {
    async up(db: Kysely<unknown>) {
      // `resources/products?search=` matches any part of a description, which no B-tree can answer:
      // scanning the 5,600 descriptions twice (page and count) took about 4 ms a request. A trigram
      // index answers substring matches.
      if (engineOf(db) === "sqlite") {
        await sql`create virtual table product_trigrams using fts5(
          description, content = 'products', content_rowid = 'rowid', tokenize = 'trigram')`.execute(db);
        await sql`insert into product_trigrams (product_trigrams) values ('rebuild')`.execute(db);
        return;
      }
      // pg_trgm ships with PostgreSQL and is trusted (the database's CREATE privilege suffices), but
      // a server may not offer it or the role may not be allowed: then the search keeps working, by
      // scanning. The advisory lock keeps concurrent migrations (one schema per tenant or test) from
      // racing to create the database-wide extension.
      await sql`select pg_advisory_xact_lock(hashtext('einvoice pg_trgm'))`.execute(db);
      await sql`savepoint trigrams`.execute(db);
      try {
        await sql`create extension if not exists pg_trgm with schema public`.execute(db);
        await sql`create index products_description_trigrams on products
          using gin (lower(description) public.gin_trgm_ops)`.execute(db);
        await sql`release savepoint trigrams`.execute(db);
      } catch {
        await sql`rollback to savepoint trigrams`.execute(db);
      }
    },
  },
  "0007_invoices_by_signing_time": {
    async up(db: Kysely<unknown>) {
      // The operator dashboard lists every business's invoices newest first, a page at a time from
      // where the last page ended: without this index each page sorted the whole register. Signing
      // times only grow, so new entries land at the index's right edge.
      await db.schema.createIndex("invoices_signed").on("invoices").columns(["signed_at", "irn"]).execute();
    },
  },
  "0008_partial_payments": {
    async up(db: Kysely<unknown>) {
      // Kysely runs SQLite migrations outside a transaction: one of its own, so a backfill cut short
      // leaves the columns unadded rather than half filled (PostgreSQL's migrations run in one).
      // Not writeTransaction: the migrator already holds the connection (the non-blocking wait
      // gives it back between tries), and migrations run before the process serves anything, so a
      // wait in SQLite's busy handler stalls no request.
      if (engineOf(db) === "sqlite") await db.transaction().execute(partialPayments);
      else await partialPayments(db);
    },
  },
  "0009_idempotency_keys": {
    async up(db: Kysely<unknown>) {
      // One row per Idempotency-Key of a business: the claim of the request that holds it, then its
      // stored answer. The primary key decides which of two concurrent requests holds a key.
      await db.schema
        .createTable("idempotency_keys")
        .addColumn("business_id", "text", (c) => c.notNull().references("businesses.id"))
        .addColumn("idempotency_key", "text", (c) => c.notNull())
        .addColumn("route", "text", (c) => c.notNull())
        .addColumn("fingerprint", "text", (c) => c.notNull())
        .addColumn("claim", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("status", "integer")
        .addColumn("retry_after", "integer")
        .addColumn("response", "text")
        .addPrimaryKeyConstraint("idempotency_keys_pk", ["business_id", "idempotency_key"])
        .execute();
      await db.schema
        .createIndex("idempotency_keys_created")
        .on("idempotency_keys")
        .column("created_at")
        .execute();
    },
  },
  "0010_data_key_state": {
    async up(db: Kysely<unknown>) {
      // The data key new values are sealed under, once `keys rotate-data-key` has chosen one (null:
      // the first configured key). One row, present from the start: every write that seals reads
      // it, and on PostgreSQL share-locks it, so the rotation's update waits for those writes.
      await db.schema
        .createTable("data_key_state")
        .addColumn("id", "integer", (c) => c.primaryKey().check(sql`id = 1`))
        .addColumn("kid", "text")
        .addColumn("rotated_at", "text")
        .execute();
      await sql`insert into data_key_state (id, kid, rotated_at) values (1, null, null)`.execute(db);
    },
  },
  "0011_rate_limit_hits": {
    async up(db: Kysely<unknown>) {
      // Requests per rate-limit key and 10-second bucket, summed over the API processes: each adds its
      // own counts about once a second and reads back everyone's (src/http/rate-counter.ts). Only
      // PostgreSQL deployments pool them (SQLite ones count per process), but the table exists on both
      // so the schema is one. On PostgreSQL it is unlogged: counts that a crash loses cost nothing, and
      // the writes skip the WAL. Rows older than the minute are deleted as they age.
      await (engineOf(db) === "postgres"
        ? sql`create unlogged table rate_limit_hits (
            key text not null, bucket bigint not null, hits bigint not null,
            constraint rate_limit_hits_pk primary key (key, bucket))`.execute(db)
        : db.schema
            .createTable("rate_limit_hits")
            .addColumn("key", "text", (c) => c.notNull())
            .addColumn("bucket", "integer", (c) => c.notNull())
            .addColumn("hits", "integer", (c) => c.notNull())
            .addPrimaryKeyConstraint("rate_limit_hits_pk", ["key", "bucket"])
            .execute());
    },
  },
  "0012_forwarded_messages": {
    async up(db: Kysely<unknown>) {
      // Messages forwarded to the authority after a delivery (payment updates, VAT reports) run in
      // the order they were queued per invoice: each looks for an earlier open one of its invoice.
      await db.schema
        .createIndex("outbox_jobs_open_forward")
        .on("outbox_jobs")
        .columns(["irn", "id"])
        .where(sql.ref("state"), "=", "pending")
        .where(sql.ref("kind"), "=", "forward")
        .execute();
    },
  },
  "0013_authority_holds": {
    async up(db: Kysely<unknown>) {
      // One row per authority that refused this service's credential: while it is there, deliveries
      // and forwards to that authority wait, and one is tried every probe interval (outbox/authority
      // hold). In the database, so every worker process pauses and probes as one.
      await db.schema
        .createTable("authority_holds")
        .addColumn("authority", "text", (c) => c.primaryKey())
        .addColumn("since", "text", (c) => c.notNull())
        .addColumn("reason", "text", (c) => c.notNull())
        .addColumn("next_probe_at", "text", (c) => c.notNull())
        .addColumn("probes", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
    },
  },
  "0014_idempotency_sizes": {
    async up(db: Kysely<unknown>) {
      // Answers kept for Idempotency-Keys: one over 1 KiB compressed, one over 64 KiB compressed not
      // at all (its size and SHA-256 only), and each business's kept bytes counted by 15-minute
      // slot for its quota. On SQLite in a transaction of its own, as 0008: nothing half added.
      const work = async (tx: Kysely<unknown>) => {
        const postgres = engineOf(tx) === "postgres";
        const columns = [
          ["response_gzip", postgres ? "bytea" : "blob"],
          ["response_bytes", "integer"],
          ["response_sha256", "text"],
          ["replay", "text"],
        ] as const;
        for (const [name, type] of columns) {
          await tx.schema.alterTable("idempotency_keys").addColumn(name, type).execute();
        }
        await tx.schema
          .createTable("idempotency_usage")
          .addColumn("business_id", "text", (c) => c.notNull())
          .addColumn("slot", "integer", (c) => c.notNull())
          .addColumn("bytes", "bigint", (c) => c.notNull())
          .addPrimaryKeyConstraint("idempotency_usage_pk", ["business_id", "slot"])
          .execute();
        await tx.schema
          .createIndex("idempotency_usage_slot")
          .on("idempotency_usage")
          .column("slot")
          .execute();
        // The answers kept so far count from now, for the 24 hours they may still be kept.
        const slot = Math.floor(Date.now() / 900_000);
        await sql`insert into idempotency_usage (business_id, slot, bytes)
          select business_id, ${sql.lit(slot)}, sum(${postgres ? sql`octet_length(response)` : sql`length(cast(response as blob))`})
          from idempotency_keys where response is not null group by business_id`.execute(tx);
      };
      if (engineOf(db) === "sqlite") await db.transaction().execute(work);
      else await work(db);
    },
  },
  "0015_report_numbers": {
    async up(db: Kysely<unknown>) {
      // VAT reports numbered uniquely per invoice, each invoice's payments where an update finds
      // them by index, and a business's queued forwards counted by index (migration-0015.ts). On
      // SQLite in a transaction of its own, as 0008: a backfill cut short leaves nothing half done.
      if (engineOf(db) === "sqlite") await db.transaction().execute(reportNumbersAndBounds);
      else await reportNumbersAndBounds(db);
    },
  },
  "0016_dashboard_sessions": {
    async up(db: Kysely<unknown>) {
      // At most one row: the time of the last dashboard sign-out. Every session issued until then has
      // ended, whichever process issued it (src/dashboard/session.ts). No row: no sign-out yet.
      await db.schema
        .createTable("dashboard_sessions")
        .addColumn("id", "integer", (c) => c.primaryKey().check(sql`id = 1`))
        .addColumn("not_before", "text", (c) => c.notNull())
        .execute();
    },
  },
  "0017_received_invoices": {
    async up(db: Kysely<unknown>) {
      // The buyer's side: received invoices, their history, the collection's cursor and lease.
      if (engineOf(db) === "sqlite") await db.transaction().execute(receivedInvoices0017);
      else await receivedInvoices0017(db);
    },
  },
  "0018_pull_jobs": {
    async up(db: Kysely<unknown>) {
      if (engineOf(db) === "sqlite") await db.transaction().execute(pullJobs0018);
      else await pullJobs0018(db);
    },
  },
  "0019_credential_changes": {
    async up(db: Kysely<unknown>) {
      if (engineOf(db) === "sqlite") await db.transaction().execute(credentialChanges0019);
      else await credentialChanges0019(db);
    },
  },
  "0020_invoice_rows": { up: invoiceRows0020 },
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Every migration this version knows, in order. */
export const MIGRATIONS: readonly string[] = Object.keys(migrations).sort();

// Migrations describe tables that do not exist yet, so they see the database untyped.
export async function migrator(db: Kysely<Database>): Promise<Migrator> {
  const untyped = db as unknown as Kysely<unknown>;
  // On PostgreSQL the bookkeeping tables live in the schema the connection works in, named
  // explicitly: Kysely otherwise looks for them in every schema and may find another's.
  const schema =
    engineOf(db) === "postgres"
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(untyped)).rows[0]?.schema
      : undefined;
  return new Migrator({ db: untyped, provider, ...(schema ? { migrationTableSchema: schema } : {}) });
}

export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const { error, results } = await (await migrator(db)).migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}

export async function pendingMigrations(db: Kysely<Database>): Promise<string[]> {
  const all = await (await migrator(db)).getMigrations();
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
}
