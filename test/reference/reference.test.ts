import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { parse } from "csv-parse/sync";
import type { LightMyRequestResponse } from "fastify";
import { build, HS_CSV, ISIC_JSON, ISO_TIMESTAMP, type Json, tempDir, tenant } from "../helpers.ts";

const RES = "/api/v1/einvoice/resources";

type CodeValue = { code: string; value: string };
type Product = { hscode: string; description: string };
type ProductsPage = { draw: number; recordsTotal: number; recordsFiltered: number; data: Product[] };
type Service = { code: string; description: string };
type Lga = { name: string; code: string; state_code: string };

function json<T>(res: LightMyRequestResponse): T {
  return JSON.parse(res.body) as T;
}

/** A reference envelope `{code: 200, data}` with nothing else, returning its data. */
function referenceData<T>(res: LightMyRequestResponse): T[] {
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers["content-type"]), /^application\/json/);
  const body = json<Json>(res);
  assert.deepEqual(Object.keys(body).sort(), ["code", "data"]);
  assert.equal(body.code, 200);
  assert.ok(Array.isArray(body.data), "data is an array");
  return body.data as T[];
}

// ---- The lists exactly as the spec writes them, in its order. ----

const INVOICE_TYPES: CodeValue[] = [
  ["380", "Credit Note"],
  ["381", "Commercial Invoice"],
  ["384", "Debit Note"],
  ["385", "Self Billed Invoice"],
  ["386", "Factored Invoice"],
  ["388", "Statement of Account"],
  ["389", "Purchase Order"],
  ["390", "Proforma Invoice"],
  ["392", "Consignment Invoice"],
  ["393", "Self-billed Credit Note"],
  ["394", "Self-billed Invoice"],
  ["395", "Credit Note Request"],
  ["396", "Invoice Request"],
  ["397", "Final Settlement"],
  ["399", "Bill of Lading"],
  ["400", "Waybill"],
  ["402", "Shipping Instructions"],
  ["404", "Certificate of Origin"],
  ["406", "Customs Declaration"],
  ["408", "Packing List"],
].map(([code, value]) => ({ code: String(code), value: String(value) }));

const PAYMENT_MEANS: CodeValue[] = [
  ["10", "Cash"],
  ["20", "Cheque"],
  ["30", "Credit Transfer"],
  ["31", "Debit Transfer"],
  ["42", "ACH Credit"],
  ["43", "ACH Debit"],
  ["48", "Bank Card"],
  ["49", "Direct Debit"],
  ["50", "Credit Card"],
  ["58", "Banker's Draft"],
  ["97", "Other"],
  ["ZZZ", "Mutually Defined"],
].map(([code, value]) => ({ code: String(code), value: String(value) }));

/** Codes and `percent` texts are the spec's; each `value` is the readable name of its code. */
const TAX_CATEGORIES = [
  ["STANDARD_GST", "Standard Goods and Services Tax", "Not Available"],
  ["REDUCED_GST", "Reduced Goods and Services Tax", "Not Available"],
  ["ZERO_GST", "Zero-rated Goods and Services Tax", "Not Available"],
  ["STANDARD_VAT", "Standard Value-Added Tax", "7.5"],
  ["REDUCED_VAT", "Reduced Value-Added Tax", "7.5"],
  ["ZERO_VAT", "Zero-rated Value-Added Tax", "0.0"],
  ["STATE_SALES_TAX", "State Sales Tax", "Not Available"],
  ["LOCAL_SALES_TAX", "Local Sales Tax", "Not Available"],
  ["ALCOHOL_EXCISE_TAX", "Alcohol Excise Tax", "Not Available"],
  ["TOBACCO_EXCISE_TAX", "Tobacco Excise Tax", "Not Available"],
  ["FUEL_EXCISE_TAX", "Fuel Excise Tax", ""],
  ["CORPORATE_INCOME_TAX", "Corporate Income Tax", "Not Available"],
  ["PERSONAL_INCOME_TAX", "Personal Income Tax", "Not Available"],
  ["SOCIAL_SECURITY_TAX", "Social Security Tax", "Not Available"],
  ["MEDICARE_TAX", "Medicare Tax", ""],
  ["REAL_ESTATE_TAX", "Real Estate Tax", "Not Available"],
  ["PERSONAL_PROPERTY_TAX", "Personal Property Tax", "Not Available"],
  ["CARBON_TAX", "Carbon Tax", "Not Available"],
  ["PLASTIC_TAX", "Plastic Tax", "Not Available"],
  ["IMPORT_DUTY", "Import Duty", "Not Available"],
  ["EXPORT_DUTY", "Export Duty", "Not Available"],
  ["LUXURY_TAX", "Luxury Tax", "Not Available"],
  ["SERVICE_TAX", "Service Tax", "Not Available"],
  ["TOURISM_TAX", "Tourism Tax", "Not Available"],
].map(([code, value, percent]) => ({ code: String(code), value: String(value), percent: String(percent) }));

