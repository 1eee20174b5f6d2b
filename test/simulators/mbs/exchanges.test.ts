import assert from "node:assert/strict";
import { test } from "node:test";
import { taxpayerLogin } from "../../../src/simulators/mbs/server.ts";
import { classify } from "../../../src/transmission/authority/mbs-answers.ts";
import type { Json } from "../../helpers.ts";
import { type Ctx, list, REGISTER_ROWS, type Row, success } from "./exchanges-rows.ts";
import { call, invoiceFor, type Reply, simulator } from "./harness.ts";

// Every exchange of the MBS spec's endpoint table (section 2) and envelopes (section 4), in the order
// of an invoice's life: one row per exchange with its evidence mark, the request, the status and what
// the body must be. Rows run in order on one simulator and may keep what they learn (a party's id).
// The rows up to the registration are in exchanges-rows.ts; delivery, payment and VAT are here.

/** From the registered invoice to its delivery, payment and VAT report. */
const DELIVERY_ROWS: Row[] = [
  {
    name: "transmit: POST with an empty body",
    mark: "[doc]",
    method: "POST",
    url: (c) => `/api/v1/invoice/transmit/${c.irn}`,
    status: 200,
    expect: success((d) => assert.equal(d.ok, true, "[client] an APP's transmit answer carries data.ok")),
  },
  {
    name: "transmit of the second invoice",
    mark: "[doc]",
    method: "POST",
    url: (c) => `/api/v1/invoice/transmit/${c.irn2}`,
    status: 200,
    expect: success(),
  },
  {
    name: "transmit lookup by IRN",
    mark: "[doc]",
    method: "GET",
    url: (c) => `/api/v1/invoice/transmit/lookup/${c.irn}`,
    status: 200,
    expect: success((d) => assert.equal(d.transmitted, true)),
  },
  {
    name: "transmit lookup by TIN",
    mark: "[doc]",
    method: "GET",
    url: () => "/api/v1/invoice/transmit/lookup/tin/31845560-0001",
    status: 200,
    expect: success((d, c) =>
      assert.deepEqual(
        list(d).map((x) => x.irn),
        [c.irn],
      ),
    ),
  },
  {
    name: "transmit lookup by party",
    mark: "[doc]",
    method: "GET",
    url: (c) => `/api/v1/invoice/transmit/lookup/party/${c.party}`,
    status: 200,
    expect: success((d, c) =>
      assert.deepEqual(
        list(d).map((x) => x.irn),
        [c.irn],
      ),
    ),
  },
  {
    name: "pull: what waits for this APP as receiver",
    mark: "[doc]",
    method: "GET",
    url: () => "/api/v1/invoice/transmit/pull?confirmed=false&from=2020-01-01&to=2099-12-31",
    status: 200,
    expect: success((d, c) =>
      assert.deepEqual(
        list(d).map((x) => x.irn),
        [c.irn2],
      ),
    ),
  },
  {
    name: "the receiver acknowledges with no body (the Swagger example)",
    mark: "[doc]",
    method: "PATCH",
    url: (c) => `/api/v1/invoice/transmit/${c.irn}`,
    status: 200,
    expect: success(),
  },
  {
    name: "the receiver acknowledges with {message: ACKNOWLEDGED} (integrators)",
    mark: "[client]",
    method: "PATCH",
    url: (c) => `/api/v1/invoice/transmit/${c.irn2}`,
    body: () => ({ message: "ACKNOWLEDGED" }),
    status: 200,
    expect: success(),
  },
  {
    name: "pull with confirmed=true: the acknowledged ones",
    mark: "[doc]",
    method: "GET",
    url: () => "/api/v1/invoice/transmit/pull?confirmed=true",
    status: 200,
    expect: success((d, c) =>
      assert.deepEqual(
        list(d).map((x) => x.irn),
        [c.irn2],
      ),
    ),
  },
  {
    name: "confirm after delivery: transmitted and delivered",
    mark: "[client]",
    method: "GET",
    url: (c) => `/api/v1/invoice/confirm/${c.irn2}`,
    status: 200,
    expect: success((d) => assert.deepEqual([d.transmitted, d.delivered], [true, true])),
  },
  {
    name: "self-health-check",
    mark: "[doc]",
    method: "GET",
    url: () => "/api/v1/invoice/transmit/self-health-check",
    status: 200,
    expect: success(),
  },
  {
    name: "update: PAID with a reference",
    mark: "[doc]",
    method: "PATCH",
    url: (c) => `/api/v1/invoice/update/${c.irn}`,
    body: () => ({ payment_status: "PAID", reference: "RCPT-1" }),
    status: 200,
    expect: success((d) => assert.equal(d.payment_status, "PAID")),
  },
  {
    name: "update: PARTIAL with amount and payment_update_date",
    mark: "[client]",
    method: "PATCH",
    url: (c) => `/api/v1/invoice/update/${c.irn2}`,
    body: () => ({ payment_status: "PARTIAL", amount: 1000, payment_update_date: "2026-11-20" }),
    status: 200,
    expect: success((d) => assert.equal(d.payment_status, "PARTIAL")),
  },
  {
    name: "update of an IRN not registered: only signed invoices",
    mark: "[client]",
    method: "PATCH",
    url: (c) => `/api/v1/invoice/update/INV9-${c.service}-20261115`,
    body: () => ({ payment_status: "PAID" }),
    status: 404,
    expect: (body) => assert.equal((body.error as Json).public_message, "invoice not found"),
  },
  {
    name: "VAT report, the integrators' form",
    mark: "[client]",
    method: "POST",
    url: () => "/api/v1/vat/postpayment",
    body: (c) => ({ ...VAT_REPORT, irn: c.irn, integrator_service_id: c.service }),
    status: 200,
    expect: success((d, c) => assert.equal(d.irn, c.irn)),
  },
  {
    name: "VAT report, the documented path: no route",
    mark: "[recorded]",
    method: "POST",
    url: () => "/v1/vat/postPayment",
    body: () => ({ agentTin: "20198222-0002" }),
    status: 404,
    expect: (body) =>
      assert.deepEqual(body, {
        code: 404,
        data: null,
        message: "no route found for this path. kindly check your request and try again",
      }),
  },
];

