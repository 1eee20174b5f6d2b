import assert from "node:assert/strict";
import { test } from "node:test";
import { BAD_CREDENTIAL, SERVER_ERRORS } from "../../../src/simulators/mbs/envelopes.ts";
import { foreignSellers, inboundInvoice } from "../../../src/simulators/mbs/inbound.ts";
import {
  FAULT_HEADER,
  MAX_INBOUND,
  type MbsSimulator,
  type MbsTaxpayer,
  parseRules,
  WRONG_TOTAL_OFFSET,
} from "../../../src/simulators/mbs/server.ts";
import type { Json } from "../../helpers.ts";
import { call, data, failure, first, invoiceFor, type Reply, simulator, UUID } from "./harness.ts";

// Invoices from other access points' sellers to the simulator's taxpayers as buyers: seeded at
// start, injected while running (`/_simulator/inbound`), listed by `pull`, acknowledged with
// `PATCH transmit/{IRN}`.

const PULL = "/api/v1/invoice/transmit/pull";
const INBOUND = "/_simulator/inbound";
const DAY_MS = 86_400_000;
const IRN = /^([A-Z0-9]+)-([0-9A-F]{8})-(\d{8})$/;
const TIN = /^\d{8}-\d{4}$/;

const today = () => new Date().toISOString().slice(0, 10);
const dayBefore = (n: number) => new Date(Date.now() - n * DAY_MS).toISOString().slice(0, 10);

async function pull(sim: MbsSimulator, query = ""): Promise<Json[]> {
  return data(await call(sim, "GET", `${PULL}${query}`)) as unknown as Json[];
}

async function inject(sim: MbsSimulator, body: unknown): Promise<string[]> {
  return (data(await call(sim, "POST", INBOUND, { body })).irns as string[]).map(String);
}

async function states(sim: MbsSimulator): Promise<Map<string, Json>> {
  const list = data(await call(sim, "GET", INBOUND)) as unknown as Json[];
  return new Map(list.map((s) => [String(s.irn), s]));
}

const acknowledge = (sim: MbsSimulator, irn: string, options: { headers?: Record<string, string> } = {}) =>
  call(sim, "PATCH", `/api/v1/invoice/transmit/${irn}`, { body: { message: "ACKNOWLEDGED" }, ...options });

/** A refusal of the simulator's own route: 400 in the error envelope, handler `simulator`. */
function badInput(reply: Reply, details: RegExp): void {
  const error = failure(reply, 400, "invalid simulator request");
  assert.equal(error.handler, "simulator");
  assert.match(String(error.details), details);
}