const STATES = [
  ["NG-AB", "Abia"],
  ["NG-AD", "Adamawa"],
  ["NG-AK", "Akwa Ibom"],
  ["NG-AN", "Anambra"],
  ["NG-BA", "Bauchi"],
  ["NG-BE", "Benue"],
  ["NG-BO", "Borno"],
  ["NG-BY", "Bayelsa"],
  ["NG-CR", "Cross River"],
  ["NG-DE", "Delta"],
  ["NG-EB", "Ebonyi"],
  ["NG-ED", "Edo"],
  ["NG-EK", "Ekiti"],
  ["NG-EN", "Enugu"],
  ["NG-FC", "Abuja Federal Capital Territory"],
  ["NG-GO", "Gombe"],
  ["NG-IM", "Imo"],
  ["NG-JI", "Jigawa"],
  ["NG-KD", "Kaduna"],
  ["NG-KE", "Kebbi"],
  ["NG-KN", "Kano"],
  ["NG-KO", "Kogi"],
  ["NG-KT", "Katsina"],
  ["NG-KW", "Kwara"],
  ["NG-LA", "Lagos"],
  ["NG-NA", "Nasarawa"],
  ["NG-NI", "Niger"],
  ["NG-OG", "Ogun"],
  ["NG-ON", "Ondo"],
  ["NG-OS", "Osun"],
  ["NG-OY", "Oyo"],
  ["NG-PL", "Plateau"],
  ["NG-RI", "Rivers"],
  ["NG-SO", "Sokoto"],
  ["NG-TA", "Taraba"],
  ["NG-YO", "Yobe"],
  ["NG-ZA", "Zamfara"],
].map(([code, name]) => ({ name: String(name), code: String(code) }));

const UNITS = [
  ["bag", "Bag"],
  ["bar", "Bar"],
  ["bottle", "Bottle"],
  ["box", "Box"],
  ["bundle", "Bundle"],
  ["capsule", "Capsule"],
  ["carton", "Carton"],
  ["cm", "Centimeter"],
  ["crate", "Crate"],
  ["doz", "Dozen"],
  ["fl oz", "Fluid Ounce"],
  ["ft", "Foot"],
  ["gal", "Gallon"],
  ["g", "Gram"],
  ["in", "Inch"],
  ["kg", "Kilogram"],
  ["km", "Kilometer"],
  ["l", "Litre"],
  ["m", "Meter"],
  ["mi", "Mile"],
  ["mg", "Milligram"],
  ["ml", "Millilitre"],
  ["mm", "Millimeter"],
  ["oz", "Ounce"],
  ["pkt", "Packet"],
  ["pair", "Pair"],
  ["pcs", "Pieces"],
  ["pt", "Pint"],
  ["lb", "Pound"],
  ["qt", "Quart"],
  ["roll", "Roll"],
  ["sachet", "Sachet"],
  ["set", "Set"],
  ["sheet", "Sheet"],
  ["tablet", "Tablet"],
  ["t", "Ton"],
  ["yd", "Yard"],
].map(([code, name]) => ({ code: String(code), name: String(name) }));

