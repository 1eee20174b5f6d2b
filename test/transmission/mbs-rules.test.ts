import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import test from "node:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { DeliveryError } from "../../src/transmission/authority/connector.ts";
import { classify, failureOf } from "../../src/transmission/authority/mbs-answers.ts";
import { mbsClient } from "../../src/transmission/authority/mbs-client.ts";
import { mbsDocument, mbsPaymentUpdate, mbsVatReport } from "../../src/transmission/authority/mbs-mapping.ts";
import { freePort } from "../cli/run.ts";
import { fixture } from "../helpers.ts";

const error = (status: number, error: Record<string, unknown>) => ({
  status,
  body: {
    code: status,
    data: null,
    message: "error has occurred",
    error: { id: "e1", handler: "h", ...error },
  },
});

test("MBS answers are classified in one place, as the MBS spec's section 7 says", () => {
  const cases: Array<[string, { status: number; body: unknown }, string]> = [
    ["200", { status: 200, body: { code: 200, data: null, message: "ok" } }, "ok"],
    ["201", { status: 201, body: { code: 201, data: {}, message: "created" } }, "ok"],
    ["500", { status: 500, body: "<html>oops</html>" }, "transient"],
    ["502", { status: 502, body: null }, "transient"],
    ["429", { status: 429, body: null }, "transient"],
    ["408", { status: 408, body: null }, "transient"],
    ["400 try again later", error(400, { public_message: "Please Try Again Later" }), "transient"],
    [
      "400 unable to complete",
      error(400, { public_message: "unable to complete this operation at this time" }),
      "transient",
    ],
    ["400 bad api key", error(400, { public_message: "unable to validate api key" }), "configuration"],
    [
      "404 no route",
      {
        status: 404,
        body: {
          code: 404,
          data: null,
          message: "no route found for this path. kindly check your request and try again",
        },
      },
      "configuration",
    ],
    ["400 NOT_ENABLED", error(400, { public_message: "x", sub_message: "NOT_ENABLED" }), "not_enabled"],
    [
      "NOT_ENABLED elsewhere",
      { status: 400, body: { code: 400, message: "buyer NOT_ENABLED" } },
      "not_enabled",
    ],
    [
      "partial",
      error(400, {
        public_message:
          "Invoice is Signed but could not transmit. Accounting parties APP might be offline or busy",
      }),
      "partial",
    ],
    ["duplicate", error(400, { public_message: "invoice with this irn already exists" }), "duplicate"],
    ["404 not found", error(404, { public_message: "invoice not found" }), "not_found"],
    [
      "validation",
      error(400, {
        details: "invoicerequest.invoice.taxcurrencycode is required",
        public_message: "validation failed: unable to process your request",
      }),
      "permanent",
    ],
  ];
  for (const [name, answer, kind] of cases) assert.equal(classify(answer).kind, kind, name);
});

test("a refusal keeps the authority's details and public_message verbatim; holds and states follow the verdict", () => {
  const validation = failureOf(
    "sign",
    error(400, {
      details: "invoicerequest.invoice.taxcurrencycode is required",
      public_message: "validation failed: unable to process your request",
    }),
  );
  assert.equal(validation.permanent, true);
  assert.deepEqual(validation.answer, {
    status: 400,
    id: "e1",
    details: "invoicerequest.invoice.taxcurrencycode is required",
    public_message: "validation failed: unable to process your request",
  });
  assert.equal(
    validation.message,
    "MBS sign answered 400: validation failed: unable to process your request: invoicerequest.invoice.taxcurrencycode is required",
  );
  // The call's request id is named, to find it in the authority's logs.
  assert.match(
    failureOf("confirm", { ...error(503, { public_message: "service unavailable" }), requestId: "r-1" })
      .message,
    /^MBS confirm answered 503: service unavailable \(request r-1\)$/,
  );
  // The words are the answer's own: an IRN or a field quoted in `details` does not change the verdict.
  assert.equal(
    classify(
      error(404, { public_message: "invoice not found", details: "irn DUPLICATE7-X is not registered" }),
    ).kind,
    "not_found",
  );
  assert.equal(
    classify(error(400, { public_message: "validation failed", details: "note: please try again later" }))
      .kind,
    "permanent",
  );
  const credential = failureOf("sign", error(400, { public_message: "unable to validate api key" }));
  assert.equal(credential.permanent, false);
  assert.equal(credential.hold, "configuration");
  const buyer = failureOf(
    "transmit",
    error(400, { public_message: "not enabled", sub_message: "NOT_ENABLED" }),
  );
  assert.equal(buyer.hold, "buyer");
  assert.equal(buyer.state, "AWAITING_BUYER");
  const partial = failureOf(
    "transmit",
    error(400, { public_message: "Invoice is Signed but could not transmit." }),
  );
  assert.equal(partial.state, "REGISTERED");
  assert.equal(partial.permanent, false);
  // A runaway text is cut, never kept whole.
  const long = failureOf("sign", error(400, { details: "x".repeat(100_000) }));
  assert.equal(long.answer?.details?.length, 2000);
});

