import assert from "node:assert/strict";
import { test } from "node:test";
import {
  DUPLICATE_IRN,
  INVALID_TRANSITION,
  INVOICE_NOT_FOUND,
  SIGN_ANSWER,
} from "../../../src/simulators/mbs/envelopes.ts";
import type { Json } from "../../helpers.ts";
import { call, data, failure, first, invoiceFor, refused, signed, simulator } from "./harness.ts";

test("irn/validate accepts an IRN on the business's template and refuses each way of missing it", async (t) => {
  const sim = await simulator(t);
  const tp = first(sim);
  const check = (body: Json) => call(sim, "POST", "/api/v1/invoice/irn/validate", { body });
  const irn = `INV0042-${tp.service_id}-20261115`;
  const good = { business_id: tp.business_id, invoice_reference: "INV0042", irn };
  assert.deepEqual(data(await check(good)), { irn, valid: true });

  const other = sim.taxpayers[1]?.service_id;
  refused(
    await check({ ...good, irn: `INV0042-${other}-20261115` }),
    /irnrequest\.irn does not match the irn template/,
  );
  refused(
    await check({ ...good, irn: `INV/0042-${tp.service_id}-20261115` }),
    /does not match the irn template/,
  );
  refused(
    await check({ ...good, irn: `INV-0042-${tp.service_id}-20261115` }),
    /does not match the irn template/,
  );
  refused(await check({ ...good, irn: `INV0042-${tp.service_id}-20260230` }), /has an invalid date 20260230/);
  refused(
    await check({ ...good, irn: `INV0042-${tp.service_id}-2026111` }),
    /does not match the irn template/,
  );
  refused(await check({ ...good, invoice_reference: "INV0043" }), /does not carry the invoice reference/);
  refused(
    await check({ ...good, business_id: "00000000-0000-4000-8000-000000000000" }),
    "irnrequest.businessid is invalid",
  );
  refused(await check({ irn }), "irnrequest.businessid is required; irnrequest.invoicereference is required");
});

test("validate accepts the full invoice without registering it", async (t) => {
  const sim = await simulator(t);
  const doc = invoiceFor(first(sim));
  assert.deepEqual(data(await call(sim, "POST", "/api/v1/invoice/validate", { body: doc })), {
    irn: doc.irn,
    valid: true,
  });
  failure(await call(sim, "GET", `/api/v1/invoice/confirm/${doc.irn}`), 404, INVOICE_NOT_FOUND);
  assert.equal(sim.registrations().size, 0);
});

test("validate and sign refuse a document with the authority's lower-cased dotted paths", async (t) => {
  const sim = await simulator(t);
  const tp = first(sim);
  const doc = invoiceFor(tp);
  for (const url of ["/api/v1/invoice/validate", "/api/v1/invoice/sign"]) {
    const send = (change: (d: Json) => void) => {
      const copy = structuredClone(doc);
      change(copy);
      return call(sim, "POST", url, { body: copy });
    };
    refused(
      await send((d) => delete d.tax_currency_code),
      "invoicerequest.invoice.taxcurrencycode is required",
    );
    refused(
      await send((d) => (d.invoice_type_code = 381)),
      "invoicerequest.invoice.invoicetypecode must be a string",
    );
    refused(
      await send((d) => (d.invoice_type_code = "999")),
      "invoicerequest.invoice.invoicetypecode is invalid",
    );
    refused(await send((d) => delete d.issue_date), /invoicerequest\.invoice\.issuedate is required/);
    refused(
      await send((d) => delete d.document_currency_code),
      "invoicerequest.invoice.documentcurrencycode is required",
    );
    refused(
      await send((d) => delete d.legal_monetary_total),
      "invoicerequest.invoice.legalmonetarytotal is required",
    );
    refused(
      await send((d) => (d.invoice_line = [])),
      "invoicerequest.invoice.invoiceline must be a non-empty list of lines",
    );
    refused(await send((d) => delete d.irn), "invoicerequest.invoice.irn is required");
    refused(await send((d) => (d.business_id = "nobody")), "invoicerequest.invoice.businessid is invalid");
    refused(
      await send((d) => delete (d.accounting_supplier_party as Json).tin),
      "invoicerequest.invoice.accountingsupplierparty.tin is required",
    );
    refused(
      await send((d) => delete (d.accounting_customer_party as Json).email),
      "invoicerequest.invoice.accountingcustomerparty.email is required",
    );
    refused(
      await send((d) => delete d.accounting_customer_party),
      "invoicerequest.invoice.accountingcustomerparty is required",
    );
    refused(
      await send((d) => (d.accounting_customer_party = { id: "no-such-party" })),
      "invoicerequest.invoice.accountingcustomerparty.id is invalid",
    );
    // The IRN's date is the issue date; its service id the business's.
    refused(
      await send((d) => (d.issue_date = "2026-11-16")),
      /invoicerequest\.invoice\.irn date must be the issue date 20261116/,
    );
    refused(
      await send((d) => (d.irn = `INV0001-${sim.taxpayers[1]?.service_id}-20261115`)),
      /invoicerequest\.invoice\.irn does not match the irn template \{\{invoice_number\}\}-/,
    );
    // Every problem at once, in one answer.
    refused(
      await send((d) => {
        d.invoice_type_code = 381;
        delete d.tax_currency_code;
      }),
      "invoicerequest.invoice.invoicetypecode must be a string; invoicerequest.invoice.taxcurrencycode is required",
    );
    refused(await call(sim, "POST", url, { body: [doc] }), "invoicerequest.invoice must be a JSON object");
    refused(await call(sim, "POST", url, { raw: '{"irn": ' }), "request body is not valid JSON");
  }
  assert.equal(sim.registrations().size, 0, "no refused sign registered anything");
});