/** An app with one tenant and both catalogs imported. */
async function withCatalogs(t: Parameters<typeof build>[0]) {
  const built = await build(t);
  const who = await tenant(built.ctx);
  assert.deepEqual(await built.ctx.reference.importProducts(HS_CSV), { catalog: "products", imported: 5613 });
  assert.deepEqual(await built.ctx.reference.importServices(ISIC_JSON), {
    catalog: "services",
    imported: 419,
  });
  const get = (url: string) => built.app.inject({ method: "GET", url, headers: who.headers });
  const products = async (query: string) => {
    const res = await get(`${RES}/products${query}`);
    assert.equal(res.statusCode, 200, res.body);
    const page = json<ProductsPage>(res);
    assert.deepEqual(Object.keys(page).sort(), ["data", "draw", "recordsFiltered", "recordsTotal"]);
    return page;
  };
  const services = async (query: string) => referenceData<Service>(await get(`${RES}/services${query}`));
  return { ...built, who, get, products, services };
}

// ---- Static lists ----

test("currencies: reference envelope, seven typed fields per record, NGN with two decimals", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  const data = referenceData<Json>(
    await app.inject({ method: "GET", url: `${RES}/currencies`, headers: who.headers }),
  );
  assert.ok(data.length > 100, `expected the full currency list, got ${data.length}`);
  const fields = ["code", "decimal_digits", "name", "name_plural", "rounding", "symbol", "symbol_native"];
  const codes = new Set<string>();
  for (const c of data) {
    assert.deepEqual(Object.keys(c).sort(), fields, JSON.stringify(c));
    for (const k of ["symbol", "name", "symbol_native", "name_plural", "code"]) {
      assert.equal(typeof c[k], "string", `${k} of ${JSON.stringify(c)}`);
    }
    assert.ok(Number.isInteger(c.decimal_digits), `decimal_digits of ${String(c.code)}`);
    assert.equal(typeof c.rounding, "number");
    assert.ok(Number.isFinite(c.rounding));
    assert.match(String(c.code), /^[A-Z]{3}$/);
    codes.add(String(c.code));
  }
  assert.equal(codes.size, data.length, "currency codes are unique");
  const ngn = data.find((c) => c.code === "NGN");
  assert.ok(ngn, "NGN is listed");
  assert.equal(ngn.decimal_digits, 2);
  assert.ok(codes.has("USD") && codes.has("EUR"));
});

test("invoice types, payment means, tax categories and states are exactly the spec's lists in order", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  const get = (p: string) => app.inject({ method: "GET", url: `${RES}/${p}`, headers: who.headers });

  assert.deepEqual(referenceData(await get("invoices-types")), INVOICE_TYPES);
  assert.deepEqual(referenceData(await get("payment-means")), PAYMENT_MEANS);

  const taxes = referenceData<{ code: string; value: string; percent: string }>(await get("tax-categories"));
  assert.deepEqual(
    taxes.map((x) => ({ code: x.code, percent: x.percent })),
    TAX_CATEGORIES.map((x) => ({ code: x.code, percent: x.percent })),
  );
  assert.deepEqual(taxes, TAX_CATEGORIES);
  const byCode = new Map(taxes.map((x) => [x.code, x]));
  assert.equal(byCode.get("FUEL_EXCISE_TAX")?.percent, "");
  assert.equal(byCode.get("MEDICARE_TAX")?.percent, "");
  assert.equal(byCode.get("STANDARD_VAT")?.percent, "7.5");
  assert.equal(byCode.get("ZERO_VAT")?.percent, "0.0");
  for (const x of taxes) assert.equal(typeof x.percent, "string");

  const states = referenceData<{ name: string; code: string }>(await get("states"));
  assert.equal(states.length, 37);
  assert.deepEqual(states, STATES);
});

