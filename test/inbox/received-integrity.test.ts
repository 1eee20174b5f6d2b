import assert from "node:assert/strict";
import { test } from "node:test";
import type { Context } from "../../src/runtime/context.ts";
import { build, freshInvoice, type Json, type Tenant, tenant } from "../helpers.ts";

const API = "/api/v1/einvoice";

type App = Awaited<ReturnType<typeof build>>["app"];

/** A supplier outside this service. */
const SUPPLIER = { business_id: "0b7c6f3e-1a2b-4c3d-8e9f-0a1b2c3d4e5f", service_id: "SUPP1234" };

/** The full fixture as a supplier elsewhere sent it to `buyer`. */
function fromSupplier(buyer: Pick<Tenant, "tin">): Json {
  const doc = freshInvoice(SUPPLIER);
  doc.accounting_customer_party = { ...(doc.accounting_customer_party as Json), tin: buyer.tin };
  return doc;
}

const inboxOf = async (app: App, who: Tenant, query = "") => {
  const res = await app.inject({ url: `${API}/inbox${query}`, headers: who.headers });
  assert.equal(res.statusCode, 200, res.body);
  return (res.json() as { data: { total: number; items: Json[] } }).data;
};

/** The `invoice.received` events queued for webhooks: whose, and what they carry. */
async function receivedEvents(ctx: Pick<Context, "db">) {
  const jobs = await ctx.db
    .selectFrom("outbox_jobs")
    .select(["business_id", "payload"])
    .where("kind", "=", "webhook")
    .execute();
  return jobs
    .map((job) => ({ business: job.business_id, body: JSON.parse(job.payload ?? "{}") as Json }))
    .filter((event) => event.body.type === "invoice.received")
    .map((event) => ({ business: event.business, data: event.body.data as Json }));
}

test("builtin: the supplier of an invoice one business hands another is the business that signed it, whatever the document names", async (t) => {
  const { app, ctx } = await build(t);
  const beta = await tenant(ctx, { tin: "31845560-0001" });
  const alpha = await tenant(ctx, { tin: "20198222-0002" });
  await ctx.webhooks.set(beta.business_id, "https://erp.example.com/hooks/einvoice");
  const alphaName = (await ctx.businesses.list()).find((b) => b.id === alpha.business_id)?.name;
  assert.ok(alphaName);

  const send = async (supplier: Json) => {
    const doc = freshInvoice(alpha);
    doc.accounting_customer_party = { ...(doc.accounting_customer_party as Json), tin: beta.tin };
    doc.accounting_supplier_party = { ...(doc.accounting_supplier_party as Json), ...supplier };
    const res = await app.inject({
      method: "POST",
      url: `${API}/sign-transmit`,
      headers: alpha.headers,
      payload: doc,
    });
    assert.equal(res.statusCode, 200, res.body);
    return String(doc.irn);
  };
  const posed = await send({ party_name: "Dangote Cement Plc", tin: "99999999-0009" });
  const asBuyer = await send({ party_name: "Beta's own name", tin: beta.tin });
  const honest = await send({ tin: alpha.tin });

  const listed = new Map((await inboxOf(app, beta)).items.map((item) => [item.irn, item]));
  for (const irn of [posed, asBuyer, honest]) {
    assert.deepEqual(listed.get(irn)?.supplier, { tin: alpha.tin, name: alphaName }, irn);
  }
  assert.equal((await inboxOf(app, beta, "?supplier_tin=99999999-0009")).total, 0);
  assert.equal((await inboxOf(app, beta, `?supplier_tin=${alpha.tin}`)).total, 3);

  const read = async (irn: string) => {
    const res = await app.inject({ url: `${API}/inbox/${irn}`, headers: beta.headers });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: { checks: Json[]; warnings: number; document: Json; history: Json[] } })
      .data;
  };
  const record = await read(posed);
  const flagged = record.checks.filter((c) => c.rule === "supplier_not_signer");
  assert.equal(flagged.length, 1, JSON.stringify(record.checks));
  const [finding] = flagged as [Json];
  assert.equal(finding.path, "accounting_supplier_party.tin");
  assert.equal(finding.actual, "99999999-0009");
  assert.equal(finding.expected, alpha.tin);
  assert.match(String(finding.message), /99999999-0009/);
  assert.match(String(finding.message), /Dangote Cement Plc/);
  assert.ok(String(finding.message).includes(alphaName), String(finding.message));
  assert.ok(record.warnings >= 1);
  // The document stays as signed; the history names the rule.
  assert.equal((record.document.accounting_supplier_party as Json).tin, "99999999-0009");
  const [received] = record.history;
  assert.ok(received);
  assert.deepEqual((received.detail as Json).rules, ["supplier_not_signer"]);

  assert.equal(
    (await read(asBuyer)).checks.filter((c) => c.rule === "supplier_not_signer").length,
    1,
    "naming the buyer itself is flagged too",
  );
  const plain = await read(honest);
  assert.deepEqual(plain.checks, [], "the signer's own TIN: nothing to report");

  // The buyer's ERP hears of the signer too.
  const events = await receivedEvents(ctx);
  assert.equal(events.length, 3);
  for (const event of events) {
    assert.equal(event.business, beta.business_id);
    assert.deepEqual(event.data.supplier, { tin: alpha.tin, name: alphaName });
  }
  assert.equal(events.find((e) => e.data.irn === posed)?.data.warnings, 1);
});

