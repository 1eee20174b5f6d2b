import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { UBL_READ_BYTES } from "../../../src/documents/ubl/ubl-read.ts";
import { build, fixture, type Json, REPO_ROOT, tenant } from "../../helpers.ts";
import { asSupplier, atNigerianVat, EXAMPLE_FILES, example, UBL_SCHEMAS } from "./examples.ts";

const XML = { "content-type": "application/xml" };
const PREFIX = "/api/v1/einvoice";

/** The amounts an example states, by its own elements. */
function statedTotals(xml: string) {
  const amount = (name: string) => Number(new RegExp(`<cbc:${name}[^>]*>([^<]+)<`).exec(xml)?.[1]);
  return {
    line_extension_amount: amount("LineExtensionAmount"),
    tax_exclusive_amount: amount("TaxExclusiveAmount"),
    tax_inclusive_amount: amount("TaxInclusiveAmount"),
    payable_amount: amount("PayableAmount"),
  };
}

describe("UBL 2.1 in: the three real examples", () => {
  for (const file of EXAMPLE_FILES) {
    test(`${file}: converts with its totals and lines, validates with no finding on amounts`, async (t) => {
      const { app, ctx } = await build(t, { EINVOICE_UBL_SCHEMAS: UBL_SCHEMAS });
      const who = await tenant(ctx);
      const xml = asSupplier(example(file), who);
      const converted = await app.inject({
        method: "POST",
        url: `${PREFIX}/ubl/convert`,
        headers: { ...who.headers, ...XML },
        payload: xml,
      });
      assert.equal(converted.statusCode, 200, converted.body);
      const { document, not_carried } = (
        converted.json() as { data: { document: Json; not_carried: Json[] } }
      ).data;
      const lines = (xml.match(/<cac:(Invoice|CreditNote)Line>/g) ?? []).length;
      assert.equal((document.invoice_line as Json[]).length, lines);
      const totals = statedTotals(xml.slice(xml.indexOf("<cac:LegalMonetaryTotal>")));
      assert.deepEqual(document.legal_monetary_total, totals);
      assert.ok(not_carried.every((n) => typeof n.xpath === "string" && n.xpath.startsWith("/")));
      // As it is, it validates with no finding on amounts (a line written as a return is read as
      // one, and said); what stops it is its VAT: a standard rate of 25%, 21% or 6% is not Nigeria's
      // 7.5%, reported on the UBL's own element.
      const validated = await app.inject({
        method: "POST",
        url: `${PREFIX}/validate`,
        headers: { ...who.headers, ...XML },
        payload: xml,
      });
      const violations = ((validated.json() as { error?: { violations?: Json[] } }).error?.violations ??
        []) as Json[];
      assert.ok(violations.length > 0, validated.body);
      // (The correction's preceding invoice is not signed here: its reference is found lacking too.)
      const rated = violations.filter((v) => !String(v.path).startsWith("billing_reference["));
      assert.ok(rated.length > 0, validated.body);
      for (const v of rated) {
        assert.equal(v.rule, "tax_rate", JSON.stringify(v));
        assert.match(
          String(v.xpath),
          /^\/(Invoice|CreditNote)\/cac:TaxTotal\/.*cbc:Percent$/,
          JSON.stringify(v),
        );
      }
    });
  }

  test("each signs as a Nigerian seller issues it (VAT at 7.5%), the correction after the invoice it corrects", async (t) => {
    const { app, ctx } = await build(t, { EINVOICE_UBL_SCHEMAS: UBL_SCHEMAS });
    const who = await tenant(ctx);
    const order = [
      "en16931-ubl-example1.xml",
      "peppol-base-example.xml",
      "peppol-base-creditnote-correction.xml",
    ];
    assert.deepEqual([...order].sort(), [...EXAMPLE_FILES].sort());
    const irns: string[] = [];
    for (const file of order) {
      const xml = atNigerianVat(asSupplier(example(file), who));
      // The correction has the number of the invoice it corrects (Snippet1), which would give that
      // invoice's IRN: it is given its own, the way the refusal says.
      const own = file.includes("creditnote") ? `?irn=CN1-${who.service_id}-20171113` : "";
      const signed = await app.inject({
        method: "POST",
        url: `${PREFIX}/sign${own}`,
        headers: { ...who.headers, ...XML },
        payload: xml,
      });
      assert.equal(signed.statusCode, 200, `${file}: ${signed.body}`);
      const warnings = ((signed.json() as { warnings?: Json[] }).warnings ?? []) as Json[];
      assert.ok(
        warnings.every((w) => w.rule !== "arithmetic"),
        JSON.stringify(warnings),
      );
      // The document signed has the example's lines and net totals, and the VAT it was given.
      const converted = await app.inject({
        method: "POST",
        url: `${PREFIX}/ubl/convert${own}`,
        headers: { ...who.headers, ...XML },
        payload: xml,
      });
      const document = (converted.json() as { data: { document: Json } }).data.document;
      irns.push(String(document.irn));
      const stored = (
        (await app.inject({ url: `${PREFIX}/${String(document.irn)}`, headers: who.headers })).json() as {
          data: { document: Json };
        }
      ).data.document;
      assert.deepEqual(
        stored.legal_monetary_total,
        statedTotals(xml.slice(xml.indexOf("<cac:LegalMonetaryTotal>"))),
      );
      assert.deepEqual(
        (stored.invoice_line as Json[]).map((l) => l.line_extension_amount),
        [
          ...xml.matchAll(/<cac:(?:Invoice|CreditNote)Line>[\s\S]*?<cbc:LineExtensionAmount[^>]*>([^<]+)</g),
        ].map((m) => Number(m[1])),
      );
      if (file === "en16931-ubl-example1.xml") {
        // Its RETOUR line says 6 and −109.98: read as six returned, and said.
        const line = (stored.invoice_line as Json[])[19];
        assert.equal(line?.invoiced_quantity, -6);
        assert.ok(
          warnings.some(
            (w) =>
              w.rule === "ubl_read_as_return" &&
              String(w.xpath).endsWith("cac:InvoiceLine[20]/cbc:InvoicedQuantity"),
          ),
          JSON.stringify(warnings),
        );
      }
      if (file === "peppol-base-creditnote-correction.xml") {
        // Its preceding invoice is named by number only: the IRN signed here under that number.
        assert.deepEqual(
          (stored.billing_reference as Json[]).map((b) => b.irn),
          [irns[1]],
        );
      }
    }
  });
});