const VAT_REPORT = {
  agent_tin: "20198222-0002",
  beneficiary_tin: "31845560-0001",
  currency: "NGN",
  base_amount: "645000.00",
  vat_rate: "7.5",
  vat_calculated: "48375.00",
  other_taxes: "0.00",
  total_amount: "693375.00",
  transaction_date: "2026-11-15",
  item_description: "Portland cement and rebar, PO-7781",
  vat_status: "STANDARD_VAT",
};

test("every documented or recorded exchange, in an invoice's order", async (t) => {
  const sim = await simulator(t);
  const [tp, buyer] = sim.taxpayers;
  assert.ok(tp && buyer);
  const doc = invoiceFor(tp);
  const doc2 = invoiceFor(tp, "INV0002");
  (doc2.accounting_customer_party as Json).tin = buyer.tin;
  const c: Ctx = {
    entity: tp.entity_id,
    business: tp.business_id,
    service: tp.service_id,
    tin: tp.tin,
    buyerTin: buyer.tin,
    irn: String(doc.irn),
    irn2: String(doc2.irn),
    doc,
    doc2,
    login: taxpayerLogin(tp),
  };
  for (const row of [...REGISTER_ROWS, ...DELIVERY_ROWS]) {
    await t.test(`${row.mark} ${row.method} ${row.name}`, async () => {
      const body = row.body?.(c);
      const reply: Reply = await call(sim, row.method, row.url(c), body === undefined ? {} : { body });
      assert.equal(reply.status, row.status, JSON.stringify(reply.body));
      row.expect(reply.body, c);
      // The connector's verdict on the same answer (mbs-answers.ts): a success is ok, the no-route
      // 404 is the operator's to fix, every other refusal is decided by its step ("refused").
      const noRoute = String(reply.body.message ?? "").startsWith("no route found");
      const verdict = reply.status < 300 ? "ok" : noRoute ? "configuration" : "refused";
      assert.equal(classify(reply).kind, verdict, "the connector's verdict");
    });
  }
  assert.deepEqual([...sim.registrations().values()], [1, 1]);
  assert.deepEqual([...sim.refusedSigns()], [[c.irn, 1]], "the repeated sign is counted");
  assert.equal(sim.vatReports().length, 1);
});
