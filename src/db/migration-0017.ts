import type { Kysely } from "kysely";
import { generatedId } from "./migration-ids.ts";

/**
 * 0017: the buyer's side. Invoices this service's businesses received from their suppliers (pulled
 * from the authority, or signed by another business of this service), their history, and where the
 * collection from each source stands.
 */
export async function receivedInvoices0017(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("received_invoices")
    .addColumn("id", "integer", generatedId(db))
    .addColumn("business_id", "text", (c) => c.notNull().references("businesses.id"))
    .addColumn("irn", "text", (c) => c.notNull())
    .addColumn("source", "text", (c) => c.notNull())
    .addColumn("supplier_tin", "text")
    .addColumn("supplier_name", "text")
    .addColumn("customer_tin", "text", (c) => c.notNull())
    .addColumn("issue_date", "text")
    .addColumn("invoice_type_code", "text")
    .addColumn("currency", "text")
    .addColumn("payable_amount", "text")
    .addColumn("document", "text", (c) => c.notNull())
    .addColumn("sealed", "text")
    .addColumn("checks", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("acknowledgement", "text", (c) => c.notNull())
    .addColumn("reason", "text")
    .addColumn("received_at", "text", (c) => c.notNull())
    .addColumn("decided_at", "text")
    .addColumn("updated_at", "text", (c) => c.notNull())
    // Stored once per buyer and IRN, whichever process pulled it and however often it was listed.
    .addUniqueConstraint("received_invoices_once", ["business_id", "irn"])
    .execute();
  // The inbox reads a business's invoices newest first, by id for a stable order among equal times.
  await db.schema
    .createIndex("received_invoices_inbox")
    .on("received_invoices")
    .columns(["business_id", "received_at", "id"])
    .execute();
  await db.schema
    .createTable("received_invoice_events")
    .addColumn("id", "integer", generatedId(db))
    .addColumn("received_id", "integer", (c) => c.notNull().references("received_invoices.id"))
    .addColumn("at", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("actor", "text", (c) => c.notNull())
    .addColumn("detail", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("received_invoice_events_of")
    .on("received_invoice_events")
    .columns(["received_id", "id"])
    .execute();
  // One row per source collected from: its lease makes one process at a time pull it, its cursor
  // says from which day the next pull asks.
  await db.schema
    .createTable("inbox_pulls")
    .addColumn("source", "text", (c) => c.primaryKey())
    .addColumn("cursor_day", "text")
    .addColumn("lease_owner", "text")
    .addColumn("lease_expires_at", "text")
    .addColumn("next_pull_at", "text")
    .addColumn("last_pulled_at", "text")
    .addColumn("last_error", "text")
    .addColumn("pulls", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("received", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
}