const kobo = (value: unknown) => Math.round(Number(value) * 100);
const near = (actual: number, expected: number, tolerance: number, label: string) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${label}: ${actual} vs ${expected}`);

/**
 * The arithmetic of a document, worked out here: each line is quantity × price − discount + fee,
 * the lines add up to the line extension amount, VAT is 7.5% of it, and tax inclusive is the sum.
 * Answers the payable and tax inclusive amounts in kobo, which the caller compares.
 */
function checkArithmetic(doc: Json): { payable: number; inclusive: number } {
  const lines = doc.invoice_line as Json[];
  assert.ok(lines.length >= 1 && lines.length <= 20, `1 to 20 lines: ${lines.length}`);
  let sum = 0;
  for (const line of lines) {
    const price = line.price as Json;
    const quantity = Number(line.invoiced_quantity);
    assert.ok(quantity > 0 && Number(price.price_amount) > 0);
    const gross = (quantity * Number(price.price_amount)) / Number(price.base_quantity);
    const discount = Number(line.discount_amount ?? 0);
    const fee = Number(line.fee_amount ?? 0);
    if (line.discount_rate !== undefined) {
      near(discount, (gross * Number(line.discount_rate)) / 100, 0.011, "discount = gross × rate");
    }
    near(
      Number(line.line_extension_amount),
      gross - discount + fee,
      0.006,
      "line = qty × price − discount + fee",
    );
    sum += kobo(line.line_extension_amount);
  }
  const totals = doc.legal_monetary_total as Json;
  const taxTotal = (doc.tax_total as Json[])[0] as Json;
  const subtotal = (taxTotal.tax_subtotal as Json[])[0] as Json;
  assert.equal(kobo(totals.line_extension_amount), sum, "the lines add up");
  assert.equal(kobo(totals.tax_exclusive_amount), sum);
  assert.equal(kobo(subtotal.taxable_amount), sum);
  assert.deepEqual(subtotal.tax_category, { id: "STANDARD_VAT", percent: 7.5 });
  near(kobo(subtotal.tax_amount), sum * 0.075, 0.5, "VAT is 7.5% of the taxable amount (in kobo)");
  assert.equal(kobo(taxTotal.tax_amount), kobo(subtotal.tax_amount));
  assert.equal(
    kobo(totals.tax_inclusive_amount),
    sum + kobo(subtotal.tax_amount),
    "inclusive = exclusive + tax",
  );
  return { payable: kobo(totals.payable_amount), inclusive: kobo(totals.tax_inclusive_amount) };
}

/** What every generated invoice shows: a foreign seller, one of ours as buyer, a well-formed IRN. */
function checkInvoice(sim: MbsSimulator, doc: Json, buyer: MbsTaxpayer): void {
  const m = IRN.exec(String(doc.irn));
  assert.ok(m, `IRN ${doc.irn}`);
  assert.equal(m[3], String(doc.issue_date).replaceAll("-", ""), "the IRN's date is the issue date");
  assert.ok(!sim.taxpayers.some((t) => t.service_id === m[2]), "another APP's seller's service id");
  assert.match(String(doc.business_id), UUID);
  assert.ok(!sim.taxpayers.some((t) => t.business_id === doc.business_id));
  const supplier = doc.accounting_supplier_party as Json;
  const customer = doc.accounting_customer_party as Json;
  assert.match(String(supplier.tin), TIN);
  assert.ok(!sim.taxpayers.some((t) => t.tin === supplier.tin), "the seller is none of ours");
  assert.ok(String(supplier.party_name).length > 0);
  assert.equal((supplier.postal_address as Json).country, "NG");
  assert.deepEqual([customer.tin, customer.party_name], [buyer.tin, buyer.name]);
  assert.ok(["381", "396", "380"].includes(String(doc.invoice_type_code)));
  if (doc.invoice_type_code === "380") assert.equal((doc.billing_reference as Json[]).length, 1);
  assert.ok(String(doc.due_date) >= String(doc.issue_date));
  assert.equal(doc.tax_currency_code, "NGN");
  assert.ok(["NGN", "USD"].includes(String(doc.document_currency_code)));
}

/** MBS's own checks (validate) pass on the document, once it is re-addressed to one of our businesses. */
async function passesValidate(sim: MbsSimulator, doc: Json): Promise<void> {
  const tp = first(sim);
  const copy = structuredClone(doc);
  copy.business_id = tp.business_id;
  copy.irn = String(doc.irn).replace(IRN, `$1-${tp.service_id}-$3`);
  data(await call(sim, "POST", "/api/v1/invoice/validate", { body: copy }));
}

const byTin = (sim: MbsSimulator, tin: unknown) => {
  const taxpayer = sim.taxpayers.find((t) => t.tin === tin);
  assert.ok(taxpayer, `a taxpayer's TIN: ${tin}`);
  return taxpayer;
};

