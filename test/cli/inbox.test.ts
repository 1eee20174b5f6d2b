import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import type { Context } from "../../src/main.ts";
import { freshInvoice, type Json, type Tenant, tenant } from "../helpers.ts";
import { mbsEnv, mirror, simulator } from "../transmission/mbs.ts";
import { cli, dbEnv, failed, oneJson, openContext, TIMEOUT } from "./run.ts";

const run = promisify(execFile);
const POPPLER = fs.existsSync("/usr/bin/pdftotext");

/** A supplier outside this service. */
const SUPPLIER = { business_id: "0b7c6f3e-1a2b-4c3d-8e9f-0a1b2c3d4e5f", service_id: "SUPP1234" };
const OTHER_SUPPLIER_TIN = "55555555-0001";

/** The full fixture as the supplier sent it to `buyer`; `supplierTin` in place of the fixture's. */
function fromSupplier(buyer: Pick<Tenant, "tin">, supplierTin?: string): Json {
  const doc = freshInvoice(SUPPLIER);
  doc.accounting_customer_party = { ...(doc.accounting_customer_party as Json), tin: buyer.tin };
  if (supplierTin !== undefined) {
    doc.accounting_supplier_party = { ...(doc.accounting_supplier_party as Json), tin: supplierTin };
  }
  return doc;
}

