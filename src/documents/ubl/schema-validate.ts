import type { XmlDocument, XsdValidator } from "libxml2-wasm";
import * as libxml2 from "libxml2-wasm/lib/libxml2.mjs";

/*
 * XSD validation that stops after the violations it lists. libxml2 reports every violation, through
 * libxml2-wasm's collector each with an XPath, and libxml2 computes an XPath by counting the element's
 * siblings: 35,000 notes with an unknown attribute (under 1 MiB) took 10 s; counted without XPaths,
 * 142,000 unknown attributes still took 0.5 s, as libxml2 spends 3 µs formatting each message. It has
 * no bound of its own, so at the first violation beyond the list the rest of the document is cut off
 * the tree it walks: the element and each of its ancestors is made the last of its siblings, by
 * rewriting their `next` and their parent's `last` pointers, and the pointers are put back once it has
 * finished. That is a few words per level: unlinking the siblings one by one through the API took
 * 50 ms for 37,000 of them.
 *
 * This goes through the library's internal bindings (lib/libxml2.mjs, typed but for addFunction), its
 * objects' pointers and libxml2's node layout in 32-bit WebAssembly; checkNodeLayout verifies the
 * layout against the library's own accessors before anything is written.
 */

export type SchemaViolation = { message: string; xpath?: string; line?: number };

const ATTRIBUTE_NODE = 2;
const DOCUMENT_NODE = 9;
/** Byte offsets in xmlNode, as lib/libxml2.mjs reads them (XmlTreeCommonStruct). */
const LAST = 16;
const PARENT = 20;
const NEXT = 24;

const state = {
  limit: 0,
  violations: [] as SchemaViolation[],
  more: false,
  /** Pointers rewritten to cut the document short: put back after validation, last first. */
  cuts: [] as { node: number; next: number; parent: number; last: number }[],
};
let collector = 0;

/** The WebAssembly memory, whose only way out of lib/libxml2.mjs is this view of it. */
function heap(): Int32Array {
  return new Int32Array(libxml2.XmlNodeSetStruct.nodeTable(0, 0).buffer);
}

/** Throws unless the offsets above are where libxml2-wasm itself finds these pointers. */
export function checkNodeLayout(doc: XmlDocument): void {
  const { children, last, next, parent } = libxml2.XmlTreeCommonStruct;
  const root = libxml2.xmlDocGetRootElement((doc as unknown as { _ptr: number })._ptr);
  const child = children(root);
  const memory = heap();
  const same =
    child !== 0 &&
    memory[(child + PARENT) >> 2] === parent(child) &&
    memory[(child + NEXT) >> 2] === next(child) &&
    memory[(root + LAST) >> 2] === last(root);
  if (!same) throw new Error("libxml2-wasm's node layout is not the one schema validation relies on");
}

/** Makes `node` (an attribute's element, for an attribute) and each ancestor the last of its siblings. */
function cutAfter(node: number): void {
  const { type, parent } = libxml2.XmlTreeCommonStruct;
  let at = node !== 0 && type(node) === ATTRIBUTE_NODE ? parent(node) : node;
  const memory = heap();
  while (at !== 0 && type(at) !== DOCUMENT_NODE) {
    const up = memory[(at + PARENT) >> 2] ?? 0;
    const next = memory[(at + NEXT) >> 2] ?? 0;
    if (next !== 0 && up !== 0) {
      state.cuts.push({ node: at, next, parent: up, last: memory[(up + LAST) >> 2] ?? 0 });
      memory[(at + NEXT) >> 2] = 0;
      memory[(up + LAST) >> 2] = at;
    }
    at = up;
  }
}

function restore(): void {
  const memory = heap();
  for (const { node, next, parent, last } of state.cuts.reverse()) {
    memory[(node + NEXT) >> 2] = next;
    memory[(parent + LAST) >> 2] = last;
  }
  state.cuts = [];
}

function errorCollector(): number {
  if (collector !== 0) return collector;
  const { addFunction } = libxml2 as unknown as {
    addFunction(fn: (...args: number[]) => void, signature: string): number;
  };
  collector = addFunction((_data: number, error: number) => {
    const node = libxml2.XmlErrorStruct.node(error);
    if (state.violations.length >= state.limit) {
      state.more = true;
      cutAfter(node);
      return;
    }
    const line = libxml2.XmlErrorStruct.line(error);
    const xpath = libxml2.xmlGetNodePath(node);
    state.violations.push({
      message: libxml2.XmlErrorStruct.message(error).trim(),
      ...(xpath ? { xpath } : {}),
      ...(line > 0 ? { line } : {}),
    });
  }, "vii");
  return collector;
}

/** The first `limit` violations of `doc` against `validator`, and whether there were more. */
export function boundedValidate(
  validator: XsdValidator,
  doc: XmlDocument,
  limit: number,
): { violations: SchemaViolation[]; more: boolean } {
  const pointer = (disposable: object) => (disposable as { _ptr?: number })._ptr ?? 0;
  const schema = pointer(validator);
  const document = pointer(doc);
  if (schema === 0 || document === 0) throw new Error("the schema or the document is disposed");
  const context = libxml2.xmlSchemaNewValidCtxt(schema);
  if (context === 0) throw new Error("libxml2 could not allocate a schema validation context");
  Object.assign(state, { limit, violations: [], more: false, cuts: [] });
  try {
    libxml2.xmlSchemaSetValidStructuredErrors(context, errorCollector(), 0);
    const result = libxml2.xmlSchemaValidateDoc(context, document);
    if (result < 0) throw new Error("libxml2 could not validate the document (an internal error)");
    return { violations: state.violations, more: state.more };
  } finally {
    libxml2.xmlSchemaFreeValidCtxt(context);
    restore();
  }
}
