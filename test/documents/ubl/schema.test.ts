import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import {
  loadUblSchemas,
  MAX_SCHEMA_VIOLATIONS,
  schemaResourceRequests,
  type UblSchemas,
} from "../../../src/documents/ubl/schema.ts";
import { parseXml, type UblKind, withXml } from "../../../src/documents/ubl/xml.ts";
import { example, invoiceWithNote, reprefixed, UBL_XSD } from "./hostile-xml.ts";

const MARKER = "marker-5b1d0c7e-never-served";

let schemas: UblSchemas;
let scratch = "";
let server: http.Server;
let serverUrl = "";
let serverRequests = 0;

before(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "ubl-schema-"));
  server = http.createServer((_request, response) => {
    serverRequests++;
    response.end(MARKER);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  schemas = loadUblSchemas(UBL_XSD);
});

after(async () => {
  schemas.dispose();
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(scratch, { recursive: true, force: true });
});

/** The violations of `text` and how long checking it took (parsing not counted). */
function check(text: string | Buffer, kind?: UblKind) {
  const parsed = parseXml(text);
  assert.ok(parsed.ok, parsed.ok ? "" : parsed.refusal.message);
  return withXml(parsed.doc, (doc) => {
    const started = performance.now();
    const result = schemas.validate(doc, kind ?? parsed.root.kind);
    return { ...result, ms: performance.now() - started };
  });
}

/** The number of the last resource libxml2 asked for in this process (the list keeps only the last 200). */
const lastAsked = () => schemaResourceRequests().at(-1)?.seq ?? 0;

test("the schemas compile once, from the folder's files only", (t) => {
  t.diagnostic(`both schemas compiled in ${schemas.compileMs.toFixed(0)} ms`);
  const requests = schemaResourceRequests();
  assert.ok(requests.length > 0);
  for (const { url, served } of requests) {
    assert.ok(served, `${url} was asked for and not served`);
    assert.match(url, /^ubl-xsd:\/common\/[A-Za-z0-9_.-]+\.xsd$/);
  }
});

test("the three examples, and an invoice written with other prefixes, are valid", (t) => {
  const texts = {
    invoice: example("invoice"),
    peppolInvoice: example("peppolInvoice"),
    peppolCreditNote: example("peppolCreditNote"),
    inv: reprefixed("inv"),
    ns2: reprefixed("ns2"),
    "default-inner": reprefixed("default-inner"),
  };
  for (const [name, text] of Object.entries(texts)) {
    let slowest = 0;
    for (let run = 0; run < 5; run++) {
      const { violations, more, ms } = check(text);
      assert.deepEqual(violations, [], name);
      assert.equal(more, false);
      slowest = Math.max(slowest, ms);
    }
    t.diagnostic(`${name}: checked in ${slowest.toFixed(2)} ms at most`);
  }
});

test("an element out of order fails with a message, an XPath and a line", () => {
  const issueDate = "<cbc:IssueDate>2017-11-13</cbc:IssueDate>";
  const currency = "<cbc:DocumentCurrencyCode>EUR</cbc:DocumentCurrencyCode>";
  const text = example("peppolInvoice")
    .replace(`${issueDate}\n`, "")
    .replace(currency, `${currency}${issueDate}`);
  const { violations } = check(text);
  assert.equal(violations.length > 0, true);
  const [first] = violations;
  assert.match(first?.message ?? "", /DueDate.*not expected|not expected.*IssueDate/);
  assert.equal(first?.xpath, "/*/cbc:DueDate");
  assert.equal(first?.line, 8);
});

test("an unknown element fails naming it", () => {
  const { violations } = check(invoiceWithNote("<cbc:Colour>red</cbc:Colour>"));
  assert.equal(violations.length, 1);
  assert.match(violations[0]?.message ?? "", /Colour.*This element is not expected/);
  assert.equal(violations[0]?.xpath, "/*/cbc:Colour");
});

test("an invoice checked as a credit note fails on its root", () => {
  const { violations } = check(example("peppolInvoice"), "CreditNote");
  assert.match(violations[0]?.message ?? "", /No matching global declaration|not expected|Invoice/);
});

