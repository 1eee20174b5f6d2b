import fs from "node:fs";
import path from "node:path";
import { SHARED_DIR } from "../../helpers.ts";

/*
 * Crafted XML documents, each what a hostile client could send as a UBL body, each within 1 MiB but
 * the namespace flood of 100,000 declarations: distinct prefixes cannot be written in less than 1.4 MB.
 */

export const UBL_EXAMPLES = path.join(SHARED_DIR, "data", "ubl", "examples");
export const UBL_XSD = path.join(SHARED_DIR, "data", "ubl", "xsd");

export const EXAMPLE_FILES = {
  invoice: "en16931-ubl-example1.xml",
  peppolInvoice: "peppol-base-example.xml",
  peppolCreditNote: "peppol-base-creditnote-correction.xml",
} as const;

export function example(name: keyof typeof EXAMPLE_FILES): string {
  return fs.readFileSync(path.join(UBL_EXAMPLES, EXAMPLE_FILES[name]), "utf8");
}

const INVOICE_NS = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2";
const CBC = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2";
const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

/** The Peppol example invoice (9 KB) with `xml` where a cbc:Note may stand. */
export function invoiceWithNote(xml: string): string {
  const anchor = "<cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>";
  const invoice = example("peppolInvoice");
  if (!invoice.includes(anchor)) throw new Error("the Peppol example changed: no InvoiceTypeCode 380");
  return invoice.replace(anchor, `${anchor}\n    ${xml}`);
}

/** The Peppol example with a DOCTYPE (internal subset `subset`, or external id `external`) first. */
function withDoctype(doctype: string): Buffer {
  return Buffer.from(example("peppolInvoice").replace(DECLARATION, `${DECLARATION}${doctype}\n`));
}

/** Nine levels of ten references each: 10^9 "lol"s (3 GB) if the entities were expanded. */
export function billionLaughs(): Buffer {
  const entities = ['<!ENTITY lol "lol">'];
  for (let i = 1; i <= 9; i++) {
    entities.push(`<!ENTITY lol${i} "${`&lol${i === 1 ? "" : i - 1};`.repeat(10)}">`);
  }
  const doc = Buffer.from(
    example("peppolInvoice")
      .replace(DECLARATION, `${DECLARATION}<!DOCTYPE Invoice [\n${entities.join("\n")}\n]>\n`)
      .replace("<cbc:ID>Snippet1</cbc:ID>", "<cbc:ID>&lol9;</cbc:ID>"),
  );
  return doc;
}

/** An external entity to `systemId` (a file: or http: URL), referenced in a note. */
export function externalEntity(systemId: string): Buffer {
  const doc = invoiceWithNote("<cbc:Note>&xxe;</cbc:Note>").replace(
    DECLARATION,
    `${DECLARATION}<!DOCTYPE Invoice [\n<!ENTITY xxe SYSTEM "${systemId}">\n]>\n`,
  );
  return Buffer.from(doc);
}

/** An external parameter entity to `systemId`, expanded in the internal subset itself. */
export function externalParameterEntity(systemId: string): Buffer {
  return withDoctype(`<!DOCTYPE Invoice [\n<!ENTITY % remote SYSTEM "${systemId}">\n%remote;\n]>`);
}

/** A DOCTYPE whose external subset is at `systemId`. */
export function externalDtd(systemId: string): Buffer {
  return withDoctype(`<!DOCTYPE Invoice SYSTEM "${systemId}">`);
}

/** 10,000 elements nested in a note: 70 KB. */
export function deepNesting(levels = 10_000): Buffer {
  return Buffer.from(invoiceWithNote(`<cbc:Note>${"<x>".repeat(levels)}${"</x>".repeat(levels)}</cbc:Note>`));
}

/** One attribute value of 1 MB on a note: 1,009 KB. */
export function hugeAttribute(bytes = 1_000_000): Buffer {
  return Buffer.from(invoiceWithNote(`<cbc:Note languageID="${"a".repeat(bytes)}">x</cbc:Note>`));
}

/** Distinct prefixes, shortest first; none starts with x, as those starting "xml" are reserved. */
function* prefixes(): Generator<string> {
  const first = "abcdefghijklmnopqrstuvwyzABCDEFGHIJKLMNOPQRSTUVWYZ";
  const rest = `${first}0123456789`;
  for (const a of first) yield a;
  for (const a of first) for (const b of rest) yield a + b;
  for (const a of first) for (const b of rest) for (const c of rest) yield a + b + c;
}

