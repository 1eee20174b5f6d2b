/*
 * XML as UBL out writes it: an element tree built in the schema's order, and its text. Nothing here
 * knows UBL; write.ts says what goes where.
 */

/** An element as written: a name, attributes, and either text or child elements. */
export type Element = { name: string; attrs?: Record<string, string>; text?: string; children: Element[] };
export type Children = Element[];

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };
const escapeXml = (text: string) =>
  /[&<>"]/.test(text) ? text.replace(/[&<>"]/g, (c) => ESCAPES[c] as string) : text;

/**
 * The tree as XML text. Written here, not by a builder library: measured on a 1,000-line invoice,
 * xmlbuilder2 took 460 ms and fast-xml-builder 65 ms to do what these lines do in a few, and the
 * writer runs on the event loop. Names come from this file only; text and attribute values are
 * escaped.
 */
export function serialize(element: Element, indent: string): string {
  let xml = `${indent}<${element.name}`;
  if (element.attrs)
    for (const key in element.attrs) xml += ` ${key}="${escapeXml(element.attrs[key] as string)}"`;
  if (element.text !== undefined) return `${xml}>${escapeXml(element.text)}</${element.name}>\n`;
  if (element.children.length === 0) return `${xml}/>\n`;
  xml += ">\n";
  for (const child of element.children) xml += serialize(child, `${indent}  `);
  return `${xml}${indent}</${element.name}>\n`;
}

/** XML 1.0 has no place for C0 controls but tab, line feed and carriage return. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the characters XML cannot carry
const UNWRITABLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;
const UNWRITABLE_ALL = new RegExp(UNWRITABLE.source, "g");

/** A number as UBL's xsd:decimal: never in exponent form, every digit the document had. */
export function decimal(value: number): string {
  const text = String(value);
  if (!/e/i.test(text)) return text;
  return value.toFixed(20).replace(/\.?0+$/, "");
}

const writable = (text: string) => (UNWRITABLE.test(text) ? text.replace(UNWRITABLE_ALL, "\ufffd") : text);

/** Builds the tree in the schema's element order, which is the order of the calls. */
export class Writer {
  constructor(readonly currency: string) {}
  text(parent: Children, name: string, value: unknown, attrs?: Record<string, string>) {
    if (value === undefined || value === null || value === "") return;
    parent.push({ name, ...(attrs ? { attrs } : {}), text: writable(String(value)), children: [] });
  }
  amount(parent: Children, name: string, value: unknown, currency = this.currency) {
    if (typeof value !== "number") return;
    this.text(parent, name, decimal(value), { currencyID: currency });
  }
  agg(parent: Children, name: string): Children {
    const children: Children = [];
    parent.push({ name, children });
    return children;
  }
}
