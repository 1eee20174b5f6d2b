import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  XmlDocument,
  type XmlElement,
  XmlValidateError,
  XsdValidator,
  xmlRegisterInputProvider,
} from "libxml2-wasm";
import { SHARED_DIR } from "../../helpers.ts";
import {
  type Expected,
  type GenerateOptions,
  generateUbl,
  NAMESPACE_STYLES,
  randomSupplier,
} from "./generate.ts";
import { en16931 } from "./rules.ts";

const XSD_DIR = path.join(SHARED_DIR, "data", "ubl", "xsd");

// The schemas import each other by relative paths: libxml2 reads them through an input provider,
// this one limited to the schemas' folder.
function localPath(name: string): string | null {
  if (name.startsWith("file:")) {
    try {
      return fileURLToPath(name);
    } catch {
      return null;
    }
  }
  return /^[a-z][a-z0-9+.-]*:/i.test(name) ? null : path.resolve(name);
}
xmlRegisterInputProvider({
  match: (name) => {
    const file = localPath(name);
    return file?.startsWith(XSD_DIR + path.sep) === true && fs.existsSync(file);
  },
  open: (name) => {
    try {
      return fs.openSync(localPath(name) ?? "", "r");
    } catch {
      return undefined;
    }
  },
  read: (fd, buffer) => fs.readSync(fd, buffer, 0, buffer.byteLength, null),
  close: (fd) => {
    fs.closeSync(fd);
    return true;
  },
});

function schema(kind: "Invoice" | "CreditNote"): XsdValidator {
  const file = path.join(XSD_DIR, "maindoc", `UBL-${kind}-2.1.xsd`);
  const doc = XmlDocument.fromBuffer(fs.readFileSync(file), { url: file });
  try {
    return XsdValidator.fromDoc(doc);
  } finally {
    doc.dispose();
  }
}
const schemas = { Invoice: schema("Invoice"), CreditNote: schema("CreditNote") };
after(() => {
  schemas.Invoice.dispose();
  schemas.CreditNote.dispose();
});

function schemaErrors(xml: string, kind: "Invoice" | "CreditNote"): string[] {
  const doc = XmlDocument.fromString(xml);
  try {
    schemas[kind].validate(doc);
    return [];
  } catch (error) {
    if (!(error instanceof XmlValidateError)) throw error;
    return error.details.map((detail) => `line ${detail.line}: ${detail.message.trim()}`);
  } finally {
    doc.dispose();
  }
}

// Exact decimals for the checks: a decimal string as an integer of 10^-6 units.
function micro(text: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d{1,6}))?$/.exec(text);
  if (!match) throw new Error(`not a decimal: ${text}`);
  const value = BigInt(match[2] ?? "0") * 1_000_000n + BigInt((match[3] ?? "").padEnd(6, "0"));
  return match[1] ? -value : value;
}
const sum = (values: string[]) => values.reduce((total, value) => total + micro(value), 0n);
/** n ÷ d rounded half away from zero. */
function roundDiv(n: bigint, d: bigint): bigint {
  const q = n / d;
  const r = n % d;
  return 2n * (r < 0n ? -r : r) >= d ? q + (n < 0n ? -1n : 1n) : q;
}

type Case = { name: string; seed: number; opts: GenerateOptions; rules: boolean };

const cases: Case[] = [];
for (let seed = 1; seed <= 60; seed++) {
  // The rules take 70 ms to 1 s a document (about 20 ms a line) on SaxonJS: every fourth seed gets
  // them, every seed the schema and the arithmetic.
  cases.push({ name: `seed ${seed}`, seed, opts: { supplier: randomSupplier(seed) }, rules: seed % 4 === 0 });
}
const supplier = {
  tin: "12345678-0001",
  name: "Adéwálé & Daughters Nig. Ltd",
  street: "14 Adeola Odeku Street",
  city: "Victoria Island",
  postalZone: "101241",
  state: "NG-LA",
  email: "accounts@adewale.com.ng",
  telephone: "+234 803 555 0142",
};
cases.push(
  { name: "credit note", seed: 1001, opts: { supplier, kind: "CreditNote", lines: 4 }, rules: true },
  {
    name: "credit note, every category",
    seed: 1002,
    opts: { supplier, kind: "CreditNote", categories: ["S", "Z", "E"] },
    rules: true,
  },
  {
    name: "invoice, every category",
    seed: 1003,
    opts: { supplier, kind: "Invoice", categories: ["S", "Z", "E"], lines: 9 },
    rules: true,
  },
  { name: "not subject to VAT", seed: 1004, opts: { supplier, categories: ["O"], lines: 3 }, rules: true },
  {
    name: "exempt only, in dollars",
    seed: 1005,
    opts: { supplier, categories: ["E"], currency: "USD" },
    rules: true,
  },
  {
    name: "zero rated, no customer TIN",
    seed: 1006,
    opts: { supplier, categories: ["Z"], customerTin: null },
    rules: true,
  },
  {
    name: "TIN both ways, customer TIN given",
    seed: 1007,
    opts: { supplier, tinPlacement: "both", customerTin: "87654321-0001" },
    rules: true,
  },
  // 300 lines take the rules about 6 s: schema and arithmetic only.
  { name: "300 lines", seed: 1008, opts: { supplier, lines: 300 }, rules: false },
);
for (const namespaces of NAMESPACE_STYLES) {
  for (const pretty of [true, false]) {
    cases.push({
      name: `${namespaces} namespaces, ${pretty ? "indented" : "one line"}`,
      seed: 2000 + cases.length,
      opts: {
        supplier,
        lines: 3,
        style: {
          namespaces,
          pretty,
          comments: true,
          extensions: !pretty,
          cdata: pretty,
          charRefs: !pretty,
          extraNamespaces: pretty,
          declaration: pretty ? "standalone" : "none",
          newline: pretty ? "\r\n" : "\n",
          numbers: pretty ? "minimal" : "mixed",
          quote: pretty ? "'" : '"',
        },
      },
      rules: true,
    });
  }
}