test("units of measurement: the units envelope and the spec's 37 units in order", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  const res = await app.inject({ method: "GET", url: `${RES}/units-of-measurement`, headers: who.headers });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(json(res), { status: true, message: "Units fetched successfully", data: UNITS });
  assert.equal(UNITS.length, 37);
});

test("lgas: 774 well-formed, unique codes within the 37 states, known real codes", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  const lgas = referenceData<Lga>(
    await app.inject({ method: "GET", url: `${RES}/lgas`, headers: who.headers }),
  );
  assert.equal(lgas.length, 774);
  const stateCodes = new Set(STATES.map((s) => s.code));
  const seen = new Set<string>();
  const perState = new Map<string, number>();
  for (const l of lgas) {
    assert.deepEqual(Object.keys(l).sort(), ["code", "name", "state_code"], JSON.stringify(l));
    assert.equal(typeof l.name, "string");
    assert.ok(l.name.trim().length > 0);
    assert.match(l.code, /^NG-[A-Z]{2}-[A-Z]{3}$/);
    assert.equal(l.code.slice(0, 5), l.state_code, l.code);
    assert.ok(stateCodes.has(l.state_code), `${l.state_code} is one of the 37 states`);
    assert.ok(!seen.has(l.code), `duplicate LGA code ${l.code}`);
    seen.add(l.code);
    perState.set(l.state_code, (perState.get(l.state_code) ?? 0) + 1);
  }
  for (const s of STATES) assert.ok((perState.get(s.code) ?? 0) > 0, `${s.name} has LGAs`);
  const known: Record<string, string> = {
    "Aba North": "NG-AB-ANO",
    "Aba South": "NG-AB-ASO",
    Arochukwu: "NG-AB-ARO",
    Bende: "NG-AB-BEN",
  };
  for (const [name, code] of Object.entries(known)) {
    const found = lgas.find((l) => l.name === name && l.state_code === "NG-AB");
    assert.ok(found, `${name} is listed under Abia`);
    assert.equal(found.code, code, name);
  }
});

// ---- XML ----

test("invoice types and payment means answer XML when asked, JSON otherwise", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  const get = (p: string, accept?: string) =>
    app.inject({
      method: "GET",
      url: `${RES}/${p}`,
      headers: accept ? { ...who.headers, accept } : who.headers,
    });

  for (const [p, list] of [
    ["invoices-types", INVOICE_TYPES],
    ["payment-means", PAYMENT_MEANS],
  ] as const) {
    const xml = await get(p, "application/xml");
    assert.equal(xml.statusCode, 200, xml.body);
    assert.match(String(xml.headers["content-type"]), /^application\/xml/);
    assert.ok(xml.body.trimStart().startsWith("<"), "an XML document");
    assert.throws(() => JSON.parse(xml.body));
    for (const { code, value } of list) {
      const escaped = value.replaceAll("&", "&amp;").replaceAll("'", "&apos;");
      assert.ok(xml.body.includes(`<code>${code}</code><value>${escaped}</value>`), `${p} ${code} in XML`);
    }
    for (const accept of ["application/json", undefined]) {
      assert.deepEqual(referenceData(await get(p, accept)), list, `${p} with Accept ${String(accept)}`);
    }
  }
  const means = await get("payment-means", "application/xml");
  assert.ok(means.body.includes("<value>Banker&apos;s Draft</value>"));
  assert.ok(!means.body.includes("Banker's"), "the apostrophe is escaped");
  const credit = await get("invoices-types", "application/xml");
  assert.ok(credit.body.includes("<code>380</code><value>Credit Note</value>"));
});

// ---- Products ----