test("a party created with /invoice/party may stand in for the document's party by its id", async (t) => {
  const sim = await simulator(t);
  const tp = first(sim);
  const party = data(
    await call(sim, "POST", "/api/v1/invoice/party", {
      body: {
        business_id: tp.business_id,
        party_name: "Lekki Homes",
        tin: "31845560-0001",
        email: "a@lekki.example",
      },
    }),
    201,
  );
  const doc = invoiceFor(tp);
  doc.accounting_customer_party = { id: party.id };
  await signed(sim, doc);
});

test("sign registers the IRN once (201) and refuses a second sign as a duplicate", async (t) => {
  const sim = await simulator(t);
  const doc = invoiceFor(first(sim));
  const reply = await call(sim, "POST", "/api/v1/invoice/sign", { body: doc });
  assert.equal(reply.status, SIGN_ANSWER.code);
  assert.deepEqual(reply.body, {
    code: 201,
    data: { irn: doc.irn, status: "SIGNED" },
    message: SIGN_ANSWER.message,
  });
  const again = failure(await call(sim, "POST", "/api/v1/invoice/sign", { body: doc }), 400, DUPLICATE_IRN);
  assert.equal(again.details, `irn ${doc.irn} is already registered`);
  assert.equal(again.handler, "sign_invoice");
  assert.deepEqual([...sim.registrations()], [[doc.irn, 1]]);
  assert.deepEqual([...sim.refusedSigns()], [[doc.irn, 1]], "the refused second sign is counted");
  const record = sim.invoice(String(doc.irn)) as Json;
  assert.equal(record.payment_status, "PENDING");
  assert.equal(record.transmitted, false);
  assert.deepEqual(record.document, doc);
});

test("confirm and download answer a registered IRN and 404 an unknown one", async (t) => {
  const sim = await simulator(t);
  const doc = invoiceFor(first(sim));
  const irn = await signed(sim, doc);
  const state = data(await call(sim, "GET", `/api/v1/invoice/confirm/${irn}`));
  assert.deepEqual(
    { ...state, signed_at: "" },
    {
      irn,
      business_id: doc.business_id,
      entry_status: "SIGNED",
      payment_status: "PENDING",
      transmitted: false,
      acknowledged: false,
      signed_at: "",
    },
  );
  const download = data(await call(sim, "GET", `/api/v1/invoice/download/${irn}`));
  assert.equal(download.irn, irn);
  assert.equal(download.signed_at, state.signed_at);
  assert.deepEqual(download.document, doc, "the document exactly as signed");

  const unknown = `INV9999-${first(sim).service_id}-20261115`;
  failure(await call(sim, "GET", `/api/v1/invoice/confirm/${unknown}`), 404, INVOICE_NOT_FOUND);
  failure(await call(sim, "GET", `/api/v1/invoice/download/${unknown}`), 404, INVOICE_NOT_FOUND);
});

test("search lists a business's invoices with the spec's filters and paging", async (t) => {
  const sim = await simulator(t);
  const tp = first(sim);
  for (const number of ["INV0001", "INV0002", "INV0003"]) await signed(sim, invoiceFor(tp, number));
  await signed(sim, invoiceFor(sim.taxpayers[1] ?? tp, "INV0004"));
  const irnOf = (n: string) => `${n}-${tp.service_id}-20261115`;
  data(
    await call(sim, "PATCH", `/api/v1/invoice/update/${irnOf("INV0002")}`, {
      body: { payment_status: "PAID" },
    }),
  );
  const search = async (query: string) =>
    data(await call(sim, "GET", `/api/v1/invoice/${tp.business_id}?${query}`)) as {
      items: Json[];
      page: number;
      size: number;
      total: number;
    };

  const all = await search("");
  assert.deepEqual(
    all.items.map((i) => i.irn),
    ["INV0001", "INV0002", "INV0003"].map(irnOf),
  );
  assert.equal(all.total, 3);
  const second = await search("size=2&page=2");
  assert.deepEqual(
    { items: second.items.map((i) => i.irn), page: second.page, size: second.size, total: second.total },
    { items: [irnOf("INV0003")], page: 2, size: 2, total: 3 },
  );
  const desc = await search("sort_by=irn&sort_direction_desc=true&size=1");
  assert.deepEqual(
    desc.items.map((i) => i.irn),
    [irnOf("INV0003")],
  );
  const paid = await search("payment_status=PAID");
  assert.deepEqual(
    paid.items.map((i) => i.irn),
    [irnOf("INV0002")],
  );
  assert.equal((await search(`irn=${irnOf("INV0001")}`)).total, 1);
  assert.equal((await search("invoice_type_code=381&tax_currency_code=NGN&issue_date=2026-11-15")).total, 3);
  assert.equal((await search("document_currency_code=USD")).total, 0);
  assert.equal((await search("entry_status=SIGNED&due_date=2026-12-15")).total, 3);
  const item = all.items[0] as Json;
  assert.equal(item.business_id, tp.business_id);
  assert.equal(item.payment_status, "PENDING");

  refused(
    await call(sim, "GET", `/api/v1/invoice/${tp.business_id}?size=0`),
    "size must be a whole number from 1 to 100",
  );
  refused(
    await call(sim, "GET", `/api/v1/invoice/${tp.business_id}?size=abc`),
    /size must be a whole number/,
  );
  refused(
    await call(sim, "GET", `/api/v1/invoice/${tp.business_id}?sort_by=secret`),
    /sort_by must be one of/,
  );
  refused(
    await call(sim, "GET", `/api/v1/invoice/${tp.business_id}?sort_direction_desc=yes`),
    /sort_direction_desc/,
  );
  failure(
    await call(sim, "GET", "/api/v1/invoice/00000000-0000-4000-8000-000000000000"),
    404,
    "business not found",
  );
});