const generated = cases.map((c) => ({ ...c, ...generateUbl(c.seed, c.opts) }));

test("seeds 1 to 60 and the forced combinations are valid UBL 2.1", () => {
  for (const { name, xml, expected } of generated) {
    assert.deepEqual(schemaErrors(xml, expected.kind), [], name);
  }
});

test("a fourth of the seeds and every forced combination but the longest break no fatal EN 16931 rule, nor Peppol's when customized for it", async () => {
  for (const { name, xml, expected, rules } of generated) {
    if (!rules) continue;
    const peppol = expected.style.customization === "peppol";
    const { fatal } = await en16931(xml, { peppol });
    assert.deepEqual(
      fatal.map((finding) => `${finding.id}: ${finding.text}`),
      [],
      name,
    );
  }
});

test("the expected facts keep EN 16931's arithmetic exactly", () => {
  for (const { name, expected } of generated) {
    checkArithmetic(name, expected);
  }
});

function checkArithmetic(name: string, e: Expected): void {
  const at = (what: string) => `${name}: ${what}`;
  for (const line of e.lines) {
    // quantity × price ÷ base quantity, in 10^-6 units: exact by construction, so no rounding.
    const product = micro(line.quantity) * micro(line.price);
    assert.equal(product % micro(line.baseQuantity), 0n, at(`line ${line.id} exact`));
    const gross = product / micro(line.baseQuantity);
    assert.equal(
      gross - sum(line.allowances.map((a) => a.amount)) + sum(line.charges.map((c) => c.amount)),
      micro(line.net),
      at(`line ${line.id} net`),
    );
    assert.equal(gross % 10_000n, 0n, at(`line ${line.id} gross in cents`));
    if (line.grossPrice !== null) {
      assert.equal(
        micro(line.grossPrice) - micro(line.priceDiscount ?? "0"),
        micro(line.price),
        at("gross price"),
      );
    }
    if (line.hsCode !== null) assert.match(line.hsCode, /^\d{4}\.\d{2}$/, at("HS code"));
  }
  for (const amount of [...Object.values(e.totals), ...e.lines.map((line) => line.net)]) {
    assert.match(amount, /^-?\d+\.\d\d$/, at(`amount ${amount}`));
  }
  const t = e.totals;
  assert.equal(micro(t.lineExtension), sum(e.lines.map((line) => line.net)), at("BR-CO-10"));
  assert.equal(micro(t.allowanceTotal), sum(e.allowances.map((a) => a.amount)), at("BR-CO-11"));
  assert.equal(micro(t.chargeTotal), sum(e.charges.map((c) => c.amount)), at("BR-CO-12"));
  assert.equal(
    micro(t.taxExclusive),
    micro(t.lineExtension) - micro(t.allowanceTotal) + micro(t.chargeTotal),
    at("BR-CO-13"),
  );
  assert.equal(micro(t.tax), sum(e.vat.map((v) => v.tax)), at("BR-CO-14"));
  assert.equal(micro(t.taxInclusive), micro(t.taxExclusive) + micro(t.tax), at("BR-CO-15"));
  assert.equal(
    micro(t.payable),
    micro(t.taxInclusive) - micro(t.prepaid) + micro(t.rounding),
    at("BR-CO-16"),
  );
  assert.deepEqual(
    e.vat.map((v) => v.category),
    [...new Set(e.lines.map((line) => line.category))].sort((a, b) => "SZEO".indexOf(a) - "SZEO".indexOf(b)),
    at("one VAT subtotal per category"),
  );
  for (const v of e.vat) {
    const ofCategory = <T extends { category: string }>(items: T[]) =>
      items.filter((item) => item.category === v.category);
    const taxable =
      sum(ofCategory(e.lines).map((line) => line.net)) +
      sum(ofCategory(e.charges).map((c) => c.amount)) -
      sum(ofCategory(e.allowances).map((a) => a.amount));
    assert.equal(micro(v.taxable), taxable, at(`${v.category} taxable`));
    const tax =
      v.percent === null
        ? 0n
        : roundDiv(micro(v.taxable) * micro(v.percent), 100_000_000n * 10_000n) * 10_000n;
    assert.equal(micro(v.tax), tax, at(`${v.category} tax`));
  }
  if (e.vat.some((v) => v.category === "O")) assert.equal(e.vat.length, 1, at("O alone"));
}