test("seeding n: n invoices from other APPs' sellers wait in pull for their buyers, over the last 3 days, and add up", async (t) => {
  const sim = await simulator(t, { inbound: 12, seed: 5 });
  assert.equal(sim.inbound.length, 12);
  const irns = sim.inbound.map((s) => s.irn);
  assert.equal(new Set(irns).size, 12);
  assert.deepEqual(
    new Set(sim.inbound.map((s) => s.buyer_tin)),
    new Set(sim.taxpayers.map((t) => t.tin)),
    "spread over every taxpayer",
  );
  const days = [today(), dayBefore(1), dayBefore(2)];
  for (const s of sim.inbound) {
    assert.ok(days.includes(s.transmitted_at.slice(0, 10)), s.transmitted_at);
    assert.ok(Date.parse(s.transmitted_at) <= Date.now());
  }
  assert.equal(
    new Set(sim.inbound.map((s) => s.transmitted_at.slice(0, 10))).size,
    3,
    "today and 2 days before",
  );

  const all = await pull(sim, "?confirmed=false");
  assert.deepEqual(all.map((r) => r.irn).sort(), [...irns].sort());
  // One day at a time, as a connector pulls: each on the day it was transmitted.
  const perDay = new Map<string, string[]>();
  for (const day of days) {
    perDay.set(
      day,
      (await pull(sim, `?confirmed=false&from=${day}&to=${day}`)).map((r) => String(r.irn)),
    );
  }
  for (const s of sim.inbound) assert.ok(perDay.get(s.transmitted_at.slice(0, 10))?.includes(s.irn), s.irn);
  assert.equal([...perDay.values()].flat().length, 12);

  for (const record of all) {
    const summary = sim.inbound.find((s) => s.irn === record.irn);
    assert.ok(summary);
    assert.deepEqual(
      [record.status, record.transmitted, record.delivered, record.delivered_at],
      ["TRANSMITTED", true, false, null],
    );
    assert.deepEqual(
      [record.business_id, record.supplier_tin, record.customer_tin, record.transmitted_at],
      [summary.business_id, summary.supplier_tin, summary.buyer_tin, summary.transmitted_at],
    );
    const doc = record.document as Json;
    checkInvoice(sim, doc, byTin(sim, record.customer_tin));
    const { payable, inclusive } = checkArithmetic(doc);
    assert.equal(payable, inclusive, "payable = tax inclusive");
    assert.ok(String(doc.issue_date) <= String(record.transmitted_at).slice(0, 10), "issued before sent");
    await passesValidate(sim, doc);
    // MBS holds it: confirm and download answer for it.
    const confirmed = data(await call(sim, "GET", `/api/v1/invoice/confirm/${record.irn}`));
    assert.deepEqual([confirmed.transmitted, confirmed.delivered], [true, false]);
  }
  assert.deepEqual([...sim.registrations()], [], "no sign of ours registered them");
});

test("generated invoices vary as sellers' do and follow the seed", async (t) => {
  const sellers = foreignSellers(5, []);
  const buyer = { tin: "12345678-0001", name: "Lekki Homes Ltd", email: "a@lekki.example", sector: "Trade" };
  const at = "2026-03-10T12:00:00.000Z";
  const make = (seed: number, index: number) =>
    inboundInvoice(seed, index, { sellers: foreignSellers(seed, []), buyer, transmittedAt: at });
  assert.deepEqual(make(5, 3), make(5, 3), "same seed and index, same invoice");
  assert.notDeepEqual(make(5, 3).document, make(6, 3).document, "another seed, another invoice");

  const docs = Array.from({ length: 300 }, (_, i) =>
    inboundInvoice(5, i, { sellers, buyer, transmittedAt: at }),
  );
  const names = new Set(docs.map((d) => String((d.document.accounting_supplier_party as Json).party_name)));
  assert.ok(
    [...names].some((n) => n.normalize("NFD") !== n && /[\u0300-\u036f]/.test(n.normalize("NFD"))),
    "diacritics",
  );
  assert.ok(names.has("Ọ̀yọ́ Foods Ltd"));
  assert.ok(
    [...names].some((n) => n.includes("&")),
    "ampersands",
  );
  assert.ok(
    [...names].some((n) => n.length > 60),
    "long names",
  );
  const field = (name: string) => new Set(docs.map((d) => String(d.document[name])));
  assert.deepEqual(field("invoice_type_code"), new Set(["381", "396", "380"]));
  assert.deepEqual(field("document_currency_code"), new Set(["NGN", "USD"]));
  assert.deepEqual(field("tax_currency_code"), new Set(["NGN"]));
  const lines = docs.flatMap((d) => d.document.invoice_line as Json[]);
  const counts = new Set(docs.map((d) => (d.document.invoice_line as Json[]).length));
  assert.ok(counts.has(1) && [...counts].some((n) => n >= 15), `1 to 20 lines: ${[...counts]}`);
  assert.ok(Math.max(...counts) <= 20);
  assert.ok(
    lines.some((l) => l.discount_amount !== undefined) && lines.some((l) => l.discount_amount === undefined),
  );
  assert.ok(
    lines.some((l) => !Number.isInteger(l.invoiced_quantity)),
    "fractional quantities",
  );
  assert.ok(
    lines.some((l) => !Number.isInteger((l.price as Json).price_amount)),
    "prices with kobo",
  );
  assert.ok(
    lines.some((l) => l.isic_code !== undefined && l.service_category !== undefined),
    "service lines",
  );
  for (const d of docs) {
    assert.equal(d.irn, d.document.irn);
    assert.match(d.irn, IRN);
    const { payable, inclusive } = checkArithmetic(d.document);
    assert.equal(payable, inclusive);
  }
  assert.equal(new Set(docs.map((d) => d.irn)).size, 300);
  // The sellers: their own TINs and service ids, never a taxpayer's.
  const sim = await simulator(t, { seed: 5 });
  const ours = foreignSellers(5, sim.taxpayers);
  assert.equal(new Set(ours.map((s) => s.tin)).size, ours.length);
  for (const s of ours) {
    assert.match(s.tin, TIN);
    assert.match(s.service_id, /^[0-9A-F]{8}$/);
    assert.ok(!sim.taxpayers.some((tp) => tp.tin === s.tin || tp.service_id === s.service_id));
  }
});

