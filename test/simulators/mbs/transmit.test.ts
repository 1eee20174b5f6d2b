import assert from "node:assert/strict";
import { test } from "node:test";
import { INVOICE_NOT_FOUND, NOT_TRANSMITTED } from "../../../src/simulators/mbs/envelopes.ts";
import type { Json } from "../../helpers.ts";
import { call, data, failure, first, invoiceFor, refused, signed, simulator } from "./harness.ts";

test("transmit needs a signed invoice, marks it transmitted, and answers a repeat the same", async (t) => {
  const sim = await simulator(t);
  const doc = invoiceFor(first(sim));
  const irn = String(doc.irn);
  const before = failure(await call(sim, "POST", `/api/v1/invoice/transmit/${irn}`), 404, INVOICE_NOT_FOUND);
  assert.equal(before.handler, "transmit_invoice");
  await signed(sim, doc);
  const lookup = () => call(sim, "GET", `/api/v1/invoice/transmit/lookup/${irn}`);
  assert.equal(data(await lookup()).status, "SIGNED");

  const sent = data(await call(sim, "POST", `/api/v1/invoice/transmit/${irn}`));
  assert.equal(sent.irn, irn);
  assert.equal(sent.status, "TRANSMITTED");
  const again = data(await call(sim, "POST", `/api/v1/invoice/transmit/${irn}`));
  assert.deepEqual(again, sent, "a repeat answers the first delivery");
  const state = data(await lookup());
  assert.equal(state.status, "TRANSMITTED");
  assert.equal(state.transmitted, true);
  assert.equal(state.transmitted_at, sent.transmitted_at);
  assert.equal(state.supplier_tin, "20198222-0002");
  assert.equal(state.customer_tin, "31845560-0001");
  assert.equal((sim.invoice(irn) as Json).transmitted, true);
  failure(
    await call(sim, "GET", `/api/v1/invoice/transmit/lookup/INV9-${first(sim).service_id}-20261115`),
    404,
    INVOICE_NOT_FOUND,
  );
});

test("the receiver acknowledges a transmitted invoice with ACKNOWLEDGED only", async (t) => {
  const sim = await simulator(t);
  const irn = await signed(sim, invoiceFor(first(sim)));
  const ack = (body: unknown, target = irn) =>
    call(sim, "PATCH", `/api/v1/invoice/transmit/${target}`, { body });
  failure(await ack({ message: "ACKNOWLEDGED" }), 400, NOT_TRANSMITTED);
  data(await call(sim, "POST", `/api/v1/invoice/transmit/${irn}`));
  refused(await ack({ message: "RECEIVED" }), "transmitrequest.message must be ACKNOWLEDGED");
  refused(await ack({}), "transmitrequest.message is required");
  failure(
    await ack({ message: "ACKNOWLEDGED" }, `INV9-${first(sim).service_id}-20261115`),
    404,
    INVOICE_NOT_FOUND,
  );
  const done = data(await ack({ message: "ACKNOWLEDGED" }));
  assert.equal(done.status, "ACKNOWLEDGED");
  assert.deepEqual(data(await ack({ message: "ACKNOWLEDGED" })), done, "a repeat is harmless");
  const record = sim.invoice(irn) as Json;
  assert.equal(record.acknowledged, true);
  assert.equal(record.entry_status, "ACKNOWLEDGED");
  assert.equal(data(await call(sim, "GET", `/api/v1/invoice/confirm/${irn}`)).acknowledged, true);
});

test("lookups by TIN and by party list the invoices exchanged with them", async (t) => {
  const sim = await simulator(t);
  const tp = first(sim);
  const party = data(
    await call(sim, "POST", "/api/v1/invoice/party", {
      body: {
        business_id: tp.business_id,
        party_name: "Kano Grains",
        tin: "55555555-0001",
        email: "b@kano.example",
      },
    }),
    201,
  );
  const byTin = invoiceFor(tp, "INV0001");
  const byParty = invoiceFor(tp, "INV0002");
  byParty.accounting_customer_party = { id: party.id };
  const notSent = invoiceFor(tp, "INV0003");
  for (const doc of [byTin, byParty, notSent]) await signed(sim, doc);
  for (const doc of [byTin, byParty]) data(await call(sim, "POST", `/api/v1/invoice/transmit/${doc.irn}`));

  const irns = (reply: Json) => (reply as unknown as Json[]).map((r) => r.irn);
  assert.deepEqual(irns(data(await call(sim, "GET", "/api/v1/invoice/transmit/lookup/tin/31845560-0001"))), [
    byTin.irn,
  ]);
  assert.deepEqual(irns(data(await call(sim, "GET", "/api/v1/invoice/transmit/lookup/tin/20198222-0002"))), [
    byTin.irn,
    byParty.irn,
  ]);
  assert.deepEqual(
    irns(data(await call(sim, "GET", "/api/v1/invoice/transmit/lookup/tin/99999999-0001"))),
    [],
  );
  assert.deepEqual(irns(data(await call(sim, "GET", `/api/v1/invoice/transmit/lookup/party/${party.id}`))), [
    byParty.irn,
  ]);
  failure(
    await call(sim, "GET", "/api/v1/invoice/transmit/lookup/party/no-such-party"),
    404,
    "party not found",
  );
});

test("pull lists what was delivered to a taxpayer and not yet acknowledged; self-health-check answers", async (t) => {
  const sim = await simulator(t);
  const [seller, buyer] = sim.taxpayers;
  assert.ok(seller && buyer);
  const doc = invoiceFor(seller);
  (doc.accounting_customer_party as Json).tin = buyer.tin;
  const other = invoiceFor(seller, "INV0002");
  for (const d of [doc, other]) await signed(sim, d);
  const pull = async () => data(await call(sim, "GET", "/api/v1/invoice/transmit/pull")) as unknown as Json[];
  assert.deepEqual(await pull(), [], "nothing delivered yet");
  for (const d of [doc, other]) data(await call(sim, "POST", `/api/v1/invoice/transmit/${d.irn}`));
  const waiting = await pull();
  assert.deepEqual(
    waiting.map((w) => w.irn),
    [doc.irn],
    "only the invoice whose buyer is one of ours",
  );
  assert.deepEqual(waiting[0]?.document, doc);
  data(
    await call(sim, "PATCH", `/api/v1/invoice/transmit/${doc.irn}`, { body: { message: "ACKNOWLEDGED" } }),
  );
  assert.deepEqual(await pull(), []);

  const health = data(await call(sim, "GET", "/api/v1/invoice/transmit/self-health-check"));
  assert.equal(health.healthy, true);
});