test("the invoice document goes to MBS field by field as signed, with the differences of the MBS spec's section 3", () => {
  const who = { business_id: "0b6c3c4e-3f7e-4c55-9d8e-1d2a3b4c5d6e", service_id: "AB12CD34" };
  const ours = fixture("invoice-full", who);
  const sent = mbsDocument({
    ...ours,
    accounting_cost: "CC-1",
    buyer_reference: "BR-9",
    invoice_type_code: 381,
  });
  // Ours only: B2B/B2C is ours, MBS has no place for it.
  assert.equal("invoice_kind" in sent, false);
  // MBS refuses an integer type code: a string always.
  assert.equal(sent.invoice_type_code, "381");
  // Fields MBS has and ours keeps as unknown fields go along as they are.
  assert.equal(sent.accounting_cost, "CC-1");
  assert.equal(sent.buyer_reference, "BR-9");
  // Every other field is the signed one, unchanged: ids, dates, parties (TIN and email), amounts, lines.
  for (const [field, value] of Object.entries(ours)) {
    if (field === "invoice_kind" || field === "invoice_type_code") continue;
    assert.deepEqual(sent[field], value, field);
  }
  assert.equal(sent.business_id, who.business_id);
  assert.deepEqual(sent.contract_document_reference, ours.contract_document_reference);
  // MBS's default payment status, made explicit when ours has none.
  const { payment_status: _dropped, ...minimal } = fixture("invoice-minimal", who);
  assert.equal(mbsDocument(minimal).payment_status, "PENDING");
  assert.equal(typeof mbsDocument(minimal).invoice_type_code, "string");
});

test("payment updates and VAT reports take MBS's shapes", () => {
  assert.deepEqual(mbsPaymentUpdate({ payment_status: "PAID", reference: "TRF-1" }), {
    payment_status: "PAID",
    reference: "TRF-1",
  });
  assert.deepEqual(mbsPaymentUpdate({ payment_status: "REJECTED", reference: null }), {
    payment_status: "REJECTED",
  });
  assert.deepEqual(
    mbsPaymentUpdate({
      payment_status: "PARTIAL",
      amount: 25000,
      payment_update_date: "2026-11-20",
      reference: "TRF-889",
    }),
    { payment_status: "PARTIAL", reference: "TRF-889", amount: 25000, payment_update_date: "2026-11-20" },
  );
  const ours = fixture("report-fiscalization", { business_id: "x", service_id: "AB12CD34" });
  assert.deepEqual(mbsVatReport(ours), {
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
    vendorTransactionId: "INV0001-AB12CD34-20261115",
  });
  assert.equal(mbsVatReport({ ...ours, vat_calculated: "0.00" }).vatStatus, 0);
  assert.equal(mbsVatReport({ ...ours, currency: "usd" }).currency, 840);
  assert.throws(
    () => mbsVatReport({ ...ours, currency: "XYZ" }),
    (err) => err instanceof DeliveryError && err.permanent,
  );
});