test("injection while running: by count, by buyer, with a wrong total, at a given time; the same seed gives the same", async (t) => {
  const sim = await simulator(t, { seed: 8 });
  const [, second] = sim.taxpayers;
  assert.ok(second);
  assert.deepEqual(await pull(sim), [], "nothing at start by default");

  const spread = await inject(sim, { count: 4 });
  assert.equal(spread.length, 4);
  const waiting = await pull(sim, `?confirmed=false&from=${today()}&to=${today()}`);
  assert.deepEqual(
    waiting.map((r) => r.irn),
    spread,
  );
  assert.equal(new Set(waiting.map((r) => r.customer_tin)).size, 4, "one to each taxpayer");
  for (const r of waiting) {
    checkInvoice(sim, r.document as Json, byTin(sim, r.customer_tin));
    assert.ok(Date.now() - Date.parse(String(r.transmitted_at)) < 60_000, "transmitted now");
  }

  const toSecond = await inject(sim, { count: 3, buyer_tin: second.tin });
  const listed = (await pull(sim)).filter((r) => toSecond.includes(String(r.irn)));
  assert.equal(listed.length, 3);
  for (const r of listed) {
    assert.equal(r.customer_tin, second.tin);
    assert.equal(((r.document as Json).accounting_customer_party as Json).tin, second.tin);
  }

  const [wrong] = await inject(sim, { count: 1, wrong_total: true, buyer_tin: second.tin });
  const wrongDoc = (await pull(sim)).find((r) => r.irn === wrong)?.document as Json;
  const { payable, inclusive } = checkArithmetic(wrongDoc);
  assert.notEqual(payable, inclusive, "payable_amount differs from tax_inclusive_amount");
  assert.equal(payable - inclusive, WRONG_TOTAL_OFFSET * 100);

  const [dated] = await inject(sim, { count: 1, transmitted_at: "2026-01-15T10:00:00+01:00" });
  const onThatDay = await pull(sim, "?confirmed=false&from=2026-01-15&to=2026-01-15");
  assert.deepEqual(
    onThatDay.map((r) => r.irn),
    [dated],
  );
  assert.equal(onThatDay[0]?.transmitted_at, "2026-01-15T09:00:00.000Z");
  assert.ok(!(await pull(sim, `?from=${today()}&to=${today()}`)).some((r) => r.irn === dated));

  // In process, the same body.
  const direct = sim.injectInbound({ count: 2, buyer_tin: second.tin });
  assert.equal(direct.length, 2);
  assert.throws(() => sim.injectInbound({ count: 0 }), /count must be a whole number from 1 to 10000/);
  assert.equal((await pull(sim)).length, 4 + 3 + 1 + 1 + 2);

  // Two simulators of one seed, the same requests: the same invoices.
  const twins = await Promise.all([
    simulator(t, { seed: 8, taxpayers: 2 }),
    simulator(t, { seed: 8, taxpayers: 2 }),
  ]);
  const body = { count: 5, transmitted_at: "2026-02-01T08:00:00Z" };
  const [a, b] = await Promise.all(
    twins.map(async (s) => ({ irns: await inject(s, body), docs: (await pull(s)).map((r) => r.document) })),
  );
  assert.deepEqual(a, b);
});

