import { XmlCData, XmlElement, XmlText } from "libxml2-wasm";

export const NS = {
  cbc: "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
  cac: "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
  ext: "urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2",
  Invoice: "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2",
  CreditNote: "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2",
} as const;

const PREFIX = new Map<string, string>([
  [NS.cbc, "cbc:"],
  [NS.cac, "cac:"],
  [NS.ext, "ext:"],
  [NS.Invoice, ""],
  [NS.CreditNote, ""],
]);

/**
 * An element of a UBL document, copied out of the parser's memory once: the mapping reads plain
 * objects, and the parser's document is freed before it starts. `name` is the canonical qualified
 * name (`cbc:ID`, whatever prefix the sender chose), `path` its XPath with those names, and `used`
 * is set by the mapping on what it carries, so that what it does not is listed, by path.
 */
export type UblNode = {
  name: string;
  path: string;
  attrs: Record<string, string>;
  text: string;
  children: UblNode[];
  used: boolean;
};

function qualified(element: XmlElement): string {
  const prefix = PREFIX.get(element.namespaceUri);
  return prefix === undefined ? `{${element.namespaceUri}}${element.name}` : `${prefix}${element.name}`;
}

/** The element and everything under it, with canonical names and paths. */
export function copyTree(root: XmlElement): UblNode {
  const top: UblNode = {
    name: root.name,
    path: `/${root.name}`,
    attrs: {},
    text: "",
    children: [],
    used: true,
  };
  fill(root, top);
  return top;
}

function fill(element: XmlElement, node: UblNode): void {
  for (const attr of element.attrs) node.attrs[attr.name] = attr.value;
  const elements: XmlElement[] = [];
  let text = "";
  for (let child = element.firstChild; child; child = child.next) {
    if (child instanceof XmlElement) elements.push(child);
    else if (child instanceof XmlText || child instanceof XmlCData) text += child.content;
  }
  node.text = text.trim();
  const counts = new Map<string, number>();
  for (const child of elements) {
    const name = qualified(child);
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  const seen = new Map<string, number>();
  for (const child of elements) {
    const name = qualified(child);
    const index = (seen.get(name) ?? 0) + 1;
    seen.set(name, index);
    const step = (counts.get(name) ?? 0) > 1 ? `${name}[${index}]` : name;
    const copy: UblNode = {
      name,
      path: `${node.path}/${step}`,
      attrs: {},
      text: "",
      children: [],
      used: false,
    };
    fill(child, copy);
    node.children.push(copy);
  }
}

/**
 * What the mapping did not carry: the outermost unused elements (a whole `cac:PayeeParty`, not each
 * of its leaves), and the attributes it did not read of the elements it used, as `…/@name`.
 */
export function unused(node: UblNode, readAttrs: ReadonlySet<string>, out: string[] = []): string[] {
  for (const child of node.children) {
    if (!child.used) out.push(child.path);
    else {
      for (const attr of Object.keys(child.attrs)) {
        if (!readAttrs.has(`${child.path}/@${attr}`) && !IGNORED_ATTRS.has(attr))
          out.push(`${child.path}/@${attr}`);
      }
      unused(child, readAttrs, out);
    }
  }
  return out;
}

/** Attributes that only say which list a code is from, or repeat the document's currency. */
const IGNORED_ATTRS = new Set(["listAgencyID", "listVersionID", "schemeAgencyID", "currencyID"]);
