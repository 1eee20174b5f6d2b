import { SaxesParser } from "saxes";

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
 * An element of a UBL document as a plain object: the mapping reads these, not the parser's nodes.
 * `name` is the canonical qualified name (`cbc:ID`, whatever prefix the sender chose), `path` its
 * XPath with those names, and `used` is set by the mapping on what it carries, so that what it does
 * not is listed, by path.
 */
export type UblNode = {
  name: string;
  path: string;
  attrs: Record<string, string>;
  text: string;
  children: UblNode[];
  used: boolean;
};

/** The canonical qualified name: `cbc:ID` whatever prefix the sender chose, `{uri}name` for others. */
function qualified(uri: string, local: string): string {
  const prefix = PREFIX.get(uri);
  return prefix === undefined ? `{${uri}}${local}` : `${prefix}${local}`;
}

type Open = { node: UblNode; text: string };

/**
 * The document's elements as plain objects, with canonical names and paths. It is read a second time
 * by a SAX parser, after libxml2 has parsed it (and checked it against the schema): walking libxml2's
 * tree through its WebAssembly node objects costs about 5 µs an element, three times this whole
 * second parse. The bytes are the ones libxml2 accepted, within the scan's bounds, so this parse
 * meets nothing libxml2 did not; should it fail anyway, the caller refuses the document.
 */
export function ublTree(xml: string): UblNode {
  const parser = new SaxesParser({ xmlns: true, position: false });
  const open: Open[] = [];
  let top: UblNode | undefined;
  parser.on("opentag", (tag) => {
    const attrs: Record<string, string> = {};
    for (const name in tag.attributes) {
      const attr = tag.attributes[name];
      // Namespace declarations are not attributes of the document's content.
      if (attr && attr.prefix !== "xmlns" && attr.name !== "xmlns") attrs[attr.local] = attr.value;
    }
    const parent = open[open.length - 1];
    const node: UblNode = {
      name: parent ? qualified(tag.uri, tag.local) : tag.local,
      path: parent ? "" : `/${tag.local}`,
      attrs,
      text: "",
      children: [],
      used: !parent,
    };
    if (parent) parent.node.children.push(node);
    else top = node;
    open.push({ node, text: "" });
  });
  const addText = (text: string) => {
    const current = open[open.length - 1];
    if (current) current.text += text;
  };
  parser.on("text", addText);
  parser.on("cdata", addText);
  parser.on("closetag", () => {
    const closed = open.pop();
    if (closed) closed.node.text = closed.text.trim();
  });
  parser.on("error", (err) => {
    throw err;
  });
  parser.write(xml).close();
  if (!top) throw new Error("the document has no root element");
  place(top);
  return top;
}

/**
 * Each element's path below `node`: its name, with its position among its same-named siblings when
 * it has some (known only once they are all read), under its parent's path.
 */
function place(node: UblNode): void {
  const { children } = node;
  // Most elements are leaves, and most others have each name once: no counting for them.
  if (children.length === 0) return;
  if (children.length === 1) {
    const only = children[0] as UblNode;
    only.path = `${node.path}/${only.name}`;
    place(only);
    return;
  }
  const counts = new Map<string, number>();
  for (const child of children) counts.set(child.name, (counts.get(child.name) ?? 0) + 1);
  const repeated = counts.size < children.length;
  const seen = repeated ? new Map<string, number>() : undefined;
  for (const child of children) {
    let step = child.name;
    if (seen && (counts.get(step) ?? 0) > 1) {
      const index = (seen.get(step) ?? 0) + 1;
      seen.set(step, index);
      step = `${step}[${index}]`;
    }
    child.path = `${node.path}/${step}`;
    place(child);
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
