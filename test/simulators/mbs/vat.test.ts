import assert from "node:assert/strict";
import { test } from "node:test";
import { BAD_CREDENTIAL } from "../../../src/simulators/mbs/envelopes.ts";
import { call, data, failure, ISO_TIMESTAMP, refused, simulator, UUID } from "./harness.ts";

const REPORT = {
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

test("the VAT post-payment report answers numbers, a timestamp and a boolean, on both paths", async (t) => {
  const sim = await simulator(t);
  for (const [url, id] of [
    ["/v1/vat/postPayment", "TX-1"],
    ["/api/v1/vat/postpayment", "TX-2"],
  ] as const) {
    const answer = data(await call(sim, "POST", url, { body: { ...REPORT, vendorTransactionId: id } }));
    const { id: reportId, userId, createdAt, ...echo } = answer;
    assert.deepEqual(echo, {
      agentTin: REPORT.agentTin,
      beneficiaryTin: REPORT.beneficiaryTin,
      currency: 566,
      transDate: "2026-11-15T00:00:00.000Z",
      baseAmount: 645000,
      vatRate: 7.5,
      vatCalculated: 48375,
      otherTaxes: 0,
      totalAmount: 693375,
      vatStatus: true,
      itemDescription: REPORT.itemDescription,
      vendorTransactionId: id,
    });
    assert.match(String(reportId), UUID);
    assert.match(String(userId), UUID);
    assert.match(String(createdAt), ISO_TIMESTAMP);
  }
  const off = data(
    await call(sim, "POST", "/v1/vat/postPayment", {
      body: { ...REPORT, vendorTransactionId: "TX-3", vatStatus: 0 },
    }),
  );
  assert.equal(off.vatStatus, false);
  assert.equal(sim.vatReports().length, 3);
});

test("a repeated vendorTransactionId answers the first report again", async (t) => {
  const sim = await simulator(t);
  const firstAnswer = data(await call(sim, "POST", "/v1/vat/postPayment", { body: REPORT }));
  const again = data(
    await call(sim, "POST", "/api/v1/vat/postpayment", { body: { ...REPORT, baseAmount: "1.00" } }),
  );
  assert.deepEqual(again, firstAnswer);
  assert.equal(sim.vatReports().length, 1);
});

test("a VAT report with a missing or mistyped field is refused with its path", async (t) => {
  const sim = await simulator(t);
  const post = (body: unknown) => call(sim, "POST", "/v1/vat/postPayment", { body });
  const { agentTin: _, ...noAgent } = REPORT;
  refused(await post(noAgent), "vatpaymentrequest.agenttin is required");
  refused(
    await post({ ...REPORT, baseAmount: 645000 }),
    /vatpaymentrequest\.baseamount must be an amount written as a string/,
  );
  refused(await post({ ...REPORT, vatRate: "7,5" }), /vatpaymentrequest\.vatrate must be an amount/);
  refused(await post({ ...REPORT, currency: "NGN" }), "vatpaymentrequest.currency must be a whole number");
  refused(await post({ ...REPORT, vatStatus: true }), "vatpaymentrequest.vatstatus must be a whole number");
  refused(
    await post({ ...REPORT, transDate: "15/11/2026" }),
    "vatpaymentrequest.transdate must be YYYY-MM-DD",
  );
  refused(
    await post({ ...REPORT, transDate: "2026-02-29" }),
    "vatpaymentrequest.transdate must be YYYY-MM-DD",
  );
  refused(
    await post({ ...REPORT, itemDescription: 3 }),
    "vatpaymentrequest.itemdescription must be a string",
  );
  refused(
    await post({}),
    /vatpaymentrequest\.agenttin is required; .*vatpaymentrequest\.transdate is required/,
  );
  refused(await post([REPORT]), "vatpaymentrequest must be a JSON object");
  failure(await call(sim, "POST", "/v1/vat/postPayment", { body: REPORT, auth: false }), 400, BAD_CREDENTIAL);
  assert.equal(sim.vatReports().length, 0);
});
