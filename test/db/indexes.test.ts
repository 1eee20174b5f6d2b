import assert from "node:assert/strict";
import { test } from "node:test";
import { CompiledQuery, sql } from "kysely";
import { type InvoiceFilter, invoiceSearch } from "../../src/dashboard/dashboard-repository.ts";
import { stateQuery } from "../../src/invoices/invoice-repository.ts";
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
      /\(irn, business_id, status, payment_status, payment_reference, signed_at, transmitted_at, authority_reference, payable_minor, paid_minor, currency_digits\)/,
    );
  }
});

test(`the dashboard's invoice pages on ${ENGINE}: unfiltered and one business's walk an index in order, an IRN is searched in the key`, async (t) => {
  const { ctx } = await build(t);
  const plan = async (filter: InvoiceFilter) => {
    const query = invoiceSearch(ctx.db, filter, undefined, 51).compile();
    const rows = await ctx.db.executeQuery<Record<string, unknown>>(
      CompiledQuery.raw(`explain ${ENGINE === "sqlite" ? "query plan " : ""}${query.sql}`, [
        ...query.parameters,
      ]),
    );
    return rows.rows.map((row) => String(row.detail ?? row["QUERY PLAN"])).join(" | ");
  };
  if (ENGINE === "sqlite") {
    // In order from an index: no sort of the whole register for the first page.
    assert.match(await plan({}), /SCAN invoices USING INDEX invoices_signed/);
    assert.doesNotMatch(await plan({}), /TEMP B-TREE FOR ORDER BY/);
    assert.match(await plan({ business_id: "b" }), /SEARCH invoices USING INDEX invoices_business_signed/);
    // Only ties of one signing time are put in IRN order.
    assert.doesNotMatch(await plan({ business_id: "b" }), /TEMP B-TREE FOR ORDER BY/);
    assert.match(await plan({ irn: "INV0001-" }), /SEARCH invoices USING .*INDEX .*\(irn>\? AND irn<\?\)/);
    // A rare status is read from the matches and sorted, not found by walking every invoice in order.
    assert.match(await plan({ status: "TRANSMISSION_FAILED" }), /USE TEMP B-TREE FOR ORDER BY/);
  } else {
    // The planner chooses by statistics, which an empty table does not have; with scans of the
    // whole table ruled out, what remains must be reading the pages in order from the index.
    const plans = await ctx.db.transaction().execute(async (tx) => {
      await sql`set local enable_seqscan = off`.execute(tx);
      const explain = async (filter: InvoiceFilter) => {
        const query = invoiceSearch(tx, filter, undefined, 51).compile();
        const rows = await tx.executeQuery<{ "QUERY PLAN": string }>(
          CompiledQuery.raw(`explain ${query.sql}`, [...query.parameters]),
        );
        return rows.rows.map((row) => row["QUERY PLAN"]).join(" | ");
      };
      return { all: await explain({}), business: await explain({ business_id: "b" }) };
    });
    assert.match(plans.all, /Index Scan Backward using invoices_signed/);
    assert.doesNotMatch(plans.all, /Sort/);
    assert.match(plans.business, /invoices_business_signed/);
  }
});
