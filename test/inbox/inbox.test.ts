import assert from "node:assert/strict";
import { test } from "node:test";
import { build, freshInvoice, type Json, type Tenant, tenant } from "../helpers.ts";

const API = "/api/v1/einvoice";

type App = Awaited<ReturnType<typeof build>>["app"];

/** An invoice of `seller`'s addressed to `buyer`'s TIN, signed and transmitted (builtin: delivered at once). */
async function sendTo(app: App, seller: Tenant, buyer: Tenant, change: (doc: Json) => void = () => {}) {
  const doc = freshInvoice(seller);
  doc.accounting_customer_party = { ...(doc.accounting_customer_party as Json), tin: buyer.tin };
  change(doc);
  const res = await app.inject({
    method: "POST",
    url: `${API}/sign-transmit`,
    headers: seller.headers,
    payload: doc,
  });
  assert.equal(res.statusCode, 200, res.body);
  return String(doc.irn);
}

const get = (app: App, who: Tenant, url: string) => app.inject({ method: "GET", url, headers: who.headers });
const post = (app: App, who: Tenant, url: string, payload?: Json) =>
  app.inject({ method: "POST", url, headers: who.headers, ...(payload ? { payload } : {}) });

test("builtin: B signs an invoice to A's TIN; A sees it, reads it and acknowledges it; B cannot", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx, { tin: "31845560-0001" });
  const b = await tenant(ctx, { tin: "20198222-0002" });
  const irn = await sendTo(app, b, a);

  const inbox = await get(app, a, `${API}/inbox`);
  assert.equal(inbox.statusCode, 200, inbox.body);
  const page = inbox.json() as { status: boolean; message: string; data: { total: number; items: Json[] } };
  assert.equal(page.status, true);
  assert.equal(page.message, "Inbox fetched successfully");
  assert.equal(page.data.total, 1);
  const item = page.data.items[0] as Json;
  assert.equal(item.irn, irn);
  assert.equal(item.source, "builtin");
  // The supplier is the business that signed it, as registered (the document's party is what it wrote).
  const registered = await ctx.businesses.find(b.business_id);
  assert.deepEqual(item.supplier, { tin: b.tin, name: registered?.name });
  assert.equal(item.status, "RECEIVED");
  assert.equal(item.acknowledgement, "none");
  assert.equal(item.payable_amount, "693375");

  // B's own inbox is empty, and A's invoice is not B's to read or decide.
  assert.equal(((await get(app, b, `${API}/inbox`)).json() as { data: { total: number } }).data.total, 0);
  for (const res of [
    await get(app, b, `${API}/inbox/${irn}`),
    await post(app, b, `${API}/inbox/${irn}/acknowledge`),
    await post(app, b, `${API}/inbox/${irn}/reject`, { reason: "not mine" }),
  ]) {
    assert.equal(res.statusCode, 404, res.body);
    assert.equal((res.json() as Json).message, "Invoice not found");
  }

  const read = await get(app, a, `${API}/inbox/${irn}`);
  assert.equal(read.statusCode, 200, read.body);
  const record = (read.json() as { data: Json }).data;
  assert.equal((record.document as Json).irn, irn);
  // The confidential note comes back as the supplier wrote it (stored sealed, like a sent invoice's).
  const signed = freshInvoice(b);
  assert.equal(typeof (record.document as Json).note, typeof signed.note);
  assert.deepEqual(
    (record.history as Json[]).map((h) => h.type),
    ["received"],
  );

  const ack = await post(app, a, `${API}/inbox/${irn}/acknowledge`);
  assert.equal(ack.statusCode, 200, ack.body);
  assert.equal((ack.json() as Json).message, "Invoice acknowledged successfully");
  const acked = (ack.json() as { data: Json }).data;
  assert.equal(acked.status, "ACKNOWLEDGED");
  // From a business of this service: nothing to tell the authority.
  assert.equal(acked.acknowledgement, "not_needed");
  // A repeat answers the same; the other decision is refused.
  const again = await post(app, a, `${API}/inbox/${irn}/acknowledge`);
  assert.equal(again.statusCode, 200);
  assert.equal((again.json() as { data: Json }).data.decided_at, acked.decided_at);
  const reject = await post(app, a, `${API}/inbox/${irn}/reject`, { reason: "changed my mind" });
  assert.equal(reject.statusCode, 409, reject.body);
  assert.equal((reject.json() as Json).message, "Invoice already decided");
  const history = ((await get(app, a, `${API}/inbox/${irn}`)).json() as { data: { history: Json[] } }).data
    .history;
  assert.deepEqual(
    history.map((h) => h.type),
    ["received", "acknowledged"],
  );
  // No outbox job to the authority for it.
  const jobs = await ctx.db
    .selectFrom("outbox_jobs")
    .select("kind")
    .where("kind", "=", "acknowledgement")
    .execute();
  assert.equal(jobs.length, 0);
});

