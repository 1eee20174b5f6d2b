import assert from "node:assert/strict";
import { test } from "node:test";
import { BAD_CREDENTIAL, NO_ROUTE } from "../../../src/simulators/mbs/envelopes.ts";
import { call, data, failure, ISO_TIMESTAMP, refused, simulator } from "./harness.ts";

// The VAT post-payment report (the MBS spec, section 5): the integrators' snake_case form at
// /api/v1/vat/postpayment by default; the documented camelCase form at /v1/vat/postPayment only under
// its rule (recorded as the no-route 404).

const REPORT = {
  agent_tin: "20198222-0002",
  beneficiary_tin: "31845560-0001",
  currency: "NGN",
  irn: "INV0001-ABCD1234-20261115",
  base_amount: "645000.00",
  vat_rate: "7.5",
  vat_calculated: "48375.00",
  other_taxes: "0.00",
  total_amount: "693375.00",
  transaction_date: "2026-11-15",
  item_description: "Portland cement and rebar, PO-7781",
  integrator_service_id: "ABCD1234",
  vat_status: "STANDARD_VAT",
};

const DOCUMENTED = {
  agentTin: "20198222-0002",
  beneficiaryTin: "31845560-0001",
  currency: 566,
  transDate: "2026-11-15",
  baseAmount: "645000.00",
  vatRate: "7.5",
  vatCalculated: "48375.00",
  otherTaxes: "0.00",
  totalAmount: "693375.00",
  vatStatus: 1,
  itemDescription: "Portland cement and rebar, PO-7781",
  vendorTransactionId: "INV0001-ABCD1234-20261115",
};

const HEX24 = /^[0-9a-f]{24}$/;

test("[client] the integrators' form: the report in the {code, data} envelope; the same report repeated is recorded once, another for the same IRN twice", async (t) => {
  const sim = await simulator(t);
  const post = (body: unknown) => call(sim, "POST", "/api/v1/vat/postpayment", { body });
  const answer = data(await post(REPORT));
  const { id, created_at, ...echo } = answer;
  assert.deepEqual(echo, REPORT);
  assert.match(String(id), HEX24);
  assert.match(String(created_at), ISO_TIMESTAMP);
  // The same fields in another order: a client's retry after a lost answer.
  const reordered = Object.fromEntries(Object.entries(REPORT).reverse());
  assert.deepEqual(data(await post(reordered)), answer, "a repeat answers the first");
  assert.equal(sim.vatReports().length, 1);
  // The form carries no id of its own: a second report of the same invoice differs in its fields.
  const second = data(await post({ ...REPORT, base_amount: "1.00" }));
  assert.notEqual(second.id, answer.id);
  data(await post({ ...REPORT, irn: "INV0002-ABCD1234-20261115" }));
  assert.equal(sim.vatReports().length, 3);
});

test("[client] the integrators' form refuses a missing or mistyped field, the first one", async (t) => {
  const sim = await simulator(t);
  const post = (body: unknown) => call(sim, "POST", "/api/v1/vat/postpayment", { body });
  const { agent_tin: _, ...noAgent } = REPORT;
  const rows: [unknown, string][] = [
    [noAgent, "vatpaymentrequest.agenttin is required"],
    [{ ...REPORT, agent_tin: "1234" }, "vatpaymentrequest.agenttin must be at least in length or value 5"],
    [
      { ...REPORT, currency: "566" },
      "vatpaymentrequest.currency must be a valid currency code, refer to the invoice resource apis",
    ],
    [{ ...REPORT, base_amount: 645000 }, "vatpaymentrequest.baseamount must be a string"],
    [
      { ...REPORT, vat_rate: "7,5" },
      'vatpaymentrequest.vatrate must be an amount written as a string (e.g: "645000.00")',
    ],
    [
      { ...REPORT, transaction_date: "2026-02-29" },
      "vatpaymentrequest.transactiondate must be a valid date value yyyy-mm-dd (e.g: 2024-04-29)",
    ],
    [
      { ...REPORT, vat_status: "1" },
      "vatpaymentrequest.vatstatus must be a valid tax category, refer to the invoice resource apis",
    ],
    [{ ...REPORT, integrator_service_id: undefined }, "vatpaymentrequest.integratorserviceid is required"],
    [{}, "vatpaymentrequest.agenttin is required"],
    [[REPORT], "vatpaymentrequest must be a JSON object"],
  ];
  for (const [body, details] of rows) refused(await post(body), details);
  failure(
    await call(sim, "POST", "/api/v1/vat/postpayment", { body: REPORT, auth: false }),
    400,
    BAD_CREDENTIAL,
  );
  assert.equal(sim.vatReports().length, 0);
});

test("[recorded] the documented path is no route by default; [doc] under its rule, a bare record", async (t) => {
  const sim = await simulator(t);
  const post = (body: unknown, auth = true) => call(sim, "POST", "/v1/vat/postPayment", { body, auth });
  for (const auth of [true, false]) {
    assert.deepEqual(await post(DOCUMENTED, auth), {
      status: 404,
      body: { code: 404, data: null, message: NO_ROUTE },
    });
  }
  sim.setRules({ documented_vat_path: true });
  const reply = await post(DOCUMENTED);
  assert.equal(reply.status, 200);
  const { id, userId, createdAt, vendorTransactionId, ...echo } = reply.body;
  assert.deepEqual(echo, {
    agentTin: DOCUMENTED.agentTin,
    beneficiaryTin: DOCUMENTED.beneficiaryTin,
    currency: 566,
    transDate: "2026-11-15T00:00:00.000Z",
    baseAmount: 645000,
    vatRate: 7.5,
    vatCalculated: 48375,
    otherTaxes: 0,
    totalAmount: 693375,
    vatStatus: true,
    itemDescription: DOCUMENTED.itemDescription,
  });
  assert.equal(typeof vendorTransactionId, "number", "a number, not the id sent");
  assert.match(String(id), HEX24);
  assert.match(String(userId), HEX24);
  assert.match(String(createdAt), ISO_TIMESTAMP);
  assert.deepEqual(
    (await post({ ...DOCUMENTED, baseAmount: "1.00" })).body,
    reply.body,
    "a repeat answers the first",
  );
  const off = await post({ ...DOCUMENTED, vendorTransactionId: "TX-3", vatStatus: 0 });
  assert.equal(off.body.vatStatus, false);
  assert.equal(sim.vatReports().length, 2);

  const rows: [unknown, string][] = [
    [{ ...DOCUMENTED, agentTin: undefined }, "vatpaymentrequest.agenttin is required"],
    [{ ...DOCUMENTED, currency: "NGN" }, "vatpaymentrequest.currency must be a whole number"],
    [{ ...DOCUMENTED, vatStatus: true }, "vatpaymentrequest.vatstatus must be a whole number"],
    [
      { ...DOCUMENTED, transDate: "15/11/2026" },
      "vatpaymentrequest.transdate must be a valid date value yyyy-mm-dd (e.g: 2024-04-29)",
    ],
    [{ ...DOCUMENTED, baseAmount: 645000 }, "vatpaymentrequest.baseamount must be a string"],
    [{ ...DOCUMENTED, itemDescription: 3 }, "vatpaymentrequest.itemdescription must be a string"],
  ];
  for (const [body, details] of rows) refused(await post(body), details);
  failure(await post(DOCUMENTED, false), 400, BAD_CREDENTIAL);
});
