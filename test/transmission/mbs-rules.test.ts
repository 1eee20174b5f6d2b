import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import test from "node:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { DeliveryError } from "../../src/transmission/authority/connector.ts";
import { mbsAuthority } from "../../src/transmission/authority/mbs.ts";
import { classify, failureOf } from "../../src/transmission/authority/mbs-answers.ts";
import { MASK, mbsClient } from "../../src/transmission/authority/mbs-client.ts";
import {
  MBS_DOCUMENT,
  mbsDocument,
  mbsPaymentUpdate,
  mbsPriceUnit,
  mbsVatReport,
  mbsVatReportLive,
} from "../../src/transmission/authority/mbs-mapping.ts";
import { freePort } from "../cli/run.ts";
import { fixture } from "../helpers.ts";

/** MBS's error envelope as the MBS spec's section 4 records it. */
const error = (status: number, error: Record<string, unknown>) => ({
  status,
  body: {
    code: status,
    data: null,
    message: "error has occurred",
    error: { id: "e1", handler: "invoice_actions", ...error },
  },
});

/** [recorded][client] The one public_message of every refusal of validate and sign. */
const REFUSED =
  "validation failed: we are unable to process your request. also confirm this is not a duplicate request";
/** [client] The duplicate IRN's details: the same words a transient fault would use. */
const TRY_LATER = "unable to complete this operation at this time, kindly try again later";

/**
 * Every answer the MBS spec records or documents, with the verdict the connector gives it. The
 * evidence mark of each row is the spec's. A `refused` verdict means "decided by the step": a
 * refusal at validate, a question for confirm at sign, "not registered" at confirm.
 */