test("EINVOICE_AUTHORITY=mbs needs its three settings, and names the one that is missing or bad", () => {
  const good = {
    EINVOICE_AUTHORITY: "mbs",
    EINVOICE_MBS_URL: "https://mbs.example/",
    EINVOICE_MBS_API_KEY: "k",
    EINVOICE_MBS_API_SECRET: "s",
  };
  const config = loadConfig(good);
  assert.deepEqual(config.authority, {
    kind: "mbs",
    url: "https://mbs.example",
    apiKey: "k",
    apiSecret: "s",
    callTimeoutMs: 3000,
  });
  assert.throws(
    () => loadConfig({ ...good, EINVOICE_MBS_CALL_TIMEOUT_MS: "6000" }),
    (err) =>
      err instanceof ConfigError &&
      /must be at least twice EINVOICE_MBS_CALL_TIMEOUT_MS \(6000\)/.test(err.message),
  );
  const refused: Array<[Record<string, string>, RegExp]> = [
    [{ EINVOICE_MBS_URL: "" }, /EINVOICE_MBS_URL/],
    [{ EINVOICE_MBS_URL: "not a url" }, /EINVOICE_MBS_URL is not a URL/],
    [{ EINVOICE_MBS_URL: "ftp://mbs.example" }, /EINVOICE_MBS_URL must be an http\(s\) URL/],
    [{ EINVOICE_MBS_URL: "https://user:pw@mbs.example" }, /EINVOICE_MBS_URL must not carry credentials/],
    [{ EINVOICE_MBS_API_KEY: "" }, /needs EINVOICE_MBS_API_KEY/],
    [{ EINVOICE_MBS_API_SECRET: "" }, /needs EINVOICE_MBS_API_SECRET/],
    [{ EINVOICE_MBS_API_SECRET: " s " }, /EINVOICE_MBS_API_SECRET/],
  ];
  for (const [change, message] of refused) {
    assert.throws(
      () => loadConfig({ ...good, ...change }),
      (err) => err instanceof ConfigError && message.test(err.message),
      JSON.stringify(change),
    );
  }
});

/** A real server answering each request with `answer`; the requests it saw are kept. */
async function upstream(
  t: test.TestContext,
  answer: (req: http.IncomingMessage, res: http.ServerResponse) => void,
) {
  const seen: http.IncomingMessage[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req);
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

test("each MBS call carries the credentials and a request id, has a time limit, follows no redirect, and logs no secret", async (t) => {
  const secret = "s3cr3t-value";
  const redirecting = await upstream(t, (_req, res) => {
    res.writeHead(302, { location: "https://elsewhere.example/steal" }).end();
  });
  const client = mbsClient({ url: redirecting.url, apiKey: "key-1", apiSecret: secret, callTimeoutMs: 300 });
  const signal = new AbortController().signal;
  await assert.rejects(
    client.call("sign", "POST", "/api/v1/invoice/sign", signal, {}),
    (err) =>
      err instanceof DeliveryError &&
      !err.permanent &&
      /redirect, not followed: 302 to "https:\/\/elsewhere.example\/steal"/.test(err.message) &&
      !err.message.includes(secret),
  );
  assert.equal(redirecting.seen.length, 1);
  const req = redirecting.seen[0] as http.IncomingMessage;
  assert.equal(req.headers["x-api-key"], "key-1");
  assert.equal(req.headers["x-api-secret"], secret);
  assert.match(String(req.headers["x-request-id"]), /^[0-9a-f-]{36}$/);

  const silent = await upstream(t, () => {
    // Never answers.
  });
  const slow = mbsClient({ url: silent.url, apiKey: "key-1", apiSecret: secret, callTimeoutMs: 200 });
  const started = Date.now();
  await assert.rejects(
    slow.call("confirm", "GET", "/api/v1/invoice/confirm/X", signal),
    (err) =>
      err instanceof DeliveryError &&
      /gave no answer within 200 ms \(request [0-9a-f-]{36}\)/.test(err.message),
  );
  assert.ok(Date.now() - started < 2000);

  const closed = mbsClient({
    url: `http://127.0.0.1:${await freePort()}`,
    apiKey: "k",
    apiSecret: secret,
    callTimeoutMs: 500,
  });
  await assert.rejects(
    closed.call("sign", "POST", "/x", signal, {}),
    (err) =>
      err instanceof DeliveryError &&
      /unreachable: ECONNREFUSED/.test(err.message) &&
      !err.message.includes(secret),
  );
});