test("a flood of violations stops at the list's length, within 50 ms, the document unchanged", (t) => {
  const floods = {
    "unknown attributes": '<cbc:Note b="">x</cbc:Note>',
    "32 unknown attributes each": `<cbc:Note${Array.from({ length: 32 }, (_, i) => ` b${i}=""`).join("")}/>`,
    "empty invoice lines": "<cac:InvoiceLine/>",
    "unknown elements": "<cbc:Colour/>",
  };
  for (const [name, unit] of Object.entries(floods)) {
    const text = invoiceWithNote(unit.repeat(Math.floor(1_000_000 / unit.length)));
    const parsed = parseXml(text);
    assert.ok(parsed.ok, parsed.ok ? "" : parsed.refusal.message);
    withXml(parsed.doc, (doc) => {
      const before = doc.toString();
      let slowest = 0;
      for (let run = 0; run < 3; run++) {
        // CPU time, not the clock: the waits for a core on a loaded machine are not the check's.
        const started = process.cpuUsage();
        const { violations, more } = schemas.validate(doc, "Invoice");
        const used = process.cpuUsage(started);
        slowest = Math.max(slowest, (used.user + used.system) / 1000);
        assert.ok(violations.length <= MAX_SCHEMA_VIOLATIONS);
        assert.ok(violations.length > 0, name);
        if (violations.length === MAX_SCHEMA_VIOLATIONS) assert.equal(more, true);
      }
      t.diagnostic(`${name}: ${text.length} bytes, checked in ${slowest.toFixed(1)} ms at most`);
      assert.ok(slowest < 50, `${name}: ${slowest.toFixed(1)} ms`);
      assert.equal(doc.toString(), before, "the document is as it was");
    });
  }
});

test("xsi:schemaLocation is never followed: nothing is asked for, and the UBL schema still applies", () => {
  const marker = path.join(scratch, "evil.xsd");
  fs.writeFileSync(marker, MARKER);
  const asked = lastAsked();
  const invoiceNs = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2";
  const locations = [`file://${marker}`, `${serverUrl}/evil.xsd`, "../../../../etc/passwd", marker];
  for (const location of locations) {
    const text = example("peppolInvoice").replace(
      "<Invoice ",
      `<Invoice xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="${invoiceNs} ${location}" `,
    );
    assert.deepEqual(check(text).violations, []);
    const bad = check(text.replace("<cbc:IssueDate>2017-11-13</cbc:IssueDate>", ""));
    assert.ok(bad.violations.length > 0, "the UBL schema, not the located one, was applied");
  }
  assert.equal(lastAsked(), asked, "libxml2 asked the provider for nothing");
  assert.equal(serverRequests, 0);
});

test("a schema folder importing a file outside itself does not compile, and nothing outside is served", () => {
  const outside = path.join(scratch, "outside.xsd");
  fs.writeFileSync(
    outside,
    `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:x:outside"><xs:simpleType name="T"><xs:restriction base="xs:string"/></xs:simpleType></xs:schema>`,
  );
  const folder = path.join(scratch, "xsd");
  fs.mkdirSync(path.join(folder, "maindoc"), { recursive: true });
  const imports = [`file://${outside}`, `${serverUrl}/outside.xsd`, "../../outside.xsd", outside];
  for (const [name, namespace] of [
    ["UBL-Invoice-2.1.xsd", "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"],
    ["UBL-CreditNote-2.1.xsd", "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"],
  ]) {
    const importsXml = imports
      .map((location) => `<xs:import namespace="urn:x:outside" schemaLocation="${location}"/>`)
      .join("");
    fs.writeFileSync(
      path.join(folder, "maindoc", name ?? ""),
      `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:o="urn:x:outside" targetNamespace="${namespace}">${importsXml}<xs:element name="Invoice" type="o:T"/></xs:schema>`,
    );
  }
  const asked = lastAsked();
  assert.throws(() => loadUblSchemas(folder), /does not compile/);
  const requests = schemaResourceRequests().filter((request) => request.seq > asked);
  assert.ok(requests.length >= imports.length, JSON.stringify(requests));
  assert.ok(requests.every((request) => !request.served));
  assert.equal(serverRequests, 0);
});