test("a caller's document is delivered as it is, to the taxpayer its customer party names", async (t) => {
  const sim = await simulator(t);
  const [tp, other] = sim.taxpayers;
  assert.ok(tp && other);
  const doc = invoiceFor(
    { business_id: "7b0c7f52-95f4-4d0e-9d55-4c1b2f3e4a51", service_id: "ABCDEF12" },
    "ODD0001",
  );
  (doc.accounting_customer_party as Json).tin = tp.tin;
  (doc.accounting_supplier_party as Json).party_name =
    "Ìyá Àlàkẹ́ & Daughters Trading Enterprises Nigeria Limited";
  doc.surprise = { field: "kept" };
  const [irn] = await inject(sim, { document: doc, transmitted_at: "2026-11-16T07:00:00Z" });
  assert.equal(irn, doc.irn);
  const [record] = await pull(sim, "?from=2026-11-16&to=2026-11-16");
  assert.ok(record);
  assert.deepEqual(record.document, doc, "exactly as given");
  assert.deepEqual([record.customer_tin, record.business_id], [tp.tin, doc.business_id]);

  badInput(await call(sim, "POST", INBOUND, { body: { document: doc } }), /is registered already/);
  const copy = (change: (d: Json) => void) => {
    const d = structuredClone(doc);
    d.irn = "ODD0002-ABCDEF12-20261115";
    change(d);
    return { document: d };
  };
  badInput(
    await call(sim, "POST", INBOUND, {
      body: copy((d) => ((d.accounting_customer_party as Json).tin = "99999999-0001")),
    }),
    /customer_party\.tin must be the TIN of one of the simulator's taxpayers/,
  );
  badInput(
    await call(sim, "POST", INBOUND, { body: copy((d) => delete d.accounting_customer_party) }),
    /customer_party\.tin/,
  );
  badInput(
    await call(sim, "POST", INBOUND, { body: copy((d) => (d.irn = "odd-0002")) }),
    /document\.irn must be an IRN/,
  );
  badInput(
    await call(sim, "POST", INBOUND, { body: copy((d) => (d.irn = `ODD0002-${other.service_id}-20261115`)) }),
    /the simulator's taxpayers' own: sign and transmit it/,
  );
  badInput(await call(sim, "POST", INBOUND, { body: { document: [doc] } }), /document must be a JSON object/);
  assert.deepEqual([...(await states(sim)).keys()], [irn], "the refused ones registered nothing");
});

test("bounds and bad input are answered 400 in the simulator's error envelope; no credential, the credential answer", async (t) => {
  const sim = await simulator(t, { taxpayers: 1 });
  const post = (body: unknown) => call(sim, "POST", INBOUND, { body });
  assert.equal(MAX_INBOUND, 10_000);
  for (const count of [0, -1, 10_001, 1.5, "3", null]) {
    badInput(await post({ count }), /count must be a whole number from 1 to 10000/);
  }
  badInput(await post({}), /count must be a whole number/);
  badInput(
    await post({ count: 1, buyer_tin: "99999999-0001" }),
    /buyer_tin must be the TIN of one of the simulator's taxpayers/,
  );
  badInput(await post({ count: 1, buyer_tin: 12 }), /buyer_tin/);
  badInput(await post({ count: 1, wrong_total: "yes" }), /wrong_total must be true or false/);
  for (const at of [
    "yesterday",
    "2026-11-15",
    "2026-02-30T10:00:00Z",
    "2026-11-15T10:00:00",
    1_700_000_000,
  ]) {
    badInput(await post({ count: 1, transmitted_at: at }), /transmitted_at must be an ISO 8601 timestamp/);
  }
  badInput(await post({ count: 1, wrongtotal: true }), /unknown field wrongtotal/);
  badInput(await post({ document: {}, count: 1 }), /unknown field count/);
  badInput(await post([1, 2]), /the body must be a JSON object/);
  const raw = await call(sim, "POST", INBOUND, { raw: "{not json" });
  const error = failure(raw, 400, /validation failed/);
  assert.equal(error.handler, "simulator");
  const denied = failure(
    await call(sim, "POST", INBOUND, { body: { count: 1 }, auth: false }),
    400,
    BAD_CREDENTIAL,
  );
  assert.equal(denied.handler, "handler");
  failure(await call(sim, "GET", INBOUND, { auth: false }), 400, BAD_CREDENTIAL);
  assert.equal((await states(sim)).size, 0, "nothing was injected");
  assert.equal((await inject(sim, { count: 1 })).length, 1, "the smallest count is taken");
});

