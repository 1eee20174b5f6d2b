import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type TestContext, test } from "node:test";
import { RESOURCE_NOT_FOUND } from "../../../src/simulators/mbs/envelopes.ts";
import { startMbsSimulator } from "../../../src/simulators/mbs/server.ts";
import { ISIC_JSON, type Json, SHARED_DIR } from "../../helpers.ts";
import { call, data, failure, first, invoiceFor, refused, simulator } from "./harness.ts";

// [recorded] The authority's five reference lists as its sandbox served them, read from a folder at
// start (`resourcesDir`, `simulate mbs --resources`): answered exactly, and the simulator's own
// validation checks documents against them. Without the folder, the built-in lists.

const MBS_DIR = path.join(SHARED_DIR, "data", "mbs");
const FILES = ["countries", "currencies", "invoice-types", "vat-exemptions", "services-codes"] as const;
const SIZES = {
  countries: 249,
  currencies: 118,
  "invoice-types": 20,
  "vat-exemptions": 236,
  "services-codes": 419,
};
/** The lists no capture shows: always the simulator's own. */
const OTHERS = ["tax-categories", "payment-means", "hs-codes", "states", "lgas", "invoice-quantity-codes"];

const fileOf = (dir: string, list: string) => fs.readFileSync(path.join(dir, `${list}.json`), "utf8");
const list = (sim: { url: string; api_key: string; api_secret: string }, name: string) =>
  call(sim, "GET", `/api/v1/invoice/resources/${name}`, { auth: false });

/** A folder holding copies of the authority's five files, for a test to spoil one of them. */
function copyOfLists(t: TestContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mbs-resources-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  for (const name of FILES)
    fs.copyFileSync(path.join(MBS_DIR, `${name}.json`), path.join(dir, `${name}.json`));
  return dir;
}

