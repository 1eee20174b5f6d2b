import { isUtf8 } from "node:buffer";
import { ParseOption, XmlDocument, XmlParseError } from "libxml2-wasm";
import { type ScanRule, scanXml } from "./xml-scan.ts";

/*
 * The one way untrusted XML comes in. Each step is linear in the bytes and bounded: the encoding is
 * checked first (UTF-8 only), then the bytes are measured against XML_BOUNDS without parsing them
 * (see xml-scan.ts), and only then does libxml2 build a tree, with no DTD, no entity substitution and
 * no loading of anything.
 */

export const UBL_NAMESPACES = {
  Invoice: "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2",
  CreditNote: "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2",
} as const;
const CII_NAMESPACE = "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100";

export type UblKind = keyof typeof UBL_NAMESPACES;

const KIB = 1024;

export const XML_BOUNDS = {
  /**
   * The body, in bytes. A MiB of real UBL (1,800 invoice lines, or an invoice with a 700 KiB
   * attachment) takes libxml2 12 to 18 ms on a 2-core machine, the costliest markup within the other
   * bounds (an element with one attribute, repeated) about twice that; 2 MiB of real UBL take 25 to
   * 45 ms. Larger bodies would need parsing off the event loop.
   */
  bytes: 1024 * KIB,
  /** UBL nests about 6 levels, 15 with signature extensions; 64 as for JSON bodies. */
  depth: 64,
  /**
   * A MiB of real UBL holds about 27,000 elements (the EN 16931 example's lines, minified), 60,000 at
   * the very densest; libxml2 parses 100,000 empty ones in about 15 ms. A 10,000-line invoice
   * (150,000 elements or more) is 6 MB and beyond the byte bound whatever this one says.
   */
  elements: 100_000,
  /**
   * Comments, processing instructions and CDATA sections: an invoice has a few, a generator that
   * comments or wraps every value has one per element at most.
   */
  markup: 50_000,
  /** Attributes of one element, namespace declarations not counted: UBL's have at most 5. */
  attributes: 32,
  /** One attribute value as written: UBL's are codes and identifiers, xsi:schemaLocation 150 bytes. */
  attributeBytes: 4 * KIB,
  /**
   * One text as written. Notes and descriptions run to a few KiB; base64 attachments
   * (cbc:EmbeddedDocumentBinaryObject) are exempt and bounded by the body alone.
   */
  textBytes: 100 * KIB,
  /** Distinct namespace declarations (prefix and URI): an invoice has about 10, a signed one 20. */
  namespaces: 64,
  /**
   * Namespace declarations, each counted: some writers declare the namespace again on every element,
   * which a MiB of UBL holds 10,000 of (17 ms to parse). libxml2 spends about 0.7 µs on each one;
   * 90,000 take it 55 ms.
   */
  namespaceDeclarations: 20_000,
} as const;

export type XmlRule = ScanRule | "bytes" | "encoding" | "malformed" | "root";

export type XmlRefusal = {
  rule: XmlRule;
  message: string;
  line?: number;
  /** The open elements where a bound broke, by their names as written (prefixes are the sender's). */
  path?: string;
};

export type ParsedXml =
  | { ok: true; doc: XmlDocument; root: { kind: UblKind } }
  | { ok: false; refusal: XmlRefusal };

/*
 * NO_XXE and NONET: nothing external is loaded even if a DOCTYPE got through. Never NOENT, DTDLOAD,
 * DTDATTR, DTDVALID, XINCLUDE or HUGE. BIG_LINES: a large invoice has more than 65,535 lines.
 */
export const XML_PARSE_OPTIONS =
  ParseOption.XML_PARSE_NO_XXE |
  ParseOption.XML_PARSE_NONET |
  ParseOption.XML_PARSE_BIG_LINES |
  ParseOption.XML_PARSE_COMPACT;

const UTF8_BOM = [0xef, 0xbb, 0xbf];
const LONE_SURROGATE = /\p{Cs}/u;

/** A value from the sender, short enough to quote in a message. */
function quote(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
}

/** libxml2 counts CR LF, lone CR and LF each as one line end. */
export function lineAt(buf: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < buf.length; i++) {
    if (buf[i] === 0x0a || (buf[i] === 0x0d && buf[i + 1] !== 0x0a)) line++;
  }
  return line;
}

/** Where UTF-8 decoding fails: run only once isUtf8 has said it does. */
function firstInvalidUtf8(buf: Uint8Array): number {
  for (let i = 0; i < buf.length; ) {
    const lead = buf[i] ?? 0;
    const size = lead < 0x80 ? 1 : lead >= 0xc2 && lead < 0xe0 ? 2 : lead >= 0xe0 && lead < 0xf0 ? 3 : 4;
    if (lead >= 0x80 && (lead < 0xc2 || lead > 0xf4)) return i;
    let code = size === 1 ? lead : lead & (0x7f >> size);
    for (let k = 1; k < size; k++) {
      const next = buf[i + k];
      if (next === undefined || (next & 0xc0) !== 0x80) return i;
      code = (code << 6) | (next & 0x3f);
    }
    const shortest = [0, 0, 0x80, 0x800, 0x10000][size] ?? 0;
    if (code < shortest || code > 0x10ffff || (code >= 0xd800 && code < 0xe000)) return i;
    i += size;
  }
  return buf.length;
}

