import assert from "node:assert/strict";
import { test } from "node:test";
import type { Context } from "../../src/main.ts";
import { build, fixture, type Json, type Tenant, tenant } from "../helpers.ts";
import { operator } from "./operator.ts";

/** A supplier outside this service: its invoices reach our businesses as their buyer. */
const SUPPLIER = { business_id: "0b7c6f3e-1a2b-4c3d-8e9f-0a1b2c3d4e5f", service_id: "SUPP1234" };
const OTHER_SUPPLIER_TIN = "55555555-0001";

let sequence = 0;

/** The full fixture as a supplier sent it to `buyer`: a fresh IRN, the customer's TIN the buyer's. */
function invoiceFor(buyer: Pick<Tenant, "tin">, change: (doc: Json) => void = () => {}): Json {
  const doc = fixture("invoice-full", SUPPLIER);
  sequence += 1;
  doc.irn = `R${process.pid}N${sequence}-${SUPPLIER.service_id}-20261115`;
  doc.accounting_customer_party = { ...(doc.accounting_customer_party as Json), tin: buyer.tin };
  change(doc);
  return doc;
}

/** Received as pulled from the authority; the IRNs stored. */
async function receive(ctx: Context, docs: Json[]): Promise<string[]> {
  const receipt = await ctx.inbox.receive(
    docs.map((document) => ({ document })),
    "mbs",
    "test",
  );
  assert.equal(receipt.stored.length, docs.length, JSON.stringify(receipt));
  return docs.map((d) => String(d.irn));
}

const unescapeHtml = (text: string) =>
  text
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&amp;", "&");

/** The IRNs listed in the received table, in order. */
function listed(page: string, businessId: string): string[] {
  const table = /<table id="received">([\s\S]*?)<\/table>/.exec(page)?.[1] ?? "";
  const prefix = `/dashboard/businesses/${businessId}/inbox/`;
  return [...table.matchAll(/<a href="([^"]+)">/g)]
    .map((m) => unescapeHtml(m[1] as string))
    .filter((href) => href.startsWith(prefix))
    .map((href) => decodeURIComponent(href.slice(prefix.length)));
}

/** The rows of a table, each the texts of its cells (tags dropped, entities decoded). */
function rows(page: string, id: string): string[][] {
  const table = new RegExp(`<table id="${id}">([\\s\\S]*?)</table>`).exec(page)?.[1];
  assert.ok(table !== undefined, `the page has <table id="${id}">`);
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(table)?.[1] ?? "";
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...(row[1] as string).matchAll(/<t[dh][^>]*>([\s\S]*?)<\/t[dh]>/g)].map((cell) =>
      unescapeHtml((cell[1] as string).replace(/<[^>]+>/g, "")).trim(),
    ),
  );
}

const nextLink = (page: string) => {
  const href = /<a rel="next" href="([^"]+)"/.exec(page)?.[1];
  return href === undefined ? undefined : unescapeHtml(href);
};