test("products: empty before import, then the imported HS subheadings with paging", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  const before = await app.inject({ method: "GET", url: `${RES}/products`, headers: who.headers });
  assert.equal(before.statusCode, 200, before.body);
  const empty = json<ProductsPage>(before);
  assert.ok(Number.isInteger(empty.draw), "draw is an integer");
  assert.deepEqual(empty, { draw: empty.draw, recordsTotal: 0, recordsFiltered: 0, data: [] });

  assert.deepEqual(await ctx.reference.importProducts(HS_CSV), { catalog: "products", imported: 5613 });

  const page = async (q: string) =>
    json<ProductsPage>(await app.inject({ method: "GET", url: `${RES}/products${q}`, headers: who.headers }));
  const first = await page("");
  assert.equal(first.recordsTotal, 5613);
  assert.equal(first.recordsFiltered, 5613);
  assert.equal(first.data.length, 10, "default page length is 10");
  for (const p of first.data) {
    assert.match(p.hscode, /^\d{4}\.\d{2}$/);
    assert.equal(typeof p.description, "string");
    assert.ok(p.description.length > 0);
  }
  const sorted = [...first.data.map((p) => p.hscode)].sort();
  assert.deepEqual(
    first.data.map((p) => p.hscode),
    sorted,
  );
  assert.equal(first.data[0]?.hscode, "0101.21");

  const a = await page("?start=0&length=5");
  const b = await page("?start=5&length=5");
  assert.equal(a.data.length, 5);
  assert.equal(b.data.length, 5);
  assert.deepEqual(
    [...a.data, ...b.data].map((p) => p.hscode),
    first.data.map((p) => p.hscode),
    "two pages of 5 are the first page of 10",
  );
  const aCodes = new Set(a.data.map((p) => p.hscode));
  assert.ok(
    b.data.every((p) => !aCodes.has(p.hscode)),
    "pages do not overlap",
  );
  assert.ok(String(a.data[4]?.hscode) < String(b.data[0]?.hscode), "ordered by hscode across pages");

  const last = await page("?start=5610&length=10");
  assert.equal(last.data.length, 3, "the last page holds what is left");
  const past = await page("?start=6000");
  assert.deepEqual(past.data, []);
  assert.equal(past.recordsTotal, 5613);

  const big = await page("?length=1000");
  assert.equal(big.data.length, 1000);
  const all = new Set<string>();
  for (let start = 0; start < 5613; start += 1000) {
    for (const p of (await page(`?start=${start}&length=1000`)).data) {
      assert.match(p.hscode, /^\d{4}\.\d{2}$/);
      all.add(p.hscode);
    }
  }
  assert.equal(all.size, 5613, "paging through everything yields every subheading once");
});

test("products: length above 1000 or negative start is a 400 envelope naming the parameter", async (t) => {
  const { get } = await withCatalogs(t);
  for (const [query, name] of [
    ["?length=1001", "length"],
    ["?length=0", "length"],
    ["?start=-1", "start"],
    ["?length=ten", "length"],
  ] as const) {
    const res = await get(`${RES}/products${query}`);
    assert.equal(res.statusCode, 400, `${query}: ${res.body}`);
    const body = json<Json>(res);
    assert.equal(body.status, false);
    assert.equal(body.code, 400);
    assert.equal(body.data, null);
    assert.equal(typeof body.message, "string");
    assert.match(String(body.timestamp), ISO_TIMESTAMP);
    const error = body.error as Json;
    assert.equal(typeof error.details, "string");
    assert.match(String(error.details), new RegExp(name), `${query}: details name ${name}`);
  }
});