test("one batch with the same IRN for two buyers: each stored, each buyer told once", async (t) => {
  const { ctx } = await build(t);
  const a = await tenant(ctx, { tin: "31845560-0001" });
  const b = await tenant(ctx, { tin: "41234567-0001" });
  for (const who of [a, b]) await ctx.webhooks.set(who.business_id, "https://erp.example.com/hooks/einvoice");
  const toA = fromSupplier(a);
  const toB = { ...fromSupplier(b), irn: toA.irn };
  const irn = String(toA.irn);

  const receipt = await ctx.inbox.receive([{ document: toA }, { document: toB }], "mbs", "test");
  assert.deepEqual(receipt.stored.map((s) => s.businessId).sort(), [a.business_id, b.business_id].sort());
  assert.ok(receipt.stored.every((s) => s.irn === irn));

  const events = await receivedEvents(ctx);
  assert.deepEqual(events.map((e) => e.business).sort(), [a.business_id, b.business_id].sort());
  for (const event of events) assert.equal(event.data.irn, irn);

  // Each row has its own one `received` entry.
  const rows = await ctx.db
    .selectFrom("received_invoices")
    .select(["id", "business_id"])
    .where("irn", "=", irn)
    .execute();
  assert.equal(rows.length, 2);
  for (const row of rows) {
    const history = await ctx.db
      .selectFrom("received_invoice_events")
      .select("type")
      .where("received_id", "=", row.id)
      .execute();
    assert.deepEqual(
      history.map((h) => h.type),
      ["received"],
    );
  }

  // The same batch again stores and announces nothing more.
  const again = await ctx.inbox.receive([{ document: toA }, { document: toB }], "mbs", "test");
  assert.equal(again.stored.length, 0);
  assert.equal(again.already, 2);
  assert.equal((await receivedEvents(ctx)).length, 2);
});

test("the inbox's day filters: a `to` far in the future lists everything, both ends take whole days", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx, { tin: "31845560-0001" });
  await ctx.inbox.receive(
    [0, 1, 2].map(() => ({ document: fromSupplier(a) })),
    "mbs",
    "test",
  );
  const today = new Date().toISOString().slice(0, 10);
  const dayOff = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
  for (const [query, total] of [
    ["?to=9999-12-31", 3],
    ["?from=0001-01-01&to=9999-12-31", 3],
    ["?from=9999-12-31", 0],
    ["?to=0001-01-01", 0],
    [`?to=${today}`, 3],
    [`?from=${today}`, 3],
    [`?from=${today}&to=${today}`, 3],
    [`?to=${dayOff(-1)}`, 0],
    [`?from=${dayOff(1)}`, 0],
  ] as const) {
    assert.equal((await inboxOf(app, a, query)).total, total, query);
  }
});

test("payable_amount is the exact decimal value: leading zeros go, a number never becomes another; too long is null and reported", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx, { tin: "31845560-0001" });
  await ctx.webhooks.set(a.business_id, "https://erp.example.com/hooks/einvoice");
  const withAmount = (amount: unknown) => {
    const doc = fromSupplier(a);
    doc.legal_monetary_total = { ...(doc.legal_monetary_total as Json), payable_amount: amount };
    return doc;
  };
  const padded = withAmount(`${"0".repeat(39)}1500000.00`);
  const huge = withAmount(`1${"0".repeat(60)}.00`);
  const plain = withAmount(693375);
  await ctx.inbox.receive(
    [padded, huge, plain].map((document) => ({ document })),
    "mbs",
    "test",
  );
  const listed = new Map((await inboxOf(app, a)).items.map((item) => [item.irn, item]));
  assert.equal(listed.get(padded.irn)?.payable_amount, "1500000.00");
  assert.equal(listed.get(huge.irn)?.payable_amount, null);
  assert.equal(listed.get(plain.irn)?.payable_amount, "693375");

  const events = new Map((await receivedEvents(ctx)).map((e) => [e.data.irn, e.data]));
  assert.equal(events.get(padded.irn)?.payable_amount, "1500000.00");
  assert.equal(events.get(huge.irn)?.payable_amount, null);

  const read = await app.inject({ url: `${API}/inbox/${huge.irn}`, headers: a.headers });
  const checks = (read.json() as { data: { checks: Json[] } }).data.checks;
  const finding = checks.find((c) => c.rule === "amount_too_long");
  assert.ok(finding, JSON.stringify(checks));
  assert.equal(finding.path, "legal_monetary_total.payable_amount");
  const paddedChecks = (
    (await app.inject({ url: `${API}/inbox/${padded.irn}`, headers: a.headers })).json() as {
      data: { checks: Json[] };
    }
  ).data.checks;
  assert.equal(
    paddedChecks.find((c) => c.rule === "amount_too_long"),
    undefined,
    "leading zeros are not length",
  );
});