test("the business page counts its received invoices by status; the list is newest first, filtered, and only its own", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx, { tin: "31845560-0001" });
  const b = await tenant(ctx, { tin: "41234567-0001" });
  const older = await receive(ctx, [invoiceFor(a), invoiceFor(a)]);
  // A moment later: listed before the first ones.
  await new Promise((resolve) => setTimeout(resolve, 5));
  const fromOther = await receive(ctx, [
    invoiceFor(a, (doc) => {
      doc.accounting_supplier_party = { ...(doc.accounting_supplier_party as Json), tin: OTHER_SUPPLIER_TIN };
    }),
  ]);
  const [forB] = await receive(ctx, [invoiceFor(b)]);
  const [decided] = older;
  assert.ok(decided && forB);
  await ctx.inbox.reject(
    { businessId: a.business_id, apiKey: "test" },
    decided,
    "goods not delivered",
    "test",
  );

  const op = await operator(app, ctx);
  const business = await op.get(`/dashboard/businesses/${a.business_id}`);
  assert.equal(business.statusCode, 200, business.body);
  const counts = /<div class="tiles" id="received-counts">([\s\S]*?)<\/div>/.exec(business.body)?.[1] ?? "";
  const tile = (status: string) =>
    new RegExp(
      `href="/dashboard/businesses/${a.business_id}/inbox\\?status=${status}"><strong>(\\d+)</strong>`,
    ).exec(counts)?.[1];
  assert.deepEqual([tile("RECEIVED"), tile("ACKNOWLEDGED"), tile("REJECTED")], ["2", "0", "1"]);
  assert.match(business.body, new RegExp(`<a href="/dashboard/businesses/${a.business_id}/inbox">`));

  const inbox = `/dashboard/businesses/${a.business_id}/inbox`;
  const all = await op.get(inbox);
  assert.equal(all.statusCode, 200, all.body);
  assert.match(String(all.headers["content-type"]), /^text\/html/);
  const listedAll = listed(all.body, a.business_id);
  assert.equal(listedAll[0], fromOther[0], "the newest first");
  assert.deepEqual([...listedAll].sort(), [...older, ...fromOther].sort());
  assert.ok(!listedAll.includes(forB), "another business's received invoice is not listed");
  const row = rows(all.body, "received").find((r) => r[0] === fromOther[0]);
  assert.deepEqual(row?.slice(1, 5), [
    "Okafor Building Supplies Ltd",
    OTHER_SUPPLIER_TIN,
    "2026-11-15",
    "693375 NGN",
  ]);

  assert.deepEqual(listed((await op.get(`${inbox}?status=REJECTED`)).body, a.business_id), [decided]);
  assert.deepEqual(
    listed((await op.get(`${inbox}?status=RECEIVED`)).body, a.business_id).sort(),
    [...older.filter((irn) => irn !== decided), ...fromOther].sort(),
  );
  assert.deepEqual(
    listed((await op.get(`${inbox}?supplier_tin=${OTHER_SUPPLIER_TIN}`)).body, a.business_id),
    fromOther,
  );
  assert.deepEqual(
    listed((await op.get(`${inbox}?supplier_tin=20198222-0002&status=REJECTED`)).body, a.business_id),
    [decided],
  );
  // Received days: none before today, all of them up to today.
  const today = new Date().toISOString().slice(0, 10);
  assert.deepEqual(listed((await op.get(`${inbox}?to=2020-01-01`)).body, a.business_id), []);
  assert.equal(listed((await op.get(`${inbox}?from=${today}`)).body, a.business_id).length, 3);
  // The filter form shows what is filtered by.
  const filtered = await op.get(`${inbox}?status=REJECTED&supplier_tin=20198222-0002`);
  assert.match(filtered.body, /<option selected>REJECTED<\/option>/);
  assert.match(filtered.body, /name="supplier_tin" value="20198222-0002"/);

  // B's inbox holds B's only; A's invoice read through B is not found.
  const bInbox = await op.get(`/dashboard/businesses/${b.business_id}/inbox`);
  assert.deepEqual(listed(bInbox.body, b.business_id), [forB]);
  const crossed = await op.get(`/dashboard/businesses/${b.business_id}/inbox/${encodeURIComponent(decided)}`);
  assert.equal(crossed.statusCode, 404);
  assert.match(crossed.body, /Invoice not found/);
  assert.equal((await op.get(`/dashboard/businesses/${b.business_id}/inbox/${decided}/pdf`)).statusCode, 404);
  const crossAck = await op.post(
    `/dashboard/businesses/${b.business_id}/inbox/${encodeURIComponent(fromOther[0] as string)}/acknowledge`,
  );
  assert.equal(crossAck.statusCode, 404);
  assert.equal(
    (await ctx.inbox.read({ businessId: a.business_id, apiKey: "test" }, fromOther[0] as string)).status,
    "RECEIVED",
    "a decision through another business changes nothing",
  );

  // Bad filters and unknown businesses are error pages, not lists.
  for (const bad of ["status=PAID", "from=2026-02-30", "start=-1", "start=abc"]) {
    const res = await op.get(`${inbox}?${bad}`);
    assert.equal(res.statusCode, 400, bad);
    assert.match(String(res.headers["content-type"]), /^text\/html/);
  }
  const unknown = await op.get("/dashboard/businesses/00000000-0000-4000-8000-000000000000/inbox");
  assert.equal(unknown.statusCode, 404);
  assert.match(unknown.body, /Business not found/);
  // Signed out: the sign-in page, keeping where the operator was going.
  const out = await app.inject({ url: inbox });
  assert.equal(out.statusCode, 303);
  assert.match(String(out.headers.location), /^\/dashboard\/login\?next=/);
});