test("products: hscode filters by heading or exact subheading", async (t) => {
  const { products } = await withCatalogs(t);
  const heading = await products("?hscode=2523&length=100");
  assert.deepEqual(
    heading.data.map((p) => p.hscode),
    ["2523.10", "2523.21", "2523.29", "2523.30", "2523.90"],
  );
  assert.equal(heading.recordsFiltered, 5);
  assert.equal(heading.recordsTotal, 5613);
  for (const p of heading.data) assert.ok(p.hscode.startsWith("2523."));

  const sub = await products("?hscode=2523.29");
  assert.equal(sub.recordsFiltered, 1);
  assert.deepEqual(
    sub.data.map((p) => p.hscode),
    ["2523.29"],
  );
  assert.match(String(sub.data[0]?.description), /portland/i);

  const none = await products("?hscode=0000");
  assert.equal(none.recordsFiltered, 0);
  assert.deepEqual(none.data, []);
  assert.equal(none.recordsTotal, 5613);
});

test("products: description and search filter case-insensitively; counts are the filtered counts", async (t) => {
  const { products } = await withCatalogs(t);
  const cement = await products("?description=CeMeNt&length=1000");
  assert.ok(cement.recordsFiltered >= 5, `cement matches ${cement.recordsFiltered}`);
  assert.equal(cement.data.length, cement.recordsFiltered);
  assert.equal(cement.recordsTotal, 5613);
  for (const p of cement.data) assert.match(p.description, /cement/i, p.hscode);
  assert.ok(cement.data.some((p) => p.hscode === "2523.29"));

  const lower = await products("?description=cement&length=1000");
  assert.equal(lower.recordsFiltered, cement.recordsFiltered);

  const portland = await products("?search=portland&length=1000");
  assert.ok(portland.recordsFiltered >= 2);
  assert.equal(portland.data.length, portland.recordsFiltered);
  const codes = portland.data.map((p) => p.hscode);
  assert.ok(codes.includes("2523.21") && codes.includes("2523.29"), codes.join(","));
  for (const p of portland.data) assert.match(p.description, /portland/i);

  // Exactly the subheadings whose description holds the text, as the catalog file has them: the
  // search index may narrow the rows it reads, never the answer.
  const subheadings = (
    parse(fs.readFileSync(HS_CSV), { columns: true, bom: true, trim: true }) as {
      hscode: string;
      description: string;
      level: string;
    }[]
  ).filter((row) => row.level === "6");
  for (const [text, found] of [
    ["cement", cement],
    ["portland", portland],
  ] as const) {
    const expected = subheadings
      .filter((row) => row.description.toLowerCase().includes(text))
      .map((row) => `${row.hscode.slice(0, 4)}.${row.hscode.slice(4)}`)
      .sort();
    assert.deepEqual(found.data.map((p) => p.hscode).sort(), expected, text);
  }
  const pieces = await products("?search=ORTLAN&length=1000");
  assert.deepEqual(pieces.data, portland.data, "any part of a word matches, whatever its case");

  // A short page still reports the full filtered count.
  const paged = await products("?description=cement&length=2");
  assert.equal(paged.data.length, 2);
  assert.equal(paged.recordsFiltered, cement.recordsFiltered);
});

test("products: draw is echoed back", async (t) => {
  const { products } = await withCatalogs(t);
  assert.equal((await products("?draw=7")).draw, 7);
  assert.equal((await products("?draw=42&hscode=2523")).draw, 42);
});

test("products: % and _ in search and description are literal characters, not wildcards", async (t) => {
  const { products } = await withCatalogs(t);
  const percent = await products(`?search=${encodeURIComponent("%")}&length=1000`);
  assert.ok(percent.recordsFiltered < 5613, "a lone % does not match everything");
  assert.equal(percent.data.length, Math.min(1000, percent.recordsFiltered));
  for (const p of percent.data) assert.ok(p.description.includes("%"), `${p.hscode}: ${p.description}`);

  const underscore = await products(`?search=${encodeURIComponent("_")}&length=1000`);
  assert.ok(underscore.recordsFiltered < 5613, "a lone _ does not match everything");
  for (const p of underscore.data) assert.ok(p.description.includes("_"), p.description);

  const pattern = await products(`?description=${encodeURIComponent("c_ment")}`);
  assert.equal(pattern.recordsFiltered, 0, "_ is not a single-character wildcard");
  const anything = await products(`?description=${encodeURIComponent("%cement%%")}`);
  assert.equal(anything.recordsFiltered, 0, "% is not a multi-character wildcard");
});