test("the inbox pages and filters, a rejection keeps its reason, and bad queries are refused in the envelope", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx, { tin: "31845560-0001" });
  const b = await tenant(ctx, { tin: "20198222-0002" });
  const c = await tenant(ctx, { tin: "40000001-0001" });
  const fromB = [];
  for (let i = 0; i < 5; i++) fromB.push(await sendTo(app, b, a));
  const fromC = await sendTo(app, c, a, (doc) => {
    doc.accounting_supplier_party = { ...(doc.accounting_supplier_party as Json), tin: c.tin };
  });
  // An invoice B addresses to its own TIN reaches no inbox.
  await sendTo(app, b, b);

  const page = async (query: string) => {
    const res = await get(app, a, `${API}/inbox${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: { total: number; items: Json[] } }).data;
  };
  assert.equal((await page("")).total, 6);
  const first = await page("?length=4");
  const second = await page("?length=4&start=4");
  assert.equal(first.items.length, 4);
  assert.equal(second.items.length, 2);
  const all = [...first.items, ...second.items].map((i) => i.irn);
  assert.equal(new Set(all).size, 6);
  assert.deepEqual(
    (await page(`?supplier_tin=${c.tin}`)).items.map((i) => i.irn),
    [fromC],
  );
  const today = new Date().toISOString().slice(0, 10);
  assert.equal((await page(`?from=${today}&to=${today}`)).total, 6);
  assert.equal((await page("?to=2000-01-01")).total, 0);
  const dayOff = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
  assert.equal((await page(`?to=${dayOff(-1)}`)).total, 0, "received today: not on or before yesterday");
  assert.equal((await page(`?from=${dayOff(1)}`)).total, 0, "nor on or after tomorrow");
  assert.equal((await page(`?from=${dayOff(-1)}&to=${dayOff(1)}`)).total, 6);
  assert.equal(((await get(app, b, `${API}/inbox`)).json() as { data: { total: number } }).data.total, 0);

  const rejected = await post(app, a, `${API}/inbox/${fromB[0]}/reject`, { reason: "goods not delivered" });
  assert.equal(rejected.statusCode, 200, rejected.body);
  const data = (rejected.json() as { data: Json }).data;
  assert.equal(data.status, "REJECTED");
  assert.equal(data.reason, "goods not delivered");
  assert.equal((await page("?status=REJECTED")).total, 1);
  assert.equal((await page("?status=RECEIVED")).total, 5);
  const late = await post(app, a, `${API}/inbox/${fromB[0]}/acknowledge`);
  assert.equal(late.statusCode, 409);

  for (const query of [
    "?status=LOST",
    "?from=2024-13-01",
    "?length=0",
    "?length=100000",
    "?start=-1",
    "?colour=red",
  ]) {
    const res = await get(app, a, `${API}/inbox${query}`);
    assert.equal(res.statusCode, 400, `${query}: ${res.body}`);
    const body = res.json() as Json;
    assert.equal(body.status, false);
    assert.equal(body.code, 400);
  }
  for (const payload of [{}, { reason: "" }, { reason: "x".repeat(1001) }, { reason: 5 }]) {
    const res = await post(app, a, `${API}/inbox/${fromB[1]}/reject`, payload as Json);
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
  }
  const unknown = await get(app, a, `${API}/inbox/NOPE1-ABCDEF12-20240101`);
  assert.equal(unknown.statusCode, 404);
  const noAuth = await app.inject({ method: "GET", url: `${API}/inbox` });
  assert.equal(noAuth.statusCode, 401);
});

test("an invoice.received event is queued for the buyer's webhook with the receipt, once", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx, { tin: "31845560-0001" });
  const b = await tenant(ctx, { tin: "20198222-0002" });
  // Events are queued only for a business with a webhook: A has one, B none.
  await ctx.webhooks.set(a.business_id, "https://erp.example.com/hooks/einvoice");
  const irn = await sendTo(app, b, a);
  const events = await ctx.db
    .selectFrom("outbox_jobs")
    .select(["business_id", "payload"])
    .where("kind", "=", "webhook")
    .execute();
  const received = events
    .map((e) => ({ business: e.business_id, body: JSON.parse(e.payload ?? "{}") as Json }))
    .filter((e) => e.body.type === "invoice.received");
  assert.equal(received.length, 1, JSON.stringify(events));
  const [event] = received;
  assert.ok(event);
  assert.equal(event.business, a.business_id);
  const data = event.body.data as Json;
  assert.equal(data.irn, irn);
  assert.equal((data.supplier as Json).tin, b.tin);
});
