import { type Kysely, sql } from "kysely";
import { engineOf } from "./database.ts";

/**
 * 0018: received invoices count their findings in a column of their own, so a page of the inbox
 * says how many each has without parsing every row's list (50 rows of long findings took half a
 * second of the event loop); a collection is a job of the outbox, whose lease and retry policy
 * replace the source's own lease, and the source's row keeps what the last day pulled did.
 */
export async function pullJobs0018(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("received_invoices")
    .addColumn("warnings", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  const count =
    engineOf(db) === "postgres" ? sql`json_array_length(checks::json)` : sql`json_array_length(checks)`;
  await sql`update received_invoices set warnings = ${count}`.execute(db);
  await db.schema.alterTable("inbox_pulls").addColumn("last_outcome", "text").execute();
  await db.schema.alterTable("inbox_pulls").dropColumn("lease_owner").execute();
  await db.schema.alterTable("inbox_pulls").dropColumn("lease_expires_at").execute();
}
