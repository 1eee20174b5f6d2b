import assert from "node:assert/strict";
import { test } from "node:test";
import { CompiledQuery, sql } from "kysely";
import { stateQuery } from "../../src/invoices/repository.ts";
import { build, ENGINE } from "../helpers.ts";

// Timing belongs to the benchmarks; what keeps lookups flat as the registry grows is the plan, and
// that a test can hold.
test(`lookup/{IRN} is answered from one index on ${ENGINE}, without reading the invoice row`, async (t) => {
  const { ctx } = await build(t);
  const query = stateQuery(ctx.db, "INV0001-AB12CD34-20261115", "a-business");
  if (ENGINE === "sqlite") {
    const plan = await ctx.db.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
    );
    assert.deepEqual(
      plan.rows.map((row) => row.detail),
      ["SEARCH invoices USING COVERING INDEX invoices_lookup (irn=? AND business_id=?)"],
    );
  } else {
    // PostgreSQL keeps the document out of line (TOAST), so its rows stay small either way; the
    // index is there for index-only scans once the table is vacuumed.
    const columns = await sql<{ indexdef: string }>`
      select indexdef from pg_indexes where schemaname = current_schema() and indexname = 'invoices_lookup'`.execute(
      ctx.db,
    );
    assert.match(
      columns.rows[0]?.indexdef ?? "",
      /\(irn, business_id, status, payment_status, payment_reference, signed_at, transmitted_at, authority_reference\)/,
    );
  }
});
