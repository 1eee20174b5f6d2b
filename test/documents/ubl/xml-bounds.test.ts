import assert from "node:assert/strict";
import { test } from "node:test";
import { parseXml, XML_BOUNDS } from "../../../src/documents/ubl/xml.ts";

/*
 * Each bound holds exactly: a document at it is accepted, one past it refused under its rule. The
 * documents are bare Invoice roots, as the bounds are checked before any schema.
 */

const ROOT = '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"';
const invoice = (content: string, attributes = "") => `${ROOT}${attributes}>${content}</Invoice>`;

function assertBound(name: string, atBound: string, pastBound: string, rule: string): void {
  const accepted = parseXml(atBound);
  assert.ok(accepted.ok, `${name} at its bound: ${accepted.ok ? "" : accepted.refusal.message}`);
  accepted.doc.dispose();
  const refused = parseXml(pastBound);
  assert.equal(refused.ok, false, `${name} past its bound`);
  if (!refused.ok) assert.equal(refused.refusal.rule, rule, refused.refusal.message);
}

test("bytes: the whole body", () => {
  const padding = (bytes: number) => invoice("") + " ".repeat(bytes - invoice("").length);
  assertBound("bytes", padding(XML_BOUNDS.bytes), padding(XML_BOUNDS.bytes + 1), "bytes");
});

test("depth: the root is level 1", () => {
  const nested = (levels: number) => invoice(`${"<x>".repeat(levels - 1)}${"</x>".repeat(levels - 1)}`);
  assertBound("depth", nested(XML_BOUNDS.depth), nested(XML_BOUNDS.depth + 1), "depth");
});

test("elements: the root counts", () => {
  const elements = (n: number) => invoice("<a/>".repeat(n - 1));
  assertBound("elements", elements(XML_BOUNDS.elements), elements(XML_BOUNDS.elements + 1), "elements");
});

test("markup: comments, processing instructions and CDATA sections; the XML declaration does not count", () => {
  const markup = (n: number) => `<?xml version="1.0"?>${invoice("<!--c--><?p?><![CDATA[x]]>".repeat(n / 3))}`;
  const at = XML_BOUNDS.markup - (XML_BOUNDS.markup % 3);
  assertBound("markup", markup(at), markup(at + 3), "markup");
});

test("attributes: on one element, namespace declarations not counted", () => {
  const attributes = (n: number) =>
    invoice(`<a${Array.from({ length: n }, (_, i) => ` a${i}="1"`).join("")}/>`);
  assertBound(
    "attributes",
    attributes(XML_BOUNDS.attributes),
    attributes(XML_BOUNDS.attributes + 1),
    "attributes",
  );
  const withDeclarations = attributes(XML_BOUNDS.attributes).replace(
    "<a ",
    `<a xmlns:p="urn:p" xmlns:q="urn:q" `,
  );
  const parsed = parseXml(withDeclarations);
  assert.ok(parsed.ok);
  parsed.doc.dispose();
});

test("attribute values, as written", () => {
  const value = (bytes: number) => invoice(`<a b="${"x".repeat(bytes)}"/>`);
  assertBound(
    "attribute bytes",
    value(XML_BOUNDS.attributeBytes),
    value(XML_BOUNDS.attributeBytes + 1),
    "attribute_length",
  );
  const quoted = (bytes: number) => invoice(`<a b='${"&amp;".repeat(bytes / 5)}'/>`);
  const at = XML_BOUNDS.attributeBytes - (XML_BOUNDS.attributeBytes % 5);
  assertBound("attribute bytes with references", quoted(at), quoted(at + 5), "attribute_length");
});

test("text: one text, and one CDATA section, as written", () => {
  const text = (bytes: number) => invoice(`<a>${"x".repeat(bytes)}</a>`);
  assertBound("text", text(XML_BOUNDS.textBytes), text(XML_BOUNDS.textBytes + 1), "text_length");
  const cdata = (bytes: number) => invoice(`<a><![CDATA[${"x".repeat(bytes)}]]></a>`);
  assertBound("CDATA", cdata(XML_BOUNDS.textBytes), cdata(XML_BOUNDS.textBytes + 1), "text_length");
});

test("namespaces: distinct declarations in the document, the root's own included", () => {
  const declarations = (n: number) =>
    Array.from({ length: n }, (_, i) => ` xmlns:p${i}="urn:p:${i}"`).join("");
  const distinct = (n: number) => invoice("", declarations(n - 1));
  assertBound(
    "namespaces",
    distinct(XML_BOUNDS.namespaces),
    distinct(XML_BOUNDS.namespaces + 1),
    "namespaces",
  );
  // The same declaration on every element counts once towards them, and each time towards the total.
  const repeated = (n: number) => invoice('<ID xmlns="urn:x">1</ID>'.repeat(n - 1));
  const total = XML_BOUNDS.namespaceDeclarations;
  assertBound("namespace declarations", repeated(total), repeated(total + 1), "namespaces");
});

test("a DOCTYPE anywhere is refused; in a comment, a CDATA section or an attribute it is text", () => {
  for (const doc of [
    `<!DOCTYPE Invoice>${invoice("")}`,
    `<!-- c --><?p?>\n<!DOCTYPE Invoice []>${invoice("")}`,
  ]) {
    const refused = parseXml(doc);
    assert.ok(!refused.ok && refused.refusal.rule === "doctype");
  }
  const inner = parseXml(invoice("<a>&lt;!DOCTYPE x&gt;</a>"));
  assert.ok(inner.ok);
  inner.doc.dispose();
  for (const doc of [
    `<!-- <!DOCTYPE Invoice> -->${invoice("")}`,
    invoice("<a><![CDATA[<!DOCTYPE x>]]></a>"),
    invoice(`<a c='>' d="/>"/><b e = "<!DOCTYPE"/>`.replace("<!DOCTYPE", "&lt;!DOCTYPE")),
  ]) {
    const parsed = parseXml(doc);
    assert.ok(parsed.ok, parsed.ok ? "" : parsed.refusal.message);
    parsed.doc.dispose();
  }
  // `<` is not allowed in an attribute value: libxml2 says so, the scan does not take it for markup.
  const literal = parseXml(invoice('<a b="<!DOCTYPE x>"/>'));
  assert.ok(!literal.ok && literal.refusal.rule === "malformed", JSON.stringify(literal));
});