describe("UBL 2.1 both ways", () => {
  test("a UBL sign with an Idempotency-Key: its answer stored after the sign, replayed byte for byte", async (t) => {
    const { app, ctx } = await build(t, { EINVOICE_UBL_SCHEMAS: UBL_SCHEMAS });
    const who = await tenant(ctx);
    const json = fixture("invoice-full", who);
    const first = await app.inject({
      method: "POST",
      url: `${PREFIX}/sign`,
      headers: who.headers,
      payload: json,
    });
    assert.equal(first.statusCode, 200, first.body);
    const xml = (await app.inject({ url: `${PREFIX}/${String(json.irn)}.xml`, headers: who.headers })).body;
    // The same invoice as UBL, under an IRN of its own.
    const irn = String(json.irn).replace(/^[^-]+/, "UBLKEY1");
    const sign = () =>
      app.inject({
        method: "POST",
        url: `${PREFIX}/sign?irn=${encodeURIComponent(irn)}`,
        headers: { ...who.headers, ...XML, "idempotency-key": "ubl-keyed" },
        payload: xml,
      });
    const signed = await sign();
    assert.equal(signed.statusCode, 200, signed.body);
    assert.equal(signed.headers["idempotent-replayed"], undefined);
    const again = await sign();
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.headers["idempotent-replayed"], "true");
    assert.equal(again.body, signed.body);
    const irns = await ctx.db
      .selectFrom("invoices")
      .select("irn")
      .where("business_id", "=", who.business_id)
      .execute();
    assert.deepEqual(irns.map((row) => row.irn).sort(), [String(json.irn), irn].sort());
  });

  test("a document written as UBL signs, is had back as UBL, and converts to the signed document", async (t) => {
    const { app, ctx } = await build(t, { EINVOICE_UBL_SCHEMAS: UBL_SCHEMAS });
    const who = await tenant(ctx);
    const json = fixture("invoice-full", who);
    const signed = await app.inject({
      method: "POST",
      url: `${PREFIX}/sign`,
      headers: who.headers,
      payload: json,
    });
    assert.equal(signed.statusCode, 200, signed.body);
    const out = await app.inject({ url: `${PREFIX}/${String(json.irn)}.xml`, headers: who.headers });
    assert.equal(out.statusCode, 200, out.body);
    assert.match(String(out.headers["content-type"]), /^application\/xml/);
    assert.match(out.body, /<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/);
    assert.match(out.body, /<cbc:InvoiceTypeCode>380<\/cbc:InvoiceTypeCode>/);
    // The IRN as the invoice's ID and as a document reference, with the QR payload and the signature.
    assert.match(out.body, new RegExp(`<cbc:ID>${String(json.irn)}</cbc:ID>`));
    assert.match(out.body, /<cbc:ID>QR<\/cbc:ID>\s*<cbc:DocumentDescription>[A-Za-z0-9+/=]+</);
    assert.match(out.body, /<cbc:DocumentDescription>EdDSA kid=[^;]+; hash=[0-9a-f]{64}; value=/);

    const back = await app.inject({
      method: "POST",
      url: `${PREFIX}/ubl/convert`,
      headers: { ...who.headers, ...XML },
      payload: out.body,
    });
    assert.equal(back.statusCode, 200, back.body);
    const document = (back.json() as { data: { document: Json } }).data.document;
    const record = (
      await app.inject({ url: `${PREFIX}/${String(json.irn)}`, headers: who.headers })
    ).json() as {
      data: { document: Json };
    };
    // Every amount to the kobo, and every field the signed document has (UBL out adds what EN 16931
    // requires: each line's VAT category, a reason for each allowance).
    const signedDoc = record.data.document;
    for (const key of [
      "irn",
      "issue_date",
      "invoice_type_code",
      "document_currency_code",
      "legal_monetary_total",
      "tax_total",
    ]) {
      assert.deepEqual(document[key], signedDoc[key], key);
    }
    const lines = (l: Json[]) =>
      l.map((x) => [x.line_extension_amount, x.invoiced_quantity, x.hsn_code, x.item]);
    assert.deepEqual(lines(document.invoice_line as Json[]), lines(signedDoc.invoice_line as Json[]));

    // Signed again as UBL, the same IRN is refused, never overwritten.
    const again = await app.inject({
      method: "POST",
      url: `${PREFIX}/sign`,
      headers: { ...who.headers, ...XML },
      payload: out.body,
    });
    assert.equal(again.statusCode, 400, again.body);
    assert.match(again.body, /IRN already exists/);
  });

  test("type codes: UBL's 380 is the authority's 381 and back, 381 its 380, 383 its 384", async () => {
    const { typeFromUbl, typeToUbl } = await import("../../../src/documents/ubl/codes.ts");
    for (const [ubl, ours] of [
      ["380", "381"],
      ["381", "380"],
      ["383", "384"],
    ]) {
      assert.deepEqual((typeFromUbl(ubl as string) as { ours: string }).ours, ours);
      assert.deepEqual((typeToUbl(ours as string) as { ubl: string }).ubl, ubl);
    }
    assert.match((typeFromUbl("384") as { refused: string }).refused, /corrected invoice/);
    assert.equal((typeToUbl("381") as { root: string }).root, "Invoice");
    assert.equal((typeToUbl("380") as { root: string }).root, "CreditNote");
    assert.match((typeToUbl("389") as { refused: string }).refused, /no UBL/);
  });
});