/** The offset where the document starts (past a UTF-8 byte order mark), or why it is not UTF-8. */
function checkEncoding(buf: Buffer): number | XmlRefusal {
  const head = buf.subarray(0, 4);
  const start = UTF8_BOM.every((b, i) => head[i] === b) ? 3 : 0;
  const utf16Bom = (head[0] === 0xfe && head[1] === 0xff) || (head[0] === 0xff && head[1] === 0xfe);
  if (utf16Bom || head.includes(0)) {
    return {
      rule: "encoding",
      message: "the body is UTF-16 or UTF-32 (a byte order mark or zero bytes first): only UTF-8 is accepted",
      line: 1,
    };
  }
  if (!isUtf8(buf)) {
    const at = firstInvalidUtf8(buf);
    const byte = (buf[at] ?? 0).toString(16).padStart(2, "0");
    return {
      rule: "encoding",
      message: `the body is not valid UTF-8 (byte 0x${byte} at offset ${at}): only UTF-8 is accepted`,
      line: lineAt(buf, at),
    };
  }
  if (
    buf.toString("latin1", start, start + 5) === "<?xml" &&
    /[ \t\r\n]/.test(String.fromCharCode(buf[start + 5] ?? 0))
  ) {
    const end = buf.indexOf("?>", start);
    const declaration = buf.toString("utf8", start, end < 0 ? buf.length : end);
    const declared = /[ \t\r\n]encoding[ \t\r\n]*=[ \t\r\n]*(?:"([^"]*)"|'([^']*)')/.exec(declaration);
    const name = declared?.[1] ?? declared?.[2];
    if (name !== undefined && !/^utf-?8$/i.test(name)) {
      return {
        rule: "encoding",
        message: `the XML declaration says encoding=${quote(name)}: only UTF-8 is accepted`,
        line: 1,
      };
    }
  }
  return start;
}

function rootKind(doc: XmlDocument): { kind: UblKind } | XmlRefusal {
  const root = doc.root;
  const { name, namespaceUri } = root;
  for (const kind of ["Invoice", "CreditNote"] as const) {
    if (name === kind && namespaceUri === UBL_NAMESPACES[kind]) return { kind };
  }
  const line = root.line;
  if (namespaceUri === CII_NAMESPACE) {
    return {
      rule: "root",
      message:
        "the document is a UN/CEFACT Cross Industry Invoice (CII), which is not accepted: send a UBL 2.1 Invoice or CreditNote",
      line,
    };
  }
  const found = namespaceUri ? `{${namespaceUri}}${name}` : `${name} (in no namespace)`;
  return {
    rule: "root",
    message: `the root element is ${quote(found)}: expected a UBL 2.1 Invoice {${UBL_NAMESPACES.Invoice}}Invoice or CreditNote {${UBL_NAMESPACES.CreditNote}}CreditNote`,
    line,
  };
}

/**
 * The document in `body`, parsed, if it is a UBL 2.1 Invoice or CreditNote within XML_BOUNDS; or the
 * first reason it is not. The caller owns `doc` and must dispose it (see withXml).
 */
export function parseXml(body: Buffer | string): ParsedXml {
  const refuse = (refusal: XmlRefusal): ParsedXml => ({ ok: false, refusal });
  const tooLarge = () =>
    refuse({ rule: "bytes", message: `the document is larger than ${XML_BOUNDS.bytes / KIB} KiB` });
  // A string's UTF-8 is at least as long as the string: measured before it is encoded.
  if (body.length > XML_BOUNDS.bytes) return tooLarge();
  if (typeof body === "string" && LONE_SURROGATE.test(body)) {
    return refuse({ rule: "encoding", message: "the text holds an unpaired UTF-16 surrogate" });
  }
  const buf = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  if (buf.length > XML_BOUNDS.bytes) return tooLarge();

  const start = checkEncoding(buf);
  if (typeof start !== "number") return refuse(start);
  const breach = scanXml(buf, start, XML_BOUNDS);
  if (breach) {
    const { rule, message, at, path } = breach;
    return refuse({ rule, message, line: lineAt(buf, at), ...(path ? { path } : {}) });
  }

  let doc: XmlDocument;
  try {
    // The encoding is given so that libxml2 never switches on what the declaration says.
    doc = XmlDocument.fromBuffer(buf.subarray(start), { option: XML_PARSE_OPTIONS, encoding: "UTF-8" });
  } catch (error) {
    if (!(error instanceof XmlParseError)) throw error;
    const first = error.details.find((d) => d.level >= 2) ?? error.details[0];
    // libxml2 quotes names from the document, which may be 50,000 characters long.
    const message = (first?.message ?? error.message).trim().slice(0, 300);
    return refuse({ rule: "malformed", message: `not well-formed XML: ${message}`, line: first?.line });
  }
  if (doc.dtd !== null) {
    doc.dispose();
    return refuse({ rule: "doctype", message: "a document type declaration (DOCTYPE) is not accepted" });
  }
  const root = rootKind(doc);
  if ("rule" in root) {
    doc.dispose();
    return refuse(root);
  }
  return { ok: true, doc, root };
}

/** `use` on a parsed document, disposed after whatever happens. */
export function withXml<T>(doc: XmlDocument, use: (doc: XmlDocument) => T): T {
  try {
    return use(doc);
  } finally {
    doc.dispose();
  }
}