test("[recorded] given the authority's lists, the five resources answer exactly their entries in {code: 200, data}", async (t) => {
  const sim = await simulator(t, { resourcesDir: MBS_DIR });
  const builtIn = await simulator(t, { taxpayers: 1 });
  for (const name of FILES) {
    const expected = JSON.parse(fileOf(MBS_DIR, name)) as Json[];
    assert.equal(expected.length, SIZES[name], `the shared file ${name}.json`);
    for (const auth of [false, true]) {
      const reply = await call(sim, "GET", `/api/v1/invoice/resources/${name}`, { auth });
      assert.equal(reply.status, 200, name);
      assert.deepEqual(reply.body, { code: 200, data: expected }, name);
      // Field order as served too (deepEqual ignores it): a client printing the list sees MBS's.
      assert.equal(JSON.stringify(reply.body.data), JSON.stringify(expected), `${name}: field order`);
    }
  }
  // The built-in lists are not the authority's: what differs is what a folder is for.
  const currencies = (data(await list(builtIn, "currencies")) as unknown as Json[]).map((c) => c.code);
  assert.equal(currencies.length, 119);
  assert.ok(currencies.includes("BYN") && currencies.includes("ZWL") && !currencies.includes("BYR"));
  assert.notDeepEqual(data(await list(builtIn, "countries")), data(await list(sim, "countries")));
  for (const name of OTHERS) {
    assert.deepEqual(data(await list(sim, name)), data(await list(builtIn, name)), `${name} stays built in`);
  }
  assert.equal(
    sim.referenceLists,
    `reference lists from ${MBS_DIR} (countries 249, currencies 118, invoice-types 20, vat-exemptions 236, services-codes 419)`,
  );
  assert.match(
    builtIn.referenceLists,
    /^reference lists built in \(countries 249, currencies 119, .*not the authority's own/,
  );
});

test("documents are checked against the lists served: the authority's currencies have BYR, not BYN or ZWL", async (t) => {
  const real = await simulator(t, { resourcesDir: MBS_DIR });
  const builtIn = await simulator(t);
  const refusal = (field: string) =>
    `invoicerequest.invoice.${field} must be a valid currency code, refer to the invoice resource apis`;
  for (const sim of [real, builtIn]) {
    // The shared full invoice passes either way: NGN, NG, 381 are in both.
    data(await call(sim, "POST", "/api/v1/invoice/validate", { body: invoiceFor(first(sim)) }));
  }
  const withCurrency = (sim: typeof real, code: string) => ({
    ...invoiceFor(first(sim)),
    document_currency_code: code,
  });
  data(await call(real, "POST", "/api/v1/invoice/validate", { body: withCurrency(real, "BYR") }));
  for (const code of ["BYN", "ZWL"]) {
    refused(
      await call(real, "POST", "/api/v1/invoice/validate", { body: withCurrency(real, code) }),
      refusal("documentcurrencycode"),
    );
    data(await call(builtIn, "POST", "/api/v1/invoice/validate", { body: withCurrency(builtIn, code) }));
  }
  refused(
    await call(builtIn, "POST", "/api/v1/invoice/validate", { body: withCurrency(builtIn, "BYR") }),
    refusal("documentcurrencycode"),
  );
  // The VAT report's currency reads the same list.
  const report = {
    agent_tin: "20198222-0002",
    beneficiary_tin: "31845560-0001",
    currency: "ZWL",
    irn: "INV0001-ABCD1234-20261115",
    base_amount: "100.00",
    vat_rate: "7.5",
    vat_calculated: "7.50",
    other_taxes: "0.00",
    total_amount: "107.50",
    transaction_date: "2026-11-15",
    item_description: "Cement",
    integrator_service_id: "ABCD1234",
    vat_status: "STANDARD_VAT",
  };
  refused(
    await call(real, "POST", "/api/v1/vat/postpayment", { body: report }),
    "vatpaymentrequest.currency must be a valid currency code, refer to the invoice resource apis",
  );
  data(await call(builtIn, "POST", "/api/v1/vat/postpayment", { body: report }));
  // Countries and invoice types: the same codes in both, still checked against the list.
  const abroad = invoiceFor(first(real));
  (abroad.accounting_customer_party as Json).postal_address = { city_name: "Accra", country: "GH" };
  data(await call(real, "POST", "/api/v1/invoice/validate", { body: abroad }));
  (abroad.accounting_customer_party as Json).postal_address = { city_name: "Accra", country: "GHA" };
  refused(
    await call(real, "POST", "/api/v1/invoice/validate", { body: abroad }),
    /postaladdress\.country must be/,
  );
  refused(
    await call(real, "POST", "/api/v1/invoice/validate", {
      body: { ...invoiceFor(first(real)), invoice_type_code: "999" },
    }),
    "invoicerequest.invoice.invoicetypecode must be a valid invoice type code, refer to the invoice resource apis",
  );
});

test("a folder's file may be the whole answer, carry a byte-order mark or more fields: served as read", async (t) => {
  const dir = copyOfLists(t);
  const types = JSON.parse(fileOf(MBS_DIR, "invoice-types")) as Json[];
  fs.writeFileSync(path.join(dir, "invoice-types.json"), JSON.stringify({ code: 200, data: types }));
  fs.writeFileSync(path.join(dir, "countries.json"), `\uFEFF${fileOf(MBS_DIR, "countries")}`);
  const codes = JSON.parse(fileOf(MBS_DIR, "services-codes")) as Json[];
  const more = codes.map((c, i) => (i === 0 ? { ...c, section: "A" } : c));
  fs.writeFileSync(path.join(dir, "services-codes.json"), JSON.stringify(more));
  const sim = await simulator(t, { resourcesDir: dir, taxpayers: 1 });
  assert.deepEqual(data(await list(sim, "invoice-types")), types);
  assert.deepEqual(data(await list(sim, "countries")), JSON.parse(fileOf(MBS_DIR, "countries")));
  assert.deepEqual(data(await list(sim, "services-codes")), more);
});

test("a folder missing a file, or a file that is not the list, fails the start and says which and why", async (t) => {
  const broken: [string, (dir: string) => void, RegExp][] = [
    [
      "a missing file",
      (d) => fs.rmSync(path.join(d, "vat-exemptions.json")),
      /vat-exemptions\.json is missing/,
    ],
    [
      "not JSON",
      (d) => fs.writeFileSync(path.join(d, "currencies.json"), "[{"),
      /currencies\.json is not valid JSON/,
    ],
    [
      "not a list",
      (d) => fs.writeFileSync(path.join(d, "countries.json"), '{"code": 400, "data": null}'),
      /countries\.json must hold a list of entries, .*it holds object/,
    ],
    [
      "an empty list",
      (d) => fs.writeFileSync(path.join(d, "invoice-types.json"), "[]"),
      /invoice-types\.json holds no entries/,
    ],
    [
      "an entry without a field",
      (d) => fs.writeFileSync(path.join(d, "services-codes.json"), '[{"code": "0111"}]'),
      /services-codes\.json \[0\] has no description/,
    ],
    [
      "a field of another type",
      (d) => {
        const rows = JSON.parse(fileOf(MBS_DIR, "currencies")) as Json[];
        rows[3] = { ...rows[3], decimal_digits: "2" };
        fs.writeFileSync(path.join(d, "currencies.json"), JSON.stringify(rows));
      },
      /currencies\.json \[3\]\.decimal_digits must be a number, not string "2"/,
    ],
    [
      "a code not in the spec's form",
      (d) =>
        fs.writeFileSync(
          path.join(d, "countries.json"),
          fileOf(MBS_DIR, "countries").replace('"NG"', '"ng"'),
        ),
      /countries\.json \[\d+\]\.alpha_2 "ng" is not two capital letters/,
    ],
    [
      "an entry that is no object",
      (d) => fs.writeFileSync(path.join(d, "invoice-types.json"), '["380"]'),
      /\[0\] must be an object, not string/,
    ],
  ];
  for (const [name, spoil, message] of broken) {
    const dir = copyOfLists(t);
    spoil(dir);
    await assert.rejects(startMbsSimulator({ resourcesDir: dir, taxpayers: 1 }), message, name);
    await assert.rejects(
      startMbsSimulator({ resourcesDir: dir, taxpayers: 1 }),
      /^Error: MBS resources folder /,
      name,
    );
  }
  await assert.rejects(
    startMbsSimulator({ resourcesDir: path.join(os.tmpdir(), "no-such-mbs-folder") }),
    /MBS resources folder .*no-such-mbs-folder is not a folder \(it must hold countries\.json, currencies\.json/,
  );
  await assert.rejects(
    startMbsSimulator({ resourcesDir: MBS_DIR, isicFile: ISIC_JSON }),
    /--resources\) or a services codes file \(--services-codes\), not both/,
  );
});

test("resource lists answer without credentials; an unknown list is a 404", async (t) => {
  const sim = await simulator(t);
  const lists = [
    "countries",
    "currencies",
    "invoice-types",
    "payment-means",
    "tax-categories",
    "vat-exemptions",
    "services-codes",
    "hs-codes",
    "lgas",
    "states",
    "invoice-quantity-codes",
  ];
  for (const list of lists) {
    for (const auth of [false, true]) {
      const rows = data(await call(sim, "GET", `/api/v1/invoice/resources/${list}`, { auth }));
      assert.ok(Array.isArray(rows) && rows.length > 0, list);
    }
  }
  const codes = data(await call(sim, "GET", "/api/v1/invoice/resources/services-codes", { auth: false }));
  assert.equal((codes as unknown as Json[]).length, 16, "the extract by default");
  const types = data(await call(sim, "GET", "/api/v1/invoice/resources/invoice-types", { auth: false }));
  assert.ok((types as unknown as Json[]).some((r) => r.code === "381"));
  const lgas = data(await call(sim, "GET", "/api/v1/invoice/resources/lgas", { auth: false }));
  assert.ok(
    (lgas as unknown as Json[]).some((r) => r.code === "NG-AB-ANO"),
    "the fixture's LGA",
  );
  for (const list of ["nothing", "constructor", "__proto__"]) {
    failure(
      await call(sim, "GET", `/api/v1/invoice/resources/${list}`, { auth: false }),
      404,
      RESOURCE_NOT_FOUND,
    );
  }
});

test("services-codes: the 419 ISIC Rev. 4 classes from a file; a file without classes is refused", async (t) => {
  const sim = await simulator(t, { isicFile: ISIC_JSON });
  const rows = data(
    await call(sim, "GET", "/api/v1/invoice/resources/services-codes", { auth: false }),
  ) as unknown as Json[];
  assert.equal(rows.length, 419);
  assert.deepEqual(rows[0], {
    code: "0111",
    description: "Growing of cereals (except rice), leguminous crops and oil seeds",
  });
  assert.equal(rows.at(-1)?.code, "9900");
  assert.ok(rows.every((r) => /^\d{4}$/.test(String(r.code))));

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mbs-isic-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const empty = path.join(dir, "empty.json");
  fs.writeFileSync(empty, JSON.stringify({ sections: [] }));
  await assert.rejects(startMbsSimulator({ isicFile: empty }), /no ISIC class found/);
  await assert.rejects(
    startMbsSimulator({ isicFile: path.join(dir, "missing.json") }),
    /services codes file/,
  );
});