test("the list pages by 50: following rel=next gives the rest once, still filtered", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx, { tin: "31845560-0001" });
  const irns = await receive(
    ctx,
    Array.from({ length: 53 }, () => invoiceFor(a)),
  );
  await receive(ctx, [
    invoiceFor(a, (doc) => {
      doc.accounting_supplier_party = { ...(doc.accounting_supplier_party as Json), tin: OTHER_SUPPLIER_TIN };
    }),
  ]);
  const op = await operator(app, ctx);
  const first = await op.get(`/dashboard/businesses/${a.business_id}/inbox?supplier_tin=20198222-0002`);
  const page1 = listed(first.body, a.business_id);
  assert.equal(page1.length, 50);
  assert.match(first.body, /1–50 of 53/);
  const next = nextLink(first.body);
  assert.ok(next, "a link to the next page");
  assert.match(next, /supplier_tin=20198222-0002/);
  assert.match(next, /start=50/);
  const second = await op.get(next);
  const page2 = listed(second.body, a.business_id);
  assert.equal(page2.length, 3);
  assert.equal(nextLink(second.body), undefined, "no page after the last");
  assert.match(second.body, /<a rel="prev" href="[^"]*supplier_tin=20198222-0002/);
  assert.deepEqual([...page1, ...page2].sort(), [...irns].sort(), "each once");
});

