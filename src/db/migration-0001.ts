import type { Kysely, Migration } from "kysely";
import { generatedId } from "./migration-ids.ts";

// The first schema, frozen (see migrations.ts): its own literal SQL and column lists.
export const core0001: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("businesses")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("tin", "text", (c) => c.notNull())
      .addColumn("service_id", "text", (c) => c.notNull().unique())
      .addColumn("certificate", "text", (c) => c.notNull().unique())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("api_keys")
      .addColumn("api_key", "text", (c) => c.primaryKey())
      .addColumn("business_id", "text", (c) => c.notNull().references("businesses.id"))
      .addColumn("secret_hash", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("revoked_at", "text")
      .execute();
    await db.schema.createIndex("api_keys_business").on("api_keys").column("business_id").execute();

    await db.schema
      .createTable("invoices")
      .addColumn("irn", "text", (c) => c.primaryKey())
      .addColumn("business_id", "text", (c) => c.notNull().references("businesses.id"))
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("payment_status", "text", (c) => c.notNull())
      .addColumn("payment_reference", "text")
      .addColumn("invoice_type_code", "text", (c) => c.notNull())
      .addColumn("issue_date", "text", (c) => c.notNull())
      .addColumn("supplier_tin", "text")
      .addColumn("customer_tin", "text")
      .addColumn("document", "text", (c) => c.notNull())
      .addColumn("sealed", "text")
      .addColumn("signed_at", "text", (c) => c.notNull())
      .addColumn("transmitted_at", "text")
      .addColumn("authority_reference", "text")
      .addColumn("qr_code", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("invoices_business_signed")
      .on("invoices")
      .columns(["business_id", "signed_at"])
      .execute();

    await db.schema
      .createTable("invoice_events")
      .addColumn("id", "integer", generatedId(db))
      .addColumn("irn", "text", (c) => c.notNull().references("invoices.irn"))
      .addColumn("at", "text", (c) => c.notNull())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("detail", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("invoice_events_irn").on("invoice_events").columns(["irn", "id"]).execute();

    await db.schema
      .createTable("fiscalization_reports")
      .addColumn("id", "integer", generatedId(db))
      .addColumn("irn", "text", (c) => c.notNull().references("invoices.irn"))
      .addColumn("business_id", "text", (c) => c.notNull().references("businesses.id"))
      .addColumn("report", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("fiscalization_reports_irn")
      .on("fiscalization_reports")
      .column("irn")
      .execute();

    await db.schema
      .createTable("products")
      .addColumn("hscode", "text", (c) => c.primaryKey())
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("section", "text", (c) => c.notNull())
      .addColumn("chapter", "text", (c) => c.notNull())
      .addColumn("product_category", "text", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("services")
      .addColumn("code", "text", (c) => c.primaryKey())
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("section", "text", (c) => c.notNull())
      .addColumn("division", "text", (c) => c.notNull())
      .addColumn("service_category", "text", (c) => c.notNull())
      .execute();
  },
};