test("update moves the payment status along the allowed transitions only", async (t) => {
  const sim = await simulator(t);
  const tp = first(sim);
  const update = (irn: string, body: unknown) =>
    call(sim, "PATCH", `/api/v1/invoice/update/${irn}`, { body });
  const a = await signed(sim, invoiceFor(tp, "INVA"));
  const b = await signed(sim, invoiceFor(tp, "INVB"));
  const c = await signed(sim, invoiceFor(tp, "INVC"));

  failure(await update(`INVX-${tp.service_id}-20261115`, { payment_status: "PAID" }), 404, INVOICE_NOT_FOUND);
  refused(await update(a, {}), "updaterequest.paymentstatus is required");
  refused(await update(a, { payment_status: "CANCELED" }), /updaterequest\.paymentstatus must be one of/);
  refused(await update(a, "PAID"), "updaterequest must be a JSON object");

  // PENDING → PAID, then the same again (a retry after a lost answer) changes nothing.
  const paid = data(await update(a, { payment_status: "PAID", reference: "RCPT-1" }));
  assert.equal(paid.payment_status, "PAID");
  assert.equal((paid.payments as Json[]).length, 1);
  assert.equal((data(await update(a, { payment_status: "PAID" })).payments as Json[]).length, 1);
  const back = failure(await update(a, { payment_status: "PENDING" }), 400, INVALID_TRANSITION);
  assert.equal(back.details, "payment status PAID cannot become PENDING");
  failure(
    await update(a, { payment_status: "PARTIAL", amount: 5, payment_update_date: "2026-11-20" }),
    400,
    INVALID_TRANSITION,
  );

  // PARTIAL needs the amount and the date; it may repeat and end in PAID, not in REJECTED.
  refused(
    await update(b, { payment_status: "PARTIAL", payment_update_date: "2026-11-20" }),
    "updaterequest.amount is required for PARTIAL",
  );
  refused(
    await update(b, { payment_status: "PARTIAL", amount: 100 }),
    "updaterequest.paymentupdatedate is required for PARTIAL",
  );
  refused(
    await update(b, { payment_status: "PARTIAL", amount: 0, payment_update_date: "2026-11-20" }),
    /amount must be a number above 0/,
  );
  refused(
    await update(b, { payment_status: "PARTIAL", amount: "100", payment_update_date: "2026-11-20" }),
    /amount/,
  );
  refused(
    await update(b, { payment_status: "PARTIAL", amount: 100, payment_update_date: "2026-11-31" }),
    /paymentupdatedate/,
  );
  data(await update(b, { payment_status: "PARTIAL", amount: 100000, payment_update_date: "2026-11-20" }));
  data(
    await update(b, {
      payment_status: "PARTIAL",
      amount: 200000,
      payment_update_date: "2026-11-21T10:00:00Z",
    }),
  );
  failure(await update(b, { payment_status: "REJECTED" }), 400, INVALID_TRANSITION);
  failure(await update(b, { payment_status: "PENDING" }), 400, INVALID_TRANSITION);
  const done = data(await update(b, { payment_status: "PAID" }));
  assert.deepEqual(
    (done.payments as Json[]).map((p) => [p.payment_status, p.amount]),
    [
      ["PARTIAL", 100000],
      ["PARTIAL", 200000],
      ["PAID", null],
    ],
  );

  // REJECTED is final too.
  data(await update(c, { payment_status: "REJECTED" }));
  data(await update(c, { payment_status: "REJECTED" }));
  failure(await update(c, { payment_status: "PAID" }), 400, INVALID_TRANSITION);
  assert.equal((sim.invoice(c) as Json).payment_status, "REJECTED");
  assert.equal((sim.invoice(b) as Json).payment_status, "PAID");
});