test("a received invoice's page: supplier, amounts, status, every finding, the history and the document; decided from the page", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx, { tin: "31845560-0001" });
  const [wrong, fine] = await receive(ctx, [
    invoiceFor(a, (doc) => {
      // The supplier's total does not add up: a warning, never a reason to drop it.
      (doc.legal_monetary_total as Json).payable_amount = 700000;
    }),
    invoiceFor(a),
  ]);
  assert.ok(wrong && fine);
  const op = await operator(app, ctx);
  const url = `/dashboard/businesses/${a.business_id}/inbox/${encodeURIComponent(wrong)}`;
  const page = await op.get(url);
  assert.equal(page.statusCode, 200, page.body);
  assert.match(page.body, new RegExp(`<h1>${wrong}</h1>`));
  assert.match(page.body, /<dd id="supplier">Okafor Building Supplies Ltd<\/dd>/);
  assert.match(page.body, /<dd id="payable">700000 NGN<\/dd>/);
  assert.match(page.body, /<dd id="status"><span class="badge badge-received">RECEIVED<\/span><\/dd>/);
  assert.match(page.body, /<dd id="acknowledgement"><span class="badge badge-none">none<\/span>/);
  assert.deepEqual(rows(page.body, "amounts"), [
    ["Sum of lines", "642500 NGN"],
    ["Total excluding tax", "645000 NGN"],
    ["Total including tax", "693375 NGN"],
    ["Amount payable", "700000 NGN"],
  ]);
  const findings = rows(page.body, "checks");
  const record = await ctx.inbox.read({ businessId: a.business_id, apiKey: "test" }, wrong);
  assert.ok(record.checks.length > 0);
  assert.deepEqual(
    findings,
    record.checks.map((c) => [c.rule, c.path, c.message]),
    "every finding: rule, path, message",
  );
  assert.ok(
    findings.some(
      ([rule, path, message]) =>
        rule === "total_payable" &&
        path === "legal_monetary_total.payable_amount" &&
        /700000/.test(message ?? ""),
    ),
    JSON.stringify(findings),
  );
  assert.deepEqual(
    rows(page.body, "history").map((r) => [r[1], r[2]]),
    [["received", "test"]],
  );
  assert.match(page.body, /<pre class="document">[\s\S]*&quot;payable_amount&quot;: 700000/);
  // The buyer's decision is offered while there is one to make.
  assert.match(page.body, new RegExp(`<form method="post" action="${url}/acknowledge">`));
  assert.match(page.body, new RegExp(`<form method="post" action="${url}/reject">`));
  const clean = await op.get(`/dashboard/businesses/${a.business_id}/inbox/${encodeURIComponent(fine)}`);
  assert.match(clean.body, /id="no-findings"/);
  assert.doesNotMatch(clean.body, /<table id="checks">/);

  // A form posted from another site decides nothing.
  const foreign = await op.post(`${url}/acknowledge`, {}, { origin: "https://evil.example" });
  assert.equal(foreign.statusCode, 403);
  assert.equal(
    (await ctx.inbox.read({ businessId: a.business_id, apiKey: "test" }, wrong)).status,
    "RECEIVED",
  );

  // Rejected from the page, with its reason; a reason of spaces is refused first.
  const blank = await op.post(`${url}/reject`, { reason: "   " });
  assert.equal(blank.statusCode, 400);
  assert.match(blank.body, /reason for the rejection/);
  assert.equal(
    (await ctx.inbox.read({ businessId: a.business_id, apiKey: "test" }, wrong)).status,
    "RECEIVED",
  );
  const rejected = await op.post(`${url}/reject`, { reason: "total <wrong>" });
  assert.equal(rejected.statusCode, 303, rejected.body);
  assert.equal(rejected.headers.location, `${url}?done=inbox_rejected`);
  const after = await op.get(String(rejected.headers.location));
  assert.match(after.body, /role="status">Invoice rejected/);
  assert.match(after.body, /<dd id="reason">total &lt;wrong&gt;<\/dd>/);
  assert.match(after.body, /badge-rejected">REJECTED/);
  assert.doesNotMatch(after.body, /action="[^"]*\/acknowledge"/, "no decision left to make");
  assert.deepEqual(
    rows(after.body, "history").map((r) => [r[1], r[2]]),
    [
      ["received", "test"],
      ["rejected", "dashboard"],
    ],
  );
  // The other decision now is refused (409), and changes nothing.
  const refused = await op.post(`${url}/acknowledge`);
  assert.equal(refused.statusCode, 409);
  assert.match(refused.body, /already decided/i);
  assert.equal(
    (await ctx.inbox.read({ businessId: a.business_id, apiKey: "test" }, wrong)).status,
    "REJECTED",
  );

  // Acknowledged: pulled from the authority, so queued to be told to it.
  const fineUrl = `/dashboard/businesses/${a.business_id}/inbox/${encodeURIComponent(fine)}`;
  const acked = await op.post(`${fineUrl}/acknowledge`);
  assert.equal(acked.statusCode, 303, acked.body);
  const ackPage = await op.get(String(acked.headers.location));
  assert.match(ackPage.body, /role="status">Invoice acknowledged/);
  assert.match(ackPage.body, /badge-acknowledged">ACKNOWLEDGED/);
  assert.match(ackPage.body, /badge-queued">queued/);
  const jobs = await ctx.db
    .selectFrom("outbox_jobs")
    .select(["kind", "irn"])
    .where("kind", "=", "acknowledgement")
    .execute();
  assert.deepEqual(jobs, [{ kind: "acknowledgement", irn: fine }]);

  // The PDF, as the business would fetch it.
  const pdf = await op.get(`${fineUrl}/pdf`);
  assert.equal(pdf.statusCode, 200);
  assert.equal(pdf.headers["content-type"], "application/pdf");
  assert.match(
    String(pdf.headers["content-disposition"]),
    /^attachment; filename="R\d+N\d+-SUPP1234-20261115\.pdf"$/,
  );
  assert.equal(pdf.rawPayload.subarray(0, 5).toString(), "%PDF-");

  // Unknown IRN: a 404 page.
  const missing = await op.get(`/dashboard/businesses/${a.business_id}/inbox/NOPE1-SUPP1234-20261115`);
  assert.equal(missing.statusCode, 404);
  assert.match(missing.body, /Invoice not found/);
});

test("a hostile supplier's name, TIN and findings are shown as text, never as markup", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx, { tin: "31845560-0001" });
  const hostile = `<script>alert("x")</script><img src=x onerror=alert(1)> & "Co" \u202Eevil`;
  const [irn] = await receive(ctx, [
    invoiceFor(a, (doc) => {
      doc.accounting_supplier_party = {
        ...(doc.accounting_supplier_party as Json),
        party_name: hostile,
        tin: `<b>1</b>`,
      };
      doc.note = "</pre><script>alert(2)</script>";
    }),
  ]);
  assert.ok(irn);
  const op = await operator(app, ctx);
  const inbox = await op.get(`/dashboard/businesses/${a.business_id}/inbox`);
  const detail = await op.get(`/dashboard/businesses/${a.business_id}/inbox/${encodeURIComponent(irn)}`);
  for (const page of [inbox, detail]) {
    assert.equal(page.statusCode, 200, page.body);
    assert.doesNotMatch(page.body, /<script/i);
    assert.doesNotMatch(page.body, /<img/i);
    assert.doesNotMatch(page.body, /<b>1<\/b>/);
    assert.ok(page.body.includes("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"), "the name, escaped");
    // A bidirectional control is shown as a marker, not obeyed.
    assert.ok(page.body.includes("⟨U+202E⟩evil"));
    assert.ok(!page.body.includes("\u202E"));
  }
  assert.ok(
    detail.body.includes("&lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;"),
    "the document, escaped",
  );
  assert.equal(rows(inbox.body, "received")[0]?.[1], hostile.replace("\u202E", "⟨U+202E⟩"));
});
