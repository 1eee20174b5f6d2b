import assert from "node:assert/strict";
import { createDecipheriv, createHash } from "node:crypto";
import { test } from "node:test";
import { INVOICE_NOT_FOUND } from "../../../src/simulators/mbs/envelopes.ts";
import { IRN_REFUSED } from "../../../src/simulators/mbs/irn.ts";
import type { Json } from "../../helpers.ts";
import { call, data, failure, first, invoiceFor, refused, signed, simulator, tryLater } from "./harness.ts";

test("irn/validate accepts an IRN on the business's template and refuses each way of missing it", async (t) => {
  const sim = await simulator(t);
  const tp = first(sim);
  const check = (body: Json) => call(sim, "POST", "/api/v1/invoice/irn/validate", { body });
  const irn = `INV0042-${tp.service_id}-20261115`;
  const good = { business_id: tp.business_id, invoice_reference: "INV0042", irn };
  assert.deepEqual(data(await check(good)), { ok: true, irn });

  // [client] whatever is wrong with the IRN, the one template refusal.
  const other = sim.taxpayers[1]?.service_id;
  for (const wrong of [
    `INV0042-${other}-20261115`,
    `INV/0042-${tp.service_id}-20261115`,
    `INV-0042-${tp.service_id}-20261115`,
    `inv0042-${tp.service_id}-20261115`,
    `INV0042-${tp.service_id}-20260230`,
    `INV0042-${tp.service_id}-2026111`,
  ]) {
    refused(await check({ ...good, irn: wrong }), IRN_REFUSED);
  }
  // [doc] invoice_reference is the invoice-number part, but no refusal of another is recorded, and
  // integrators send the number as typed: required, not compared.
  data(await check({ ...good, invoice_reference: "INV-0042" }));
  refused(
    await check({ ...good, business_id: "00000000-0000-4000-8000-000000000000" }),
    "irnrequest.businessid must be a valid business, refer to the entity apis",
  );
  refused(await check({ ...good, business_id: "nobody" }), "invalid UUID length: 6");
  refused(await check({ irn }), "irnrequest.businessid is required");
  refused(await check({ ...good, invoice_reference: undefined }), "irnrequest.invoicereference is required");
});

test("validate accepts the full invoice without registering it", async (t) => {
  const sim = await simulator(t);
  const doc = invoiceFor(first(sim));
  assert.deepEqual(data(await call(sim, "POST", "/api/v1/invoice/validate", { body: doc })), {
    ok: true,
    irn: doc.irn,
  });
  failure(await call(sim, "GET", `/api/v1/invoice/confirm/${doc.irn}`), 404, INVOICE_NOT_FOUND);
  assert.equal(sim.registrations().size, 0);
});

test("the authority's own examples are accepted: both fixtures, a long price_unit, CANCELED, LOCAL_SALES_TAX", async (t) => {
  const sim = await simulator(t);
  const tp = first(sim);
  const minimal = invoiceFor(tp, "INV0002", "invoice-minimal");
  await signed(sim, minimal);
  const doc = invoiceFor(tp, "INV0003");
  // [doc] the collection's examples: "NGN per 1", a CANCELED status, LOCAL_SALES_TAX, an IRN date
  // that is not the issue date, TINs like TIN-0099990001.
  ((doc.invoice_line as Json[])[0]?.price as Json).price_unit = "NGN per 1";
  doc.payment_status = "CANCELED";
  const total = (doc.tax_total as Json[])[0] as Json;
  ((total.tax_subtotal as Json[])[0] as Json).tax_category = { id: "LOCAL_SALES_TAX", percent: 7.5 };
  doc.issue_date = "2026-11-14";
  (doc.accounting_customer_party as Json).tin = "TIN-0099990001";
  // [client] a service line with its ISIC code and category, and no invoice_kind.
  Object.assign((doc.invoice_line as Json[])[1] as Json, {
    isic_code: "4663",
    service_category: "Wholesale",
  });
  delete doc.invoice_kind;
  await signed(sim, doc);
  assert.equal(sim.registrations().size, 2);
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
  );
  const doc = invoiceFor(tp);
  doc.accounting_customer_party = { id: party.id };
  await signed(sim, doc);
});