const ANSWERS: Array<[string, { status: number; body: unknown }, string]> = [
  // Section 4, successes: `{code, data}`, no message [recorded][doc]; any 2xx.
  ["[recorded] 200 {code, data}", { status: 200, body: { code: 200, data: [] } }, "ok"],
  ["[doc] 200 data null", { status: 200, body: { code: 200, data: null } }, "ok"],
  ["201, any 2xx", { status: 201, body: { code: 201, data: {} } }, "ok"],
  ["[recorded] health", { status: 200, body: { healthy: true } }, "ok"],
  [
    "[doc] VAT bare record",
    { status: 200, body: { id: "65a1b2c3d4e5f60718293a4b", vatStatus: false } },
    "ok",
  ],
  // Section 1: a refused credential is a 400 [recorded].
  [
    "[recorded] credential 400",
    {
      status: 400,
      body: {
        code: 400,
        data: null,
        message: "error has occurred",
        error: { id: "u", handler: "handler", public_message: "unable to validate api key" },
      },
    },
    "configuration",
  ],
  // Section 2: the no-route 404 [recorded].
  [
    "[recorded] no route",
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
  // Section 4: every validation failure, and the duplicate, carry the same words [recorded][client].
  [
    "[client] tax category refused",
    error(400, {
      public_message: REFUSED,
      details:
        "invoicerequest.invoice.taxtotal[0].taxsubtotal[0].taxcategory.id must be a valid tax category, refer to the invoice resource apis",
    }),
    "refused",
  ],
  [
    "[recorded] no tax currency",
    error(400, { public_message: REFUSED, details: "invoicerequest.invoice.taxcurrencycode is required" }),
    "refused",
  ],
  [
    "[client] template refusal says 'try again'",
    error(400, {
      public_message: REFUSED,
      details: "irn validation failed for this business, refer to the template and try again",
    }),
    "refused",
  ],
  [
    "[client] duplicate IRN 'try again later'",
    error(400, { public_message: REFUSED, details: TRY_LATER }),
    "refused",
  ],
  [
    "[client] business id not a UUID",
    error(400, { public_message: REFUSED, details: "invalid UUID length: 35" }),
    "refused",
  ],
  [
    "[client] entity handler",
    error(400, { handler: "entity_actions", public_message: "entity not found" }),
    "refused",
  ],
  ["a 404 in the envelope (an IRN not held)", error(404, { public_message: "invoice not found" }), "refused"],
  // Section 4: partial success, in an error or inside a 2xx [client].
  [
    "[client] signed, not transmitted",
    error(400, {
      public_message:
        "Invoice is Signed but could not transmit. Accounting parties APP might be offline or busy",
    }),
    "partial",
  ],
  [
    "[client] signed, not transmitted, in a 2xx",
    {
      status: 200,
      body: {
        code: 200,
        data: {
          ok: false,
          message:
            "Invoice is Signed but could not transmit. Accounting parties APP might be offline or busy",
        },
      },
    },
    "partial",
  ],
  // Section 4: NOT_ENABLED in error.sub_message or anywhere in the body [client].
  [
    "[client] NOT_ENABLED sub_message",
    error(400, { public_message: "x", sub_message: "NOT_ENABLED" }),
    "not_enabled",
  ],
  [
    "[client] NOT_ENABLED elsewhere",
    { status: 400, body: { code: 400, message: "buyer NOT_ENABLED" } },
    "not_enabled",
  ],
  // Section 1: transmission needs the APP's webhook [recorded][client].
  [
    "[client] webhook not set up",
    error(400, { public_message: "webhook url is not setup" }),
    "configuration",
  ],
  // Section 7: transient by status or transport only.
  ["500 page", { status: 500, body: "<html>oops</html>" }, "transient"],
  ["502", { status: 502, body: null }, "transient"],
  ["503 envelope", error(503, { public_message: "service unavailable" }), "transient"],
  ["429", { status: 429, body: null }, "transient"],
  ["408", { status: 408, body: null }, "transient"],
  ["a proxy's 4xx page, not MBS's", { status: 403, body: "<html>Forbidden</html>" }, "configuration"],
  ["a 400 that is not JSON", { status: 400, body: "Bad Request" }, "transient"],
];

test("every MBS answer the spec records or documents gets its verdict by status and step, never by ambiguous words", () => {
  for (const [name, answer, kind] of ANSWERS) assert.equal(classify(answer).kind, kind, name);
  // The words that fooled the old classifier decide nothing: "duplicate" in every refusal,
  // "try again later" in a duplicate, "try again" in a template refusal, an IRN quoted in details.
  for (const details of [TRY_LATER, "irn DUPLICATE7-AB12CD34-20261115 already exists", "please try again"]) {
    assert.equal(classify(error(400, { public_message: REFUSED, details })).kind, "refused", details);
  }
  // A 2xx whose document quotes the partial-success text in a note is still a success: only
  // the answer's own messages are read.
  assert.equal(
    classify({ status: 200, body: { code: 200, data: { note: "Invoice is Signed but could not transmit" } } })
      .kind,
    "ok",
  );
});

test("a refusal keeps the authority's status, id, handler, details and public_message verbatim; holds and states follow the verdict", () => {
  const validation = failureOf(
    "validate",
    error(400, { details: "invoicerequest.invoice.taxcurrencycode is required", public_message: REFUSED }),
  );
  assert.equal(validation.permanent, true);
  assert.deepEqual(validation.answer, {
    status: 400,
    id: "e1",
    handler: "invoice_actions",
    details: "invoicerequest.invoice.taxcurrencycode is required",
    public_message: REFUSED,
  });
  assert.equal(
    validation.message,
    `MBS validate answered 400: ${REFUSED}: invoicerequest.invoice.taxcurrencycode is required`,
  );
  // The call's request id is named, to find it in the authority's logs.
  assert.match(
    failureOf("confirm", { ...error(503, { public_message: "service unavailable" }), requestId: "r-1" })
      .message,
    /^MBS confirm answered 503: service unavailable \(request r-1\)$/,
  );
  const credential = failureOf(
    "sign",
    error(400, { handler: "handler", public_message: "unable to validate api key" }),
  );
  assert.equal(credential.permanent, false);
  assert.equal(credential.hold, "configuration");
  assert.equal(credential.credential, true, "a refused credential pauses every delivery");
  const noRoute = failureOf("confirm", {
    status: 404,
    body: {
      code: 404,
      data: null,
      message: "no route found for this path. kindly check your request and try again",
    },
  });
  assert.equal(noRoute.hold, "configuration");
  assert.equal(noRoute.credential, false, "a wrong host is the operator's, but not a refused credential");
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
  // A duplicate's "try again later" is not transient: on its own (without confirm) it is a refusal.
  assert.equal(
    failureOf("validate", error(400, { public_message: REFUSED, details: TRY_LATER })).permanent,
    true,
  );
  // A runaway text is cut, never kept whole.
  const long = failureOf("sign", error(400, { details: "x".repeat(100_000) }));
  assert.equal(long.answer?.details?.length, 2000);
});

test("the document sent to MBS is MBS's, by one table: each field of ours kept, changed or left out", () => {
  const who = { business_id: "0b6c3c4e-3f7e-4c55-9d8e-1d2a3b4c5d6e", service_id: "AB12CD34" };
  const ours = fixture("invoice-full", who);
  const sent = mbsDocument({
    ...ours,
    accounting_cost: "CC-1",
    buyer_reference: "BR-9",
    invoice_type_code: 381,
    x_erp_batch: "B-17",
  });
  // Every top-level field sent is one the table names; every one of ours the table names is sent.
  for (const field of Object.keys(sent)) assert.ok(field in MBS_DOCUMENT, `${field} is in the table`);
  for (const field of Object.keys(ours)) if (field in MBS_DOCUMENT) assert.ok(field in sent, field);
  // An unknown field a client sent stays here.
  assert.equal("x_erp_batch" in sent, false);
  // [recorded] a string type code; [client] integers refused.
  assert.equal(sent.invoice_type_code, "381");
  // [client] invoice_kind always: as signed, or B2B/B2C by the buyer's TIN.
  assert.equal(sent.invoice_kind, "B2B");
  // [doc] MBS-only fields a client sent go along.
  assert.equal(sent.accounting_cost, "CC-1");
  assert.equal(sent.buyer_reference, "BR-9");
  // Parties: the documented fields; our postal address's lga and state stay here.
  const supplier = sent.accounting_supplier_party as Record<string, unknown>;
  const ourSupplier = ours.accounting_supplier_party as Record<string, Record<string, unknown>>;
  assert.deepEqual(supplier.postal_address, {
    street_name: ourSupplier.postal_address?.street_name,
    city_name: ourSupplier.postal_address?.city_name,
    postal_zone: ourSupplier.postal_address?.postal_zone,
    country: "NG",
  });
  for (const field of ["party_name", "tin", "email", "telephone", "business_description"])
    assert.equal(supplier[field], ourSupplier[field], field);
  // Lines field by field; the free-text price unit becomes a Rec. 20 code of at most 3 characters.
  const lines = sent.invoice_line as Array<Record<string, Record<string, unknown>>>;
  const ourLines = ours.invoice_line as Array<Record<string, Record<string, unknown>>>;
  assert.deepEqual(lines[0]?.item, ourLines[0]?.item);
  assert.deepEqual(lines[0]?.price, { ...ourLines[0]?.price, price_unit: "BG" });
  assert.equal(lines[1]?.price?.price_unit, "H87");
  // Amounts, dates, references, taxes: unchanged.
  for (const field of [
    "issue_date",
    "due_date",
    "tax_total",
    "legal_monetary_total",
    "contract_document_reference",
    "payment_means",
    "allowance_charge",
    "invoice_delivery_period",
  ])
    assert.deepEqual(sent[field], ours[field], field);
  // The minimal document: payment status, tax currency and kind made explicit.
  const {
    payment_status: _p,
    tax_currency_code: _t,
    invoice_kind: _k,
    ...minimal
  } = fixture("invoice-minimal", who);
  const bare = mbsDocument({
    ...minimal,
    accounting_customer_party: { party_name: "Walk-in", email: "a@b.example" },
  });
  assert.equal(bare.payment_status, "PENDING");
  assert.equal(bare.tax_currency_code, "NGN");
  assert.equal(bare.invoice_kind, "B2C");
  assert.equal(typeof bare.invoice_type_code, "string");
});

test("a price unit goes to MBS as a code of at most 3 characters, whatever reading of the rule holds", () => {
  const cases: Array<[unknown, unknown]> = [
    ["NGN per bag", "BG"],
    ["NGN per piece", "H87"],
    ["per kg", "KGM"],
    ["litres", "LTR"],
    ["NGN per 1", "EA"],
    ["h87", "H87"],
    ["EA", "EA"],
    ["x".repeat(100_000), "EA"],
    [undefined, undefined],
  ];
  for (const [ours, theirs] of cases) {
    const unit = mbsPriceUnit(ours);
    assert.equal(unit, theirs, String(ours).slice(0, 20));
    if (typeof unit === "string") assert.ok(unit.length <= 3);
  }
});

test("payment updates and VAT reports take MBS's shapes: the integrators' report first, the documented one as fall-back", () => {
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
  // [client] the integrators' form: snake_case, all strings, the APP's service id.
  assert.deepEqual(mbsVatReportLive(ours), {
    agent_tin: "20198222-0002",
    beneficiary_tin: "31845560-0001",
    currency: "NGN",
    irn: "INV0001-AB12CD34-20261115",
    base_amount: "645000.00",
    vat_rate: "7.5",
    vat_calculated: "48375.00",
    other_taxes: "0.00",
    total_amount: "693375.00",
    transaction_date: "2026-11-15",
    item_description: "Portland cement and rebar, PO-7781",
    integrator_service_id: "AB12CD34",
    vat_status: "STANDARD_VAT",
  });
  assert.equal(mbsVatReportLive(ours, "APP00001").integrator_service_id, "APP00001");
  for (const value of Object.values(mbsVatReportLive(ours))) assert.equal(typeof value, "string");
  // [doc] the documented form.
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
    signRepeats: 1,
    signRepeatDelayMs: 2000,
    pullConfirmed: "false",
    pullMaxBytes: 32 * 2 ** 20,
  });
  assert.equal(config.authorityProbeMs, 60_000);
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

test("the APP's key and secret are masked in every answer read from MBS: an upstream echoing them reaches no message or kept answer", async (t) => {
  const key = "key-echo-1";
  // Characters a JSON encoder escapes (a Go one writes & < > as \u0026 \u003c \u003e): masked all the same.
  const secret = 's3cr3t-"quoted"&<echo>';
  const echoing = await upstream(t, (req, res) => {
    const heard = `x-api-key=${req.headers["x-api-key"]} x-api-secret=${req.headers["x-api-secret"]}`;
    const body = JSON.stringify({
      code: 400,
      data: { headers: req.headers, [String(req.headers["x-api-secret"])]: "as a field name" },
      message: "error has occurred",
      error: {
        id: "e-echo",
        handler: "invoice_actions",
        details: `invalid request: ${heard}`,
        public_message: `validation failed: ${heard}`,
        sub_message: String(req.headers["x-api-key"]),
      },
    }).replace(/[&<>]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    res.writeHead(400, { "content-type": "application/json" }).end(body);
  });
  const settings = { url: echoing.url, apiKey: key, apiSecret: secret, callTimeoutMs: 2000 };
  const leaks = (text: string) => text.includes(key) || text.includes(secret) || text.includes("s3cr3t");
  const signal = new AbortController().signal;

  // The connector: confirm reads "not registered", validate is refused; the error says MBS's words, masked.
  const authority = mbsAuthority(settings);
  const refused = await authority
    .deliver(
      { irn: "INV1-AB12CD34-20240611", businessId: "b", document: { irn: "INV1-AB12CD34-20240611" } },
      signal,
    )
    .then(
      () => assert.fail("delivered"),
      (err: unknown) => err,
    );
  assert.ok(refused instanceof DeliveryError, String(refused));
  assert.equal(echoing.seen.length, 2, "confirm, then validate");
  assert.equal(echoing.seen[1]?.headers["x-api-secret"], secret, "the upstream did get the secret");
  assert.ok(!leaks(refused.message), refused.message);
  assert.ok(!leaks(JSON.stringify(refused.answer)), JSON.stringify(refused.answer));
  assert.match(
    refused.message,
    /MBS validate answered 400: validation failed: x-api-key=\*\*\* x-api-secret=\*\*\*/,
  );
  assert.deepEqual(refused.answer, {
    status: 400,
    id: "e-echo",
    handler: "invoice_actions",
    details: `invalid request: x-api-key=${MASK} x-api-secret=${MASK}`,
    public_message: `validation failed: x-api-key=${MASK} x-api-secret=${MASK}`,
    sub_message: MASK,
  });

  // The client masks the whole answer once, where it is read: field names and nested data too.
  const answer = await mbsClient(settings).call("validate", "POST", "/api/v1/invoice/validate", signal, {});
  assert.ok(!leaks(JSON.stringify(answer.body)), JSON.stringify(answer.body));
  const data = (answer.body as { data: Record<string, unknown> }).data;
  assert.equal(data[MASK], "as a field name");
  assert.equal((data.headers as Record<string, unknown>)["x-api-key"], MASK);

  // A body that is not JSON (a proxy's page echoing the request) is masked as text.
  const page = await upstream(t, (req, res) => {
    res
      .writeHead(502, { "content-type": "text/html" })
      .end(`<pre>${req.headers["x-api-key"]}:${req.headers["x-api-secret"]}</pre>`);
  });
  const proxied = await mbsClient({ ...settings, url: page.url }).call("sign", "POST", "/x", signal, {});
  assert.equal(proxied.body, `<pre>${MASK}:${MASK}</pre>`);
  const failed = failureOf("sign", proxied);
  assert.ok(!leaks(failed.message), failed.message);
});