test("products: product_category filters by HS chapter", async (t) => {
  const { products } = await withCatalogs(t);
  const chapter = await products("?product_category=25&length=1000");
  assert.ok(chapter.recordsFiltered > 0);
  assert.equal(chapter.data.length, chapter.recordsFiltered);
  for (const p of chapter.data) assert.ok(p.hscode.startsWith("25"), `${p.hscode} is in chapter 25`);
  assert.ok(chapter.data.some((p) => p.hscode === "2523.29"));
  // Every chapter-25 subheading, and nothing else.
  const all = await products("?hscode=25&length=1000");
  assert.equal(chapter.recordsFiltered, all.recordsFiltered);
});

test("products: product_category by section (V = chapters 25 to 27) returns only that section", async (t) => {
  const { products } = await withCatalogs(t);
  const section = await products("?product_category=V&length=1000");
  assert.ok(section.recordsFiltered > 0);
  const chapters = new Set(section.data.map((p) => p.hscode.slice(0, 2)));
  assert.deepEqual([...chapters].sort(), ["25", "26", "27"], `chapters returned: ${[...chapters].join(",")}`);
  const expected =
    (await products("?hscode=25")).recordsFiltered +
    (await products("?hscode=26")).recordsFiltered +
    (await products("?hscode=27")).recordsFiltered;
  assert.equal(section.recordsFiltered, expected);
});

test("products: re-import replaces the catalog atomically instead of appending", async (t) => {
  const { ctx, products, get } = await withCatalogs(t);
  // Readers running while the second import is in flight see the whole old or whole new catalog.
  const reimport = ctx.reference.importProducts(HS_CSV);
  const during = await Promise.all(
    Array.from({ length: 5 }, () => get(`${RES}/products?length=1`).then((r) => json<ProductsPage>(r))),
  );
  assert.deepEqual(await reimport, { catalog: "products", imported: 5613 });
  for (const p of during) assert.equal(p.recordsTotal, 5613);
  const after = await products("");
  assert.equal(after.recordsTotal, 5613, "not 11226");
  assert.equal((await products("?hscode=2523.29")).recordsFiltered, 1);

  // A file that cannot be read as the HS CSV fails and leaves the catalog as it was.
  const dir = tempDir(t);
  const bad = path.join(dir, "bad.csv");
  fs.writeFileSync(bad, "section,hscode,description,parent,level\nI,0101210,Too long,0101,6\n");
  await assert.rejects(ctx.reference.importProducts(bad));
  assert.equal((await products("")).recordsTotal, 5613);

  assert.deepEqual(await ctx.reference.importServices(ISIC_JSON), { catalog: "services", imported: 419 });
  const services = await get(`${RES}/services?length=1000`);
  assert.equal(referenceData<Service>(services).length, 419);
});

// ---- Services ----

test("services: ISIC classes with code, description and paging", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  const get = async (q: string) =>
    referenceData<Service>(
      await app.inject({ method: "GET", url: `${RES}/services${q}`, headers: who.headers }),
    );
  assert.deepEqual(await get(""), [], "no services before the import");
  assert.deepEqual(await ctx.reference.importServices(ISIC_JSON), { catalog: "services", imported: 419 });

  const first = await get("");
  assert.equal(first.length, 10, "default page length is 10");
  for (const s of first) {
    assert.match(s.code, /^\d{4}$/);
    assert.equal(typeof s.description, "string");
    assert.ok(s.description.length > 0);
  }
  assert.equal(first[0]?.code, "0111");
  assert.equal(first[0]?.description, "Growing of cereals (except rice), leguminous crops and oil seeds");

  const a = await get("?start=0&length=5");
  const b = await get("?start=5&length=5");
  assert.deepEqual(
    [...a, ...b].map((s) => s.code),
    first.map((s) => s.code),
  );
  assert.ok(String(a[4]?.code) < String(b[0]?.code));

  const all = await get("?length=1000");
  assert.equal(all.length, 419);
  assert.equal(new Set(all.map((s) => s.code)).size, 419);
  assert.deepEqual(
    all.map((s) => s.code),
    [...all.map((s) => s.code)].sort(),
  );
});