test("sign registers the IRN once (200) and answers a second sign with the try-later refusal", async (t) => {
  const sim = await simulator(t);
  const doc = invoiceFor(first(sim));
  const reply = await call(sim, "POST", "/api/v1/invoice/sign", { body: doc });
  assert.deepEqual(reply, {
    status: 200,
    body: { code: 200, data: { ok: true, irn: doc.irn, status: "SIGNED" } },
  });
  tryLater(await call(sim, "POST", "/api/v1/invoice/sign", { body: doc }));
  assert.deepEqual([...sim.registrations()], [[doc.irn, 1]]);
  assert.deepEqual([...sim.refusedSigns()], [[doc.irn, 1]], "the refused second sign is counted");
  // validate does not look at the registry by default (the duplicate_at_validate rule).
  data(await call(sim, "POST", "/api/v1/invoice/validate", { body: doc }));
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
    { ...state, signed_at: "", sync_date: "" },
    {
      irn,
      business_id: doc.business_id,
      issue_date: "2026-11-15",
      due_date: "2026-12-15",
      sync_date: "",
      entry_status: "SIGNED",
      payment_status: "PENDING",
      transmitted: false,
      delivered: false,
      signed_at: "",
      transmitted_at: null,
      delivered_at: null,
    },
  );
  const download = data(await call(sim, "GET", `/api/v1/invoice/download/${irn}`));
  assert.deepEqual(Object.keys(download), [
    "irn",
    "business_id",
    "signed_at",
    "document",
    "iv_hex",
    "pub",
    "data",
  ]);
  assert.equal(download.irn, irn);
  // [client] iv_hex, pub and data: the document, AES-256-CFB with the SHA-256 of the certificate.
  const keys = data(await call(sim, "GET", `/api/v1/invoice/crypto_keys/${doc.business_id}`));
  assert.equal(download.pub, keys.public_key);
  const key = createHash("sha256")
    .update(Buffer.from(String(keys.certificate), "base64"))
    .digest();
  const decipher = createDecipheriv("aes-256-cfb", key, Buffer.from(String(download.iv_hex), "hex"));
  const plain = Buffer.concat([
    decipher.update(Buffer.from(String(download.data), "base64")),
    decipher.final(),
  ]);
  assert.deepEqual(JSON.parse(plain.toString("utf8")), doc);
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

test("update: the documented statuses, PARTIAL with its amount and date, signed invoices only; every move is taken", async (t) => {
  const sim = await simulator(t);
  const tp = first(sim);
  const update = (irn: string, body: unknown) =>
    call(sim, "PATCH", `/api/v1/invoice/update/${irn}`, { body });
  const status = (irn: string) => (sim.invoice(irn) as Json).payment_status;
  const a = await signed(sim, invoiceFor(tp, "INVA"));
  const b = await signed(sim, invoiceFor(tp, "INVB"));
  const c = await signed(sim, invoiceFor(tp, "INVC"));

  // [client] only signed invoices can be updated.
  failure(await update(`INVX-${tp.service_id}-20261115`, { payment_status: "PAID" }), 404, INVOICE_NOT_FOUND);
  refused(await update(a, {}), "updaterequest.paymentstatus is required");
  refused(
    await update(a, { payment_status: "OWED" }),
    "updaterequest.paymentstatus must be one of [PENDING PAID PARTIAL REJECTED CANCELED]",
  );
  refused(await update(a, "PAID"), "updaterequest must be a JSON object");

  // PENDING → PAID, then the same again (a retry after a lost answer) changes nothing.
  const paid = data(await update(a, { payment_status: "PAID", reference: "RCPT-1" }));
  assert.equal(paid.payment_status, "PAID");
  assert.equal((paid.payments as Json[]).length, 1);
  assert.equal((data(await update(a, { payment_status: "PAID" })).payments as Json[]).length, 1);

  // [client] PARTIAL needs the amount and the date; it may repeat (instalments).
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
  const done = data(await update(b, { payment_status: "PAID" }));
  assert.deepEqual(
    (done.payments as Json[]).map((p) => [p.payment_status, p.amount]),
    [
      ["PARTIAL", 100000],
      ["PARTIAL", 200000],
      ["PAID", null],
    ],
  );

  // No material records a refused move between statuses: back to PENDING, PARTIAL after PAID,
  // PAID after CANCELED or REJECTED, CANCELED after PARTIAL are all taken, each recorded.
  const moves: [string, string, Json][] = [
    [a, "PENDING", { payment_status: "PENDING" }],
    [a, "PARTIAL", { payment_status: "PARTIAL", amount: 5, payment_update_date: "2026-11-20" }],
    [a, "CANCELED", { payment_status: "CANCELED" }],
    [a, "PAID", { payment_status: "PAID" }],
    [b, "PARTIAL", { payment_status: "PARTIAL", amount: 7, payment_update_date: "2026-11-22" }],
    [b, "REJECTED", { payment_status: "REJECTED" }],
    [b, "PENDING", { payment_status: "PENDING" }],
    [c, "CANCELED", { payment_status: "CANCELED" }],
    [c, "CANCELED", { payment_status: "CANCELED" }],
    [c, "REJECTED", { payment_status: "REJECTED" }],
    [c, "PAID", { payment_status: "PAID", reference: "RCPT-2" }],
  ];
  for (const [irn, to, body] of moves) {
    const from = status(irn);
    assert.equal(data(await update(irn, body)).payment_status, to, `${from} → ${to}`);
    assert.equal(status(irn), to);
  }
  assert.deepEqual(
    ((sim.invoice(a) as Json).payments as Json[]).map((p) => p.payment_status),
    ["PAID", "PENDING", "PARTIAL", "CANCELED", "PAID"],
  );
  assert.deepEqual(
    ((sim.invoice(c) as Json).payments as Json[]).map((p) => p.payment_status),
    ["CANCELED", "REJECTED", "PAID"],
    "the repeated CANCELED changed nothing",
  );
});