/** Received one at a time, as pulled from the authority, so that each is newer than the one before. */
async function receive(ctx: Context, docs: Json[]): Promise<string[]> {
  for (const document of docs) {
    const receipt = await ctx.inbox.receive([{ document }], "mbs", "test");
    assert.equal(receipt.stored.length, 1, JSON.stringify(receipt));
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
  return docs.map((d) => String(d.irn));
}

type Page = { total: number; start: number; length: number; items: Json[] };
const irnsOf = (page: Json) => (page as unknown as Page).items.map((item) => item.irn);

test("invoices inbox lists a business's received invoices, newest first, filtered and paged; only its own", {
  timeout: TIMEOUT * 4,
}, async (t) => {
  const db = await dbEnv(t);
  const ctx = await openContext(t, db);
  const a = await tenant(ctx, { tin: "31845560-0001" });
  const b = await tenant(ctx, { tin: "41234567-0001" });
  const [first, second, fromOther] = await receive(ctx, [
    fromSupplier(a),
    fromSupplier(a),
    fromSupplier(a, OTHER_SUPPLIER_TIN),
  ]);
  const [forB] = await receive(ctx, [fromSupplier(b)]);
  const inbox = (...args: string[]) => cli(["invoices", "inbox", ...args], db.env);

  const all = oneJson(await inbox("--business", a.business_id));
  assert.equal(all.total, 3);
  assert.equal(all.start, 0);
  assert.equal(all.length, 50);
  assert.deepEqual(irnsOf(all), [fromOther, second, first]);
  const item = (all as unknown as Page).items[0] as Json;
  assert.deepEqual(item.supplier, { tin: OTHER_SUPPLIER_TIN, name: "Okafor Building Supplies Ltd" });
  assert.equal(item.status, "RECEIVED");
  assert.equal(item.source, "mbs");
  assert.equal(item.payable_amount, "693375");

  assert.deepEqual(
    irnsOf(oneJson(await inbox("--business", a.business_id, "--supplier-tin", OTHER_SUPPLIER_TIN))),
    [fromOther],
  );
  const paged = oneJson(await inbox("--business", a.business_id, "--start", "1", "--length", "1"));
  assert.deepEqual([paged.total, paged.start, paged.length, irnsOf(paged)], [3, 1, 1, [second]]);
  const today = new Date().toISOString().slice(0, 10);
  assert.equal(oneJson(await inbox("--business", a.business_id, "--from", today, "--to", today)).total, 3);
  assert.equal(oneJson(await inbox("--business", a.business_id, "--to", "2020-01-01")).total, 0);
  // The business id as a client may write it, upper case.
  assert.equal(oneJson(await inbox("--business", a.business_id.toUpperCase())).total, 3);
  // Another business's inbox is its own.
  assert.deepEqual(irnsOf(oneJson(await inbox("--business", b.business_id))), [forB]);

  // Bad input: a clear message and exit 1, nothing on stdout.
  failed(await inbox("--business", "00000000-0000-4000-8000-000000000000"), /no business has the id/);
  failed(
    await inbox("--business", a.business_id, "--status", "PAID"),
    /--status is one of RECEIVED, ACKNOWLEDGED, REJECTED/,
  );
  failed(await inbox("--business", a.business_id, "--from", "2026-02-30"), /--from is a real calendar date/);
  failed(await inbox("--business", a.business_id, "--to", "yesterday"), /--to is a real calendar date/);
  failed(
    await inbox("--business", a.business_id, "--from", "2026-11-20", "--to", "2026-11-01"),
    /is after --to/,
  );
  failed(
    await inbox("--business", a.business_id, "--length", "0"),
    /--length is a whole number from 1 to 200/,
  );
  failed(await inbox("--business", a.business_id, "--start", "-1"), /--start is a whole number/);
  failed(await inbox("--business", a.business_id, "--start", "x"), /--start is a whole number/);
  failed(await inbox(), /--business/);
});

test("invoices acknowledge and reject decide for the buyer as cli, once; another business's IRN is not found", {
  timeout: TIMEOUT * 4,
}, async (t) => {
  const db = await dbEnv(t);
  const ctx = await openContext(t, db);
  const a = await tenant(ctx, { tin: "31845560-0001" });
  const b = await tenant(ctx, { tin: "41234567-0001" });
  const [toAck, toReject] = await receive(ctx, [fromSupplier(a), fromSupplier(a)]);
  assert.ok(toAck && toReject);
  const as = { businessId: a.business_id, apiKey: "test" };

  failed(
    await cli(["invoices", "acknowledge", toAck, "--business", b.business_id], db.env),
    /no invoice with IRN/,
  );
  failed(
    await cli(["invoices", "acknowledge", toAck, "--business", "nope"], db.env),
    /no business has the id 'nope'/,
  );
  assert.equal((await ctx.inbox.read(as, toAck)).status, "RECEIVED", "nothing decided by the failures");

  const acked = oneJson(await cli(["invoices", "acknowledge", toAck, "--business", a.business_id], db.env));
  assert.equal(acked.irn, toAck);
  assert.equal(acked.status, "ACKNOWLEDGED");
  // Pulled from the authority: told to it by the outbox workers.
  assert.equal(acked.acknowledgement, "queued");
  const jobs = await ctx.db
    .selectFrom("outbox_jobs")
    .select(["kind", "irn"])
    .where("kind", "=", "acknowledgement")
    .execute();
  assert.deepEqual(jobs, [{ kind: "acknowledgement", irn: toAck }]);
  // A repeat answers the same; the other decision is refused.
  assert.equal(
    oneJson(await cli(["invoices", "acknowledge", toAck, "--business", a.business_id], db.env)).status,
    "ACKNOWLEDGED",
  );
  failed(
    await cli(["invoices", "reject", toAck, "--business", a.business_id, "--reason", "late"], db.env),
    /cannot be rejected now/,
  );

  failed(await cli(["invoices", "reject", toReject, "--business", a.business_id], db.env), /--reason/);
  failed(
    await cli(["invoices", "reject", toReject, "--business", a.business_id, "--reason", "  "], db.env),
    /--reason is the reason/,
  );
  const rejected = oneJson(
    await cli(
      ["invoices", "reject", toReject, "--business", a.business_id, "--reason", "goods not delivered"],
      db.env,
    ),
  );
  assert.equal(rejected.status, "REJECTED");
  assert.equal(rejected.reason, "goods not delivered");
  assert.equal(rejected.acknowledgement, "none");

  const history = async (irn: string) =>
    (await ctx.inbox.read(as, irn)).history.map((e) => [e.type, e.actor, e.detail]);
  assert.deepEqual((await history(toAck)).slice(1), [["acknowledged", "cli", { told: "authority" }]]);
  assert.deepEqual((await history(toReject)).slice(1), [
    ["rejected", "cli", { reason: "goods not delivered" }],
  ]);
  assert.deepEqual(
    irnsOf(
      oneJson(await cli(["invoices", "inbox", "--business", a.business_id, "--status", "REJECTED"], db.env)),
    ),
    [toReject],
  );
});

test("invoices pdf --received writes the received invoice's PDF for its buyer only", {
  timeout: TIMEOUT * 3,
}, async (t) => {
  const db = await dbEnv(t);
  const ctx = await openContext(t, db);
  const a = await tenant(ctx, { tin: "31845560-0001" });
  const b = await tenant(ctx, { tin: "41234567-0001" });
  const [irn] = await receive(ctx, [fromSupplier(a)]);
  assert.ok(irn);
  const out = path.join(db.dir, "received.pdf");
  const written = oneJson(
    await cli(["invoices", "pdf", irn, "--received", "--business", a.business_id, "--out", out], db.env),
  );
  assert.deepEqual(written, {
    irn,
    business_id: a.business_id,
    received: true,
    written: out,
    bytes: fs.statSync(out).size,
  });
  assert.equal(fs.readFileSync(out).subarray(0, 5).toString(), "%PDF-");
  if (POPPLER) {
    const { stdout } = await run("pdftotext", ["-layout", "-enc", "UTF-8", out, "-"]);
    const text = stdout.replace(/\s+/g, " ");
    assert.ok(text.includes("Received from Okafor Building Supplies Ltd (TIN 20198222-0002)"), text);
    assert.ok(text.includes("via the tax authority (MBS) · status RECEIVED"), text);
  }
  const other = path.join(db.dir, "other.pdf");
  failed(
    await cli(["invoices", "pdf", irn, "--received", "--business", b.business_id, "--out", other], db.env),
    /no invoice with IRN/,
  );
  assert.ok(!fs.existsSync(other), "nothing written for another business");
  failed(
    await cli(["invoices", "pdf", irn, "--received", "--out", other], db.env),
    /--received needs --business/,
  );
  failed(
    await cli(["invoices", "pdf", irn, "--business", a.business_id, "--out", other], db.env),
    /--business goes with --received/,
  );
  // Without --received the IRN is looked for among the invoices signed here: it is none of them.
  failed(await cli(["invoices", "pdf", irn, "--out", other], db.env));
});

test("invoices pull: asks the workers for a collection now, or with --wait collects from MBS here and prints the outcome", {
  timeout: TIMEOUT * 4,
}, async (t) => {
  const sim = await simulator(t, { seed: 31, taxpayers: 2 });
  const db = await dbEnv(t);
  const ctx = await openContext(t, db);
  const [taxpayer] = sim.taxpayers;
  assert.ok(taxpayer);
  const buyer = await mirror(ctx, taxpayer);
  const sent = [
    ...sim.injectInbound({ count: 2, buyer_tin: taxpayer.tin }),
    ...sim.injectInbound({ count: 1, buyer_tin: taxpayer.tin, wrong_total: true }),
  ];
  assert.equal(sent.length, 3);
  const env = { ...db.env, ...mbsEnv(sim, { EINVOICE_INBOX_LOOKBACK_DAYS: "2" }) };

  const pulled = oneJson(await cli(["invoices", "pull", "--wait"], env));
  assert.equal(pulled.pulled, true, JSON.stringify(pulled));
  assert.equal(pulled.error, null);
  assert.equal(pulled.days, 3, "the lookback days and today");
  assert.equal(pulled.listed, 3);
  assert.equal(pulled.stored, 3);
  assert.equal(pulled.already, 0);
  assert.deepEqual(pulled.unaddressed, []);
  assert.equal(pulled.cursor, new Date().toISOString().slice(0, 10));

  // Listed again (not acknowledged yet): stored once.
  const again = oneJson(await cli(["invoices", "pull", "--wait"], env));
  assert.deepEqual([again.listed, again.stored, again.already], [3, 0, 3]);

  const page = oneJson(
    await cli(["invoices", "inbox", "--business", buyer.business_id], env),
  ) as unknown as Page;
  assert.deepEqual(page.items.map((i) => i.irn).sort(), [...sent].sort());
  assert.ok(page.items.every((i) => i.source === "mbs" && i.customer_tin === taxpayer.tin));
  const wrong = page.items.find((i) => i.irn === sent[2]);
  assert.ok(wrong && Number(wrong.warnings) > 0, "the wrong total is a finding");

  // Without --wait: the next collection is due now, for the workers to take up.
  const before = Date.now();
  const asked = oneJson(await cli(["invoices", "pull"], env));
  assert.equal(asked.requested, true);
  assert.equal(asked.note, undefined);
  assert.ok(Date.parse(String(asked.next_pull_at)) >= before - 1000, String(asked.next_pull_at));
  assert.ok(Date.parse(String(asked.next_pull_at)) <= Date.now());
  assert.equal(asked.cursor_day, pulled.cursor);
  const row = await ctx.collector.state();
  assert.equal(row?.next_pull_at, asked.next_pull_at);
  assert.equal(row?.pulls, 2);
  assert.equal(row?.received, 3);

  // The builtin authority relays nothing: said so, and nothing pulled.
  const builtin = oneJson(await cli(["invoices", "pull", "--wait"], db.env));
  assert.deepEqual(builtin, { pulled: false, reason: "this authority relays no invoices to buyers" });
  const note = oneJson(await cli(["invoices", "pull"], db.env));
  assert.match(String(note.note), /relays no invoices to buyers/);
});
