import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { SHARED_DIR } from "../../helpers.ts";
import { en16931 } from "./rules.ts";

const EXAMPLES = path.join(SHARED_DIR, "data", "ubl", "examples");
const example = (name: string) => fs.readFileSync(path.join(EXAMPLES, name), "utf8");
const ids = (findings: { id: string }[]) => findings.map((finding) => finding.id);

test("the published examples break no fatal EN 16931 rule", async () => {
  const names = fs.readdirSync(EXAMPLES).filter((name) => name.endsWith(".xml"));
  assert.equal(names.length, 3);
  for (const name of names) {
    const { fatal } = await en16931(example(name));
    assert.deepEqual(fatal, [], name);
  }
  // The two Peppol examples keep the Peppol rules too.
  for (const name of ["peppol-base-example.xml", "peppol-base-creditnote-correction.xml"]) {
    const { fatal } = await en16931(example(name), { peppol: true });
    assert.deepEqual(fatal, [], name);
  }
});

test("an amount due that is not the total with VAT breaks BR-CO-16", async () => {
  for (const name of ["peppol-base-example.xml", "peppol-base-creditnote-correction.xml"]) {
    const xml = example(name);
    assert.match(xml, /<cbc:PayableAmount currencyID="EUR">1656.25</);
    const changed = xml.replace(/(<cbc:PayableAmount currencyID="EUR">)1656.25</, "$11657.25<");
    const { fatal } = await en16931(changed);
    assert.deepEqual(ids(fatal), ["BR-CO-16"], name);
    assert.match(fatal[0]?.text ?? "", /Amount due for payment \(BT-115\)/);
    assert.match(fatal[0]?.location ?? "", /LegalMonetaryTotal/);
    assert.equal(fatal[0]?.flag, "fatal");
  }
});

test("a credit note's type code in an invoice breaks BR-CL-01, and Peppol's P0100", async () => {
  const xml = example("peppol-base-example.xml");
  const changed = xml.replace("<cbc:InvoiceTypeCode>380<", "<cbc:InvoiceTypeCode>381<");
  assert.notEqual(changed, xml);
  assert.deepEqual(ids((await en16931(changed)).fatal), ["BR-CL-01"]);
  assert.deepEqual(ids((await en16931(changed, { peppol: true })).fatal), [
    "BR-CL-01",
    "PEPPOL-EN16931-P0100",
  ]);
  // The credit note's element in its place breaks no rule: BR-04 takes either type code, and only
  // the UBL schema refuses it.
  const element = xml.replace(
    "<cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>",
    "<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>",
  );
  assert.notEqual(element, xml);
  assert.deepEqual(await en16931(element, { peppol: true }), { fatal: [], warnings: [] });
});