test("the acknowledgement takes an invoice out of confirmed=false, and every PATCH is counted", async (t) => {
  const sim = await simulator(t);
  const tp = first(sim);
  const [one, two] = await inject(sim, { count: 2, buyer_tin: tp.tin });
  assert.ok(one && two);
  const waiting = async () =>
    (await pull(sim, `?confirmed=false&from=${today()}&to=${today()}`)).map((r) => r.irn);
  assert.deepEqual(await waiting(), [one, two]);

  const first_ = data(await acknowledge(sim, one));
  assert.equal(first_.status, "ACKNOWLEDGED");
  assert.deepEqual(await waiting(), [two], "acknowledged: no longer waiting");
  assert.deepEqual(
    (await pull(sim, "?confirmed=true")).map((r) => r.irn),
    [one],
  );
  const [acked] = await pull(sim, "?confirmed=true");
  assert.deepEqual([acked?.delivered, acked?.delivered_at], [true, first_.acknowledged_at]);

  // Repeats (a client's retry): harmless, and counted.
  assert.deepEqual(data(await acknowledge(sim, one)), first_);
  data(await call(sim, "PATCH", `/api/v1/invoice/transmit/${one}`));
  // A refused PATCH is no acknowledgement.
  failure(
    await call(sim, "PATCH", `/api/v1/invoice/transmit/${two}`, { body: { message: "RECEIVED" } }),
    400,
    /validation failed/,
  );
  const state = await states(sim);
  assert.deepEqual(
    [state.get(one)?.acknowledged, state.get(one)?.acknowledged_at, state.get(one)?.acknowledgements],
    [true, first_.acknowledged_at, 3],
  );
  assert.deepEqual(
    [state.get(two)?.acknowledged, state.get(two)?.acknowledged_at, state.get(two)?.acknowledgements],
    [false, null, 0],
  );
  assert.equal(state.get(one)?.buyer_tin, tp.tin);
  assert.deepEqual([...sim.acknowledgements()], [[one, 3]]);
  assert.equal((sim.invoice(one) as Json).entry_status, "ACKNOWLEDGED");
});

test("pull's other answer shapes (the pull_shape rule): a bare list of documents, or {items}", async (t) => {
  const sim = await simulator(t, { rules: "pull_shape=documents" });
  const [irn] = await inject(sim, { count: 1 });
  const documents = await pull(sim);
  assert.equal(documents.length, 1);
  assert.equal(documents[0]?.irn, irn);
  assert.ok(documents[0]?.invoice_line, "the document itself");
  assert.equal(documents[0]?.document, undefined);
  assert.equal(documents[0]?.transmitted, undefined);

  sim.setRules({ pull_shape: "items" });
  const items = data(await call(sim, "GET", PULL)) as { items: Json[] };
  assert.deepEqual(Object.keys(items), ["items"]);
  assert.equal(items.items[0]?.irn, irn);
  assert.deepEqual(items.items[0]?.document, documents[0]);

  sim.setRules({ pull_shape: "list" });
  const list = await pull(sim);
  assert.ok(Array.isArray(list));
  assert.deepEqual(list[0]?.document, documents[0]);
  assert.equal(list[0]?.transmitted, true);

  assert.deepEqual(parseRules("pull_shape=items"), { pull_shape: "items" });
  assert.throws(
    () => parseRules("pull_shape=flat"),
    /"pull_shape=flat": pull_shape is list, documents, items/,
  );
  assert.throws(
    () => sim.setRules({ pull_shape: "flat" as "list" }),
    /invalid rule pull_shape: list, documents, items/,
  );
});

