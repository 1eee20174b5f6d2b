import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import SQLite from "better-sqlite3";
import { build, fixture, tenant } from "../helpers.ts";

const API = "/api/v1/einvoice";

test("payment_terms_note and note are not stored in plaintext, yet read back decrypted", async (t) => {
  const { app, ctx, dbFile } = await build(t);
  const a = await tenant(ctx);
  const invoice = fixture("invoice-full", a);
  const secretTerms = String(invoice.payment_terms_note);
  const secretNote = String(invoice.note);
  assert.equal(
    (await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: invoice }))
      .statusCode,
    200,
  );

  // Push everything out of the WAL so the main file holds the rows too; then scan every file.
  const raw = new SQLite(dbFile);
  raw.pragma("wal_checkpoint(FULL)");
  const row = raw.prepare("select document, sealed from invoices where irn = ?").get(invoice.irn) as {
    document: string;
    sealed: string;
  };
  raw.close();
  assert.ok(row.sealed.startsWith("v1."), "the confidential fields are sealed");
  assert.ok(!row.document.includes(secretTerms));
  const bytes = Buffer.concat(
    [dbFile, `${dbFile}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f)),
  );
  assert.equal(bytes.includes(Buffer.from(secretTerms)), false, "payment_terms_note is stored in plaintext");
  assert.equal(bytes.includes(Buffer.from(secretNote)), false, "note is stored in plaintext");
  // The scan itself must be able to fail: a field that is not encrypted is found by it.
  assert.equal(bytes.includes(Buffer.from(String(invoice.order_reference))), true);

  const record = (await app.inject({ url: `${API}/${String(invoice.irn)}`, headers: a.headers })).json().data;
  assert.equal(record.document.payment_terms_note, secretTerms);
  assert.equal(record.document.note, secretNote);
});

test("a sealed value moved to another invoice's row does not decrypt", async (t) => {
  const { app, ctx, dbFile } = await build(t);
  const a = await tenant(ctx);
  const first = fixture("invoice-full", a);
  const second = {
    ...fixture("invoice-full", a),
    irn: `INV0002-${a.service_id}-20261115`,
    payment_terms_note: "other",
  };
  await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: first });
  await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: second });
  const raw = new SQLite(dbFile);
  raw
    .prepare("update invoices set sealed = (select sealed from invoices where irn = ?) where irn = ?")
    .run(first.irn, second.irn);
  raw.close();
  const res = await app.inject({ url: `${API}/${String(second.irn)}`, headers: a.headers });
  assert.equal(res.statusCode, 500);
  assert.equal(res.json().status, false);
  assert.equal(JSON.stringify(res.json()).includes("Net 30"), false);
});