/** Namespace declarations on the root: 100,000 take 1.4 MB, 70,000 (the default) 1,000 KB. */
export function namespaceFlood(count = 70_000): Buffer {
  const declarations: string[] = [];
  for (const prefix of prefixes()) {
    if (declarations.length === count) break;
    declarations.push(` xmlns:${prefix}="u"`);
  }
  return Buffer.from(example("peppolInvoice").replace("<Invoice ", `<Invoice${declarations.join("")} `));
}

/** A UN/CEFACT Cross Industry Invoice: well-formed, in the other syntax EN 16931 allows. */
export function ciiInvoice(): Buffer {
  return Buffer.from(`${DECLARATION}<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
    xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100">
  <rsm:ExchangedDocument><ram:ID>471102</ram:ID><ram:TypeCode>380</ram:TypeCode></rsm:ExchangedDocument>
</rsm:CrossIndustryInvoice>
`);
}

/** The EN 16931 example cut in half: 11 KB. */
export function truncated(): Buffer {
  const whole = Buffer.from(example("invoice"));
  return whole.subarray(0, whole.length >> 1);
}

/** The Peppol example in UTF-16 (little-endian with a byte order mark, or big-endian without). */
export function utf16(withBom = true): Buffer {
  const text = example("peppolInvoice").replace('encoding="UTF-8"', 'encoding="UTF-16"');
  if (withBom) return Buffer.from(`\ufeff${text}`, "utf16le");
  return Buffer.from(text, "utf16le").swap16();
}

/** The Peppol example declared in `encoding`: every byte ASCII, so only the declaration is wrong. */
export function declaredEncoding(encoding = "ISO-8859-1"): Buffer {
  return Buffer.from(example("peppolInvoice").replace('encoding="UTF-8"', `encoding="${encoding}"`));
}

/** A note holding bytes that are no UTF-8: "Caf" 0xE9 (Latin-1 é), and an overlong "/" (C0 AF). */
export function invalidUtf8(): Buffer {
  const [before, after] = invoiceWithNote("<cbc:Note>CUT</cbc:Note>").split("CUT");
  return Buffer.concat([
    Buffer.from(`${before}Caf`),
    Buffer.from([0xe9, 0x20, 0xc0, 0xaf]),
    Buffer.from(after ?? ""),
  ]);
}

/** 65,000 comments and 65,000 processing instructions in a note: 984 KB. */
export function markupFlood(pairs = 65_000): Buffer {
  return Buffer.from(invoiceWithNote(`<cbc:Note>${"<!--c--><?p x?>".repeat(pairs)}</cbc:Note>`));
}

/** 200,000 empty elements in a note: 800 KB. */
export function emptyElements(count = 200_000): Buffer {
  return Buffer.from(invoiceWithNote(`<cbc:Note>${"<a/>".repeat(count)}</cbc:Note>`));
}

/** A note of 900 KiB. */
export function hugeText(bytes = 900 * 1024): Buffer {
  return Buffer.from(invoiceWithNote(`<cbc:Note>${"x".repeat(bytes)}</cbc:Note>`));
}

/**
 * Not hostile: the Peppol example with a base64 attachment of `bytes` (a PDF, say), the one text an
 * invoice may carry at length.
 */
export function largeAttachment(bytes = 900 * 1024): Buffer {
  const anchor = "<cac:AccountingSupplierParty>";
  const base64 = Buffer.alloc(Math.floor((bytes * 3) / 4), 7).toString("base64");
  const reference = `<cac:AdditionalDocumentReference><cbc:ID>att-1</cbc:ID><cac:Attachment><cbc:EmbeddedDocumentBinaryObject mimeCode="application/pdf" filename="invoice.pdf">${base64}</cbc:EmbeddedDocumentBinaryObject></cac:Attachment></cac:AdditionalDocumentReference>\n    `;
  return Buffer.from(example("peppolInvoice").replace(anchor, reference + anchor));
}

/** The Peppol example written with other prefixes: the same document to a namespace-aware reader. */
export function reprefixed(style: "inv" | "ns2" | "default-inner"): string {
  const invoice = example("peppolInvoice");
  const rootDefault = `xmlns="${INVOICE_NS}"`;
  if (style === "default-inner") {
    return invoice
      .replace(/<cbc:([A-Za-z]+)([ >])/g, `<$1 xmlns="${CBC}"$2`)
      .replace(/<\/cbc:([A-Za-z]+)>/g, "</$1>");
  }
  return invoice
    .replace(rootDefault, `xmlns:${style}="${INVOICE_NS}"`)
    .replace("<Invoice ", `<${style}:Invoice `)
    .replace("</Invoice>", `</${style}:Invoice>`);
}