test("the UBL guide's mapping table is the code's", async () => {
  const { mappingMarkdown } = await import("../../../src/documents/ubl/mapping-table.ts");
  const guide = fs.readFileSync(path.join(REPO_ROOT, "docs", "ubl.md"), "utf8");
  const table = /<!-- mapping:start -->\n([\s\S]*)\n<!-- mapping:end -->/.exec(guide)?.[1];
  assert.equal(table, mappingMarkdown(), "npm run docs:ubl writes the table of docs/ubl.md from mapping.ts");
});

test("a credit note that names its invoice by number alone (no date) finds the invoice signed here", async (t) => {
  const { app, ctx } = await build(t, { EINVOICE_UBL_SCHEMAS: UBL_SCHEMAS });
  const who = await tenant(ctx);
  const invoice = fixture("invoice-full", who);
  const signed = await app.inject({
    method: "POST",
    url: `${PREFIX}/sign`,
    headers: who.headers,
    payload: invoice,
  });
  assert.equal(signed.statusCode, 200, signed.body);
  const { writeUbl } = await import("../../../src/documents/ubl/write.ts");
  const note = {
    ...fixture("invoice-minimal", who),
    irn: `CN1-${who.service_id}-20261116`,
    invoice_type_code: "380",
    billing_reference: [{ irn: String(invoice.irn), issue_date: String(invoice.issue_date) }],
  };
  // As an ERP writes it: the invoice's own number, INV-0001, and no IssueDate (BT-26 is optional).
  const xml = writeUbl({ irn: note.irn, document: note }).replace(
    /<cac:InvoiceDocumentReference>[\s\S]*?<\/cac:InvoiceDocumentReference>/,
    "<cac:InvoiceDocumentReference><cbc:ID>INV-0001</cbc:ID></cac:InvoiceDocumentReference>",
  );
  assert.match(xml, /<CreditNote /);
  const answer = await app.inject({
    method: "POST",
    url: `${PREFIX}/sign`,
    headers: { ...who.headers, ...XML },
    payload: xml,
  });
  assert.equal(answer.statusCode, 200, answer.body);
  const warnings = (answer.json() as { warnings?: Json[] }).warnings ?? [];
  assert.ok(
    warnings.some((w) => w.rule === "ubl_preceding_invoice"),
    JSON.stringify(warnings),
  );
  const record = (await app.inject({ url: `${PREFIX}/${note.irn}`, headers: who.headers })).json() as {
    data: { document: Json };
  };
  assert.deepEqual(record.data.document.billing_reference, [
    { irn: invoice.irn, issue_date: invoice.issue_date },
  ]);

  // A number no invoice of this business has stays as it is, and the finding names its element.
  const unknown = xml.replace("<cbc:ID>INV-0001</cbc:ID>", "<cbc:ID>NOPE-9</cbc:ID>").replace(`CN1-`, `CN2-`);
  const refused = await app.inject({
    method: "POST",
    url: `${PREFIX}/validate`,
    headers: { ...who.headers, ...XML },
    payload: unknown,
  });
  assert.equal(refused.statusCode, 400, refused.body);
  const violations = (refused.json() as { error: { violations: Json[] } }).error.violations;
  assert.ok(
    violations.some(
      (v) =>
        v.path === "billing_reference[0].issue_date" &&
        String(v.xpath).endsWith("cac:InvoiceDocumentReference/cbc:IssueDate"),
    ),
    JSON.stringify(violations),
  );
});

test("a UBL document over 512 KiB is refused whole (413, saying what to send instead), not read", async (t) => {
  const { app, ctx } = await build(t, { EINVOICE_UBL_SCHEMAS: UBL_SCHEMAS });
  const who = await tenant(ctx);
  const invoice = fixture("invoice-full", who);
  const line = (invoice.invoice_line as Json[])[0] as Json;
  invoice.invoice_line = Array.from({ length: 700 }, () => line);
  const { writeUbl } = await import("../../../src/documents/ubl/write.ts");
  const xml = writeUbl({ irn: String(invoice.irn), document: invoice });
  assert.ok(Buffer.byteLength(xml) > UBL_READ_BYTES);
  const answer = await app.inject({
    method: "POST",
    url: `${PREFIX}/validate`,
    headers: { ...who.headers, ...XML },
    payload: xml,
  });
  assert.equal(answer.statusCode, 413, answer.body);
  const body = answer.json() as { message: string; error: { details: string } };
  assert.equal(body.message, "Request body too large");
  assert.match(body.error.details, /at most 512 KiB .* send a larger invoice as this API's JSON document/);
});
