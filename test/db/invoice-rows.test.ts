import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { build, ENGINE, freshInvoice, type Json, tenant } from "../helpers.ts";
import { signableLines } from "../invoices/records/pdf-load.ts";

const API = "/api/v1/einvoice";

test("PostgreSQL keeps an invoice's row whole (lz4 where the server has it); a large document still moves out, and both read back", {
  skip: ENGINE !== "postgres" && "TOAST storage is PostgreSQL's",
}, async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const sign = async (doc: Json) => {
    const res = await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: doc });
    assert.equal(res.statusCode, 200, res.body);
    const record = await app.inject({ method: "GET", url: `${API}/${String(doc.irn)}`, headers: a.headers });
    assert.equal(record.statusCode, 200, record.body);
    // The document as submitted comes back, whichever way its row was stored.
    assert.deepEqual((record.json() as { data: { document: Json } }).data.document, doc);
  };
  const toastRows = async () => {
    const { rows } = await sql<{ toast: string }>`
      select reltoastrelid::regclass::text as toast from pg_class where oid = to_regclass('invoices')`.execute(
      ctx.db,
    );
    const toast = rows[0]?.toast as string;
    const counted = await sql<{ n: string }>`select count(*) as n from ${sql.raw(toast)}`.execute(ctx.db);
    return Number(counted.rows[0]?.n);
  };
  const stored = async (irn: unknown) => {
    const { rows } = await sql<{ method: string | null; size: number; length: number }>`
      select pg_column_compression(document) as method, pg_column_size(document) as size,
        octet_length(document) as length
      from invoices where irn = ${irn}`.execute(ctx.db);
    return rows[0] as { method: string | null; size: number; length: number };
  };
  const { rows } = await sql<{ lz4: boolean }>`
    select 'lz4' = any(enumvals) as lz4 from pg_settings where name = 'default_toast_compression'`.execute(
    ctx.db,
  );
  const lz4 = rows[0]?.lz4 === true;

  // The full sample invoice: its row (3.6 kB as written) is compressed and stays in the table.
  const full = freshInvoice(a);
  await sign(full);
  const small = await stored(full.irn);
  assert.equal(small.method, lz4 ? "lz4" : "pglz", "compressed, with lz4 where the server has it");
  assert.ok(small.size < small.length, `${small.size} bytes stored for ${small.length}`);
  assert.equal(await toastRows(), 0, "nothing moved out of the row (by default its document was)");

  // A document of 150 lines is too large for a page even compressed: it moves out, as it did.
  const large = signableLines(a, 150);
  await sign(large);
  assert.ok((await toastRows()) > 0, "the large document moved out");
});
