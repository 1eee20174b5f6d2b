import assert from "node:assert/strict";
import http from "node:http";
import { test } from "node:test";
import { INVOICE_NOT_FOUND, NOT_TRANSMITTED } from "../../../src/simulators/mbs/envelopes.ts";
import type { Json } from "../../helpers.ts";
import { call, data, failure, first, invoiceFor, refused, signed, simulator } from "./harness.ts";

test("transmit needs a signed invoice, marks it transmitted, and answers a repeat the same", async (t) => {
  const sim = await simulator(t);
  const doc = invoiceFor(first(sim));
  const irn = String(doc.irn);
  const before = failure(await call(sim, "POST", `/api/v1/invoice/transmit/${irn}`), 404, INVOICE_NOT_FOUND);
  assert.equal(before.handler, "invoice_actions");
  await signed(sim, doc);
  const lookup = () => call(sim, "GET", `/api/v1/invoice/transmit/lookup/${irn}`);
  assert.equal(data(await lookup()).status, "SIGNED");

  const sent = data(await call(sim, "POST", `/api/v1/invoice/transmit/${irn}`));
  assert.equal(sent.ok, true);
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

test("the receiver acknowledges a transmitted invoice with no body or with ACKNOWLEDGED", async (t) => {
  const sim = await simulator(t);
  const tp = first(sim);
  const irn = await signed(sim, invoiceFor(tp));
  const other = await signed(sim, invoiceFor(tp, "INV0002"));
  const ack = (target: string, body?: unknown) =>
    call(sim, "PATCH", `/api/v1/invoice/transmit/${target}`, body === undefined ? {} : { body });
  failure(await ack(irn, { message: "ACKNOWLEDGED" }), 400, NOT_TRANSMITTED);
  for (const target of [irn, other]) data(await call(sim, "POST", `/api/v1/invoice/transmit/${target}`));
  refused(await ack(irn, { message: "RECEIVED" }), "transmitrequest.message must be one of [ACKNOWLEDGED]");
  refused(await ack(irn, [1]), "transmitrequest must be a JSON object");
  failure(await ack(`INV9-${tp.service_id}-20261115`, { message: "ACKNOWLEDGED" }), 404, INVOICE_NOT_FOUND);
  // [doc] the Swagger example: no body; [client] integrators: {"message": "ACKNOWLEDGED"}.
  const done = data(await ack(irn));
  assert.equal(done.status, "ACKNOWLEDGED");
  assert.deepEqual(data(await ack(irn, { message: "ACKNOWLEDGED" })), done, "a repeat is harmless");
  assert.equal(data(await ack(other, { message: "ACKNOWLEDGED" })).status, "ACKNOWLEDGED");
  assert.equal(data(await ack(other, {})).status, "ACKNOWLEDGED", "an empty object is no message either");
  const record = sim.invoice(irn) as Json;
  assert.equal(record.acknowledged, true);
  assert.equal(record.entry_status, "ACKNOWLEDGED");
  const state = data(await call(sim, "GET", `/api/v1/invoice/confirm/${irn}`));
  assert.deepEqual([state.transmitted, state.delivered], [true, true]);
});

/** One PATCH written by hand, so the test controls exactly the headers and bytes of an empty body. */
function rawPatch(
  sim: { url: string; api_key: string; api_secret: string },
  url: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: Json }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${sim.url}${url}`, {
      method: "PATCH",
      headers: { "x-api-key": sim.api_key, "x-api-secret": sim.api_secret, ...headers },
    });
    req.on("response", (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Json }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

test("[doc] the acknowledgement's empty body in every form a client sends it; [client] ACKNOWLEDGED still taken", async (t) => {
  const sim = await simulator(t);
  const tp = first(sim);
  // The Swagger example sends none; clients send no bytes with or without a JSON content type, a
  // zero length, a chunked nothing, blanks, an empty object or `null` (a Go client's nil body).
  const forms: [string, Record<string, string>, string | undefined][] = [
    ["no body, no content type", {}, undefined],
    ["no body, a JSON content type", { "content-type": "application/json" }, undefined],
    ["length 0, a JSON content type", { "content-type": "application/json", "content-length": "0" }, ""],
    ["chunked, no chunk", { "content-type": "application/json", "transfer-encoding": "chunked" }, ""],
    ["blanks", { "content-type": "application/json; charset=utf-8" }, " \n"],
    ["an empty JSON object", { "content-type": "application/json" }, "{}"],
    ["null", { "content-type": "application/json" }, "null"],
    ["ACKNOWLEDGED", { "content-type": "application/json" }, '{"message":"ACKNOWLEDGED"}'],
  ];
  for (const [i, [form, headers, body]] of forms.entries()) {
    const irn = await signed(sim, invoiceFor(tp, `INVE${i}`));
    data(await call(sim, "POST", `/api/v1/invoice/transmit/${irn}`));
    const reply = await rawPatch(sim, `/api/v1/invoice/transmit/${irn}`, headers, body);
    assert.equal(reply.status, 200, `${form}: ${JSON.stringify(reply.body)}`);
    assert.equal(data(reply).status, "ACKNOWLEDGED", form);
    assert.equal((sim.invoice(irn) as Json).acknowledged, true, form);
    assert.equal(sim.acknowledgements().get(irn), 1, form);
  }
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

test("pull lists what was delivered to a taxpayer: waiting, or confirmed=true for the acknowledged; from/to dates", async (t) => {
  const sim = await simulator(t);
  const [seller, buyer] = sim.taxpayers;
  assert.ok(seller && buyer);
  const doc = invoiceFor(seller);
  (doc.accounting_customer_party as Json).tin = buyer.tin;
  const other = invoiceFor(seller, "INV0002");
  for (const d of [doc, other]) await signed(sim, d);
  const pull = async (query = "") =>
    (data(await call(sim, "GET", `/api/v1/invoice/transmit/pull${query}`)) as unknown as Json[]).map(
      (w) => w.irn,
    );
  assert.deepEqual(await pull(), [], "nothing delivered yet");
  for (const d of [doc, other]) data(await call(sim, "POST", `/api/v1/invoice/transmit/${d.irn}`));
  const waiting = data(await call(sim, "GET", "/api/v1/invoice/transmit/pull")) as unknown as Json[];
  assert.deepEqual(
    waiting.map((w) => w.irn),
    [doc.irn],
    "only the invoice whose buyer is one of ours",
  );
  assert.deepEqual(waiting[0]?.document, doc);
  const today = new Date().toISOString().slice(0, 10);
  assert.deepEqual(await pull(`?confirmed=false&from=${today}&to=${today}`), [doc.irn]);
  assert.deepEqual(await pull("?to=2000-01-01"), [], "transmitted after `to`");
  assert.deepEqual(await pull("?from=2999-01-01"), [], "transmitted before `from`");
  assert.deepEqual(await pull("?confirmed=true"), []);
  data(
    await call(sim, "PATCH", `/api/v1/invoice/transmit/${doc.irn}`, { body: { message: "ACKNOWLEDGED" } }),
  );
  assert.deepEqual(await pull(), []);
  assert.deepEqual(await pull("?confirmed=true"), [doc.irn]);
  refused(
    await call(sim, "GET", "/api/v1/invoice/transmit/pull?confirmed=yes"),
    "confirmed must be true or false",
  );
  refused(
    await call(sim, "GET", "/api/v1/invoice/transmit/pull?from=2026-13-01"),
    "from must be a valid date value yyyy-mm-dd (e.g: 2024-04-29)",
  );

  const health = data(await call(sim, "GET", "/api/v1/invoice/transmit/self-health-check"));
  assert.equal(health.healthy, true);
});