test("services: code prefix, description and search filters", async (t) => {
  const { services, get } = await withCatalogs(t);
  const division = await services("?code=01&length=1000");
  assert.ok(division.length > 0);
  for (const s of division) assert.ok(s.code.startsWith("01"), s.code);
  assert.ok(division.some((s) => s.code === "0111"));

  const exact = await services("?code=0111");
  assert.deepEqual(
    exact.map((s) => s.code),
    ["0111"],
  );

  const rice = await services("?description=RICE&length=1000");
  assert.ok(rice.length > 0);
  for (const s of rice) assert.match(s.description, /rice/i);
  assert.ok(
    rice.some((s) => s.code === "0112"),
    "Growing of rice",
  );

  const search = await services("?search=fishing&length=1000");
  assert.ok(search.length > 0);
  for (const s of search) assert.match(s.description, /fishing/i);

  const byCode = await services("?search=0112");
  assert.ok(byCode.some((s) => s.code === "0112"));

  const percent = await services(`?search=${encodeURIComponent("%")}&length=1000`);
  for (const s of percent) assert.ok(s.description.includes("%"), s.description);
  assert.ok(percent.length < 419);

  const tooLong = await get(`${RES}/services?length=1001`);
  assert.equal(tooLong.statusCode, 400);
  assert.match(String((json<Json>(tooLong).error as Json).details), /length/);
});

// ---- Authentication ----

test("every reference endpoint answers 401 in the exact spec envelope without valid credentials", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  const paths = [
    "currencies",
    "invoices-types",
    "payment-means",
    "tax-categories",
    "products",
    "services",
    "lgas",
    "states",
    "units-of-measurement",
  ];
  const variants: Record<string, Record<string, string>> = {
    none: {},
    "key only": { "api-key": who.api_key },
    "secret only": { "api-secret": who.api_secret },
    "wrong secret": { "api-key": who.api_key, "api-secret": `${who.api_secret}x` },
    "unknown key": { "api-key": "ak_00000000000000000000000000000000", "api-secret": who.api_secret },
  };
  for (const p of paths) {
    for (const [label, headers] of Object.entries(variants)) {
      const res = await app.inject({ method: "GET", url: `${RES}/${p}`, headers });
      assert.equal(res.statusCode, 401, `${p} (${label}): ${res.body}`);
      assert.match(String(res.headers["content-type"]), /^application\/json/);
      const body = json<Json>(res);
      assert.deepEqual(Object.keys(body).sort(), ["code", "data", "error", "message", "status", "timestamp"]);
      assert.match(String(body.timestamp), ISO_TIMESTAMP);
      const error = body.error as Json;
      assert.deepEqual(Object.keys(error), ["details"]);
      assert.equal(typeof error.details, "string");
      assert.ok(String(error.details).length > 0);
      assert.deepEqual(
        { ...body, timestamp: "", error: {} },
        { status: false, code: 401, message: "Unauthorized", data: null, error: {}, timestamp: "" },
      );
    }
    // And with the right credentials the same endpoint works.
    const ok = await app.inject({ method: "GET", url: `${RES}/${p}`, headers: who.headers });
    assert.equal(ok.statusCode, 200, `${p}: ${ok.body}`);
  }
});