test("the document holds what is expected of it", () => {
  const ns = {
    cac: "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
    cbc: "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
  };
  for (const { name, xml, expected: e } of generated) {
    const doc = XmlDocument.fromString(xml);
    try {
      const text = (xpath: string, node: XmlElement | XmlDocument = doc) =>
        node.get(xpath, ns)?.content ?? null;
      const root = doc.root;
      assert.equal(root.name, e.kind, name);
      assert.equal(root.namespaceUri, `urn:oasis:names:specification:ubl:schema:xsd:${e.kind}-2`, name);
      assert.equal(text("/*/cbc:ID"), e.id, name);
      assert.equal(text("/*/cbc:IssueDate"), e.issueDate, name);
      assert.equal(text("/*/cbc:InvoiceTypeCode | /*/cbc:CreditNoteTypeCode"), e.typeCode, name);
      assert.equal(text("/*/cbc:DocumentCurrencyCode"), e.currency, name);
      assert.equal(text("/*/cbc:DueDate | /*/cac:PaymentMeans/cbc:PaymentDueDate"), e.dueDate, name);
      const payable = text("/*/cac:LegalMonetaryTotal/cbc:PayableAmount");
      assert.equal(micro(payable ?? ""), micro(e.totals.payable), name);
      const taxAmount = text(`/*/cac:TaxTotal/cbc:TaxAmount[@currencyID = '${e.currency}']`);
      assert.equal(micro(taxAmount ?? ""), micro(e.totals.tax), name);
      const tins = doc
        .find(
          "/*/cac:AccountingSupplierParty/cac:Party/cac:PartyTaxScheme/cbc:CompanyID | /*/cac:AccountingSupplierParty/cac:Party/cac:PartyIdentification/cbc:ID",
          ns,
        )
        .map((node) => node.content.replace(/^NG/, ""));
      assert.ok(tins.includes(e.supplierTin), name);
      const lines = doc.find("/*/cac:InvoiceLine | /*/cac:CreditNoteLine", ns) as XmlElement[];
      assert.equal(lines.length, e.lines.length, name);
      lines.forEach((line, i) => {
        const want = e.lines[i];
        assert.ok(want, name);
        assert.equal(text("cbc:ID", line), want.id, name);
        assert.equal(
          micro(text("cbc:InvoicedQuantity | cbc:CreditedQuantity", line) ?? ""),
          micro(want.quantity),
          name,
        );
        assert.equal(micro(text("cbc:LineExtensionAmount", line) ?? ""), micro(want.net), name);
        assert.equal(micro(text("cac:Price/cbc:PriceAmount", line) ?? ""), micro(want.price), name);
        assert.equal(
          text("cac:Item/cac:CommodityClassification/cbc:ItemClassificationCode", line),
          want.hsCode,
          name,
        );
        assert.equal(text("cac:Item/cbc:Name", line), want.name, name);
      });
    } finally {
      doc.dispose();
    }
  }
});

test("the same seed and options give the same document; the seed varies it", () => {
  const supplierOf = randomSupplier(5);
  const one = generateUbl(5, { supplier: supplierOf });
  assert.equal(generateUbl(5, { supplier: supplierOf }).xml, one.xml);
  assert.deepEqual(generateUbl(5, { supplier: supplierOf }).expected, one.expected);
  const xmls = new Set(generated.slice(0, 60).map((g) => g.xml));
  assert.equal(xmls.size, 60);
  // The seeds alone reach every namespace style, both kinds, both currencies.
  const seeded = generated.slice(0, 60).map((g) => g.expected);
  assert.deepEqual(new Set(seeded.map((e) => e.style.namespaces)), new Set(NAMESPACE_STYLES));
  assert.deepEqual(new Set(seeded.map((e) => e.kind)), new Set(["Invoice", "CreditNote"]));
  assert.deepEqual(new Set(seeded.map((e) => e.currency)), new Set(["NGN", "USD"]));
});

test("what EN 16931 refuses, the generator writes only when asked", async () => {
  assert.throws(() => generateUbl(1, { supplier, categories: ["S", "O"] }), /only alone/);
  assert.throws(() => generateUbl(1, { supplier, categories: ["O"], tinPlacement: "vat" }), /BR-O-02/);
  // A bare TIN as VAT identifier: no country prefix (BR-CO-09).
  const bare = generateUbl(3, {
    supplier,
    tinPlacement: "bareVat",
    lines: 2,
    style: { customization: "en16931" },
  });
  assert.deepEqual(schemaErrors(bare.xml, bare.expected.kind), []);
  assert.deepEqual(
    (await en16931(bare.xml)).fatal.map((finding) => finding.id),
    ["BR-CO-09"],
  );
  // No CustomizationID (BR-01).
  const none = generateUbl(4, { supplier, lines: 2, style: { customization: "none" } });
  assert.deepEqual(schemaErrors(none.xml, none.expected.kind), []);
  assert.deepEqual(
    (await en16931(none.xml)).fatal.map((finding) => finding.id),
    ["BR-01"],
  );
});