test("faults reach pull and the acknowledgement; a dropped acknowledgement took effect, so the retry is a repeat", async (t) => {
  const sim = await simulator(t, { faults: "slow_ms=150" });
  const tp = first(sim);
  const [irn, other] = await inject(sim, { count: 2, buyer_tin: tp.tin });
  assert.ok(irn && other);
  const forced = (fault: string) => ({ headers: { [FAULT_HEADER]: fault } });

  const transient = await call(sim, "GET", PULL, forced("transient"));
  assert.ok([408, 429, 500, 502, 503, 504].includes(transient.status), JSON.stringify(transient));
  failure(transient, transient.status, SERVER_ERRORS[transient.status as 503]);
  const five = await call(sim, "GET", PULL, forced("5xx"));
  assert.ok([500, 502, 503].includes(five.status));
  failure(await call(sim, "GET", PULL, forced("down")), 503, SERVER_ERRORS[503]);
  failure(await call(sim, "GET", PULL, forced("credential")), 400, BAD_CREDENTIAL);
  await assert.rejects(call(sim, "GET", PULL, forced("drop")), TypeError);
  assert.equal((await pull(sim)).length, 2, "unforced, pull answers");
  const slowStart = Date.now();
  assert.equal((await call(sim, "GET", PULL, forced("slow"))).status, 200);
  assert.ok(Date.now() - slowStart >= 140, "answered after slow_ms");
  failure(await call(sim, "GET", PULL, forced("partial")), 400, "unknown simulator fault");

  // The acknowledgement: a transient answer has no effect; a drop loses the answer, not the effect.
  const refusedAck = await acknowledge(sim, irn, forced("5xx"));
  assert.ok([500, 502, 503].includes(refusedAck.status), JSON.stringify(refusedAck));
  failure(refusedAck, refusedAck.status, SERVER_ERRORS[refusedAck.status as 500]);
  assert.equal((await states(sim)).get(irn)?.acknowledgements, 0, "a 5xx acknowledged nothing");
  await assert.rejects(acknowledge(sim, irn, forced("drop")), TypeError, "the answer is lost");
  let state = (await states(sim)).get(irn);
  assert.deepEqual([state?.acknowledged, state?.acknowledgements], [true, 1], "the acknowledgement stands");
  assert.ok(!(await pull(sim, "?confirmed=false")).some((r) => r.irn === irn));
  data(await acknowledge(sim, irn));
  state = (await states(sim)).get(irn);
  assert.equal(state?.acknowledgements, 2, "the client's retry is a repeat");
  assert.deepEqual(sim.faultCounts(), { transient: 1, "5xx": 2, down: 1, credential: 1, drop: 2, slow: 1 });
});

test("fault rates and downtime reach pull and the acknowledgement, never the simulator's own routes", async (t) => {
  const sim = await simulator(t, { faults: "5xx=1" });
  const [irn] = await inject(sim, { count: 1 });
  assert.ok(irn);
  assert.ok((await call(sim, "GET", PULL)).status >= 500);
  assert.ok((await acknowledge(sim, irn)).status >= 500);
  assert.equal((await states(sim)).get(irn)?.acknowledged, false);
  sim.setFaults("down=0-60");
  failure(await call(sim, "GET", PULL), 503, SERVER_ERRORS[503]);
  failure(await acknowledge(sim, irn), 503, SERVER_ERRORS[503]);
  assert.equal((await inject(sim, { count: 1 })).length, 1, "injection works while MBS is down");
  sim.setFaults("");
  assert.equal((await pull(sim)).length, 2);
});

test("an invoice number starting ACKDROP loses the first acknowledgement's answer (no header needed)", async (t) => {
  const sim = await simulator(t, { faults: "slow_ms=100" });
  const tp = first(sim);
  const doc = invoiceFor(
    { business_id: "0e5d3c1a-2b4f-4a6e-8c7d-9f1e2d3c4b5a", service_id: "0A1B2C3D" },
    "ACKDROP001",
  );
  (doc.accounting_customer_party as Json).tin = tp.tin;
  const slow = structuredClone(doc);
  slow.irn = String(doc.irn).replace("ACKDROP001", "ACKSLOW001");
  const [irn] = await inject(sim, { document: doc });
  const [slowIrn] = await inject(sim, { document: slow });
  assert.ok(irn && slowIrn);
  await assert.rejects(acknowledge(sim, irn), TypeError, "the first answer is lost");
  data(await acknowledge(sim, irn));
  assert.deepEqual([...sim.acknowledgements()], [[irn, 2]]);
  const started = Date.now();
  data(await acknowledge(sim, slowIrn));
  assert.ok(Date.now() - started >= 90);
  assert.deepEqual(sim.faultCounts(), { drop: 1, slow: 1 });
});
