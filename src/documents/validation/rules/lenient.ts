import type { Violation } from "../../../errors.ts";
import { InvoiceDocument } from "../../schema.ts";
import { isObject } from "./types.ts";

/*
 * Liberal in what is accepted, before anything is checked: what real clients send for "nothing" is
 * read as nothing, and said so in a warning, so that the rules judge what the client meant and the
 * document that is signed is the one they judged.
 *
 * - An optional text field sent empty or blank (`"order_reference": ""`, `"telephone": "  "`) is
 *   absent. Accounting connectors map every field of their own record and send `""` where it has no
 *   value; a QuickBooks connector in production use sends `order_reference`, `accounting_cost` and
 *   `buyer_reference` that way on every invoice. Refusing `""` where a field is optional, while
 *   `note: ""` was accepted, was an accident of which fields carry a minimum length. A required text
 *   field is never dropped: empty, it is still the schema's error.
 * - A missing (or empty) `invoice_kind` is derived from the customer: B2B when it has a TIN, else
 *   B2C. The spec's shortest form carries it, but clients built on the authority's own examples
 *   (which do not have it) leave it out; the derived value is the one stored and signed.
 *
 * Only fields of the invoice document are read this way: an unknown field is kept as it was sent
 * (its type is not known here) and named by the unknown-fields rule.
 */

type SchemaNode = {
  type?: unknown;
  properties?: Record<string, SchemaNode>;
  required?: readonly string[];
  items?: SchemaNode;
};

/** What the walk needs of an object node: its optional text members, and the members to descend into. */
type Plan = { optionalText: readonly string[]; nested: readonly [string, SchemaNode][] };

const plans = new WeakMap<SchemaNode, Plan>();
/** The plan of an object node, worked out once (the schema never changes). */
function planOf(node: SchemaNode): Plan {
  let plan = plans.get(node);
  if (plan === undefined) {
    const required = new Set(node.required ?? []);
    const members = Object.entries(node.properties ?? {});
    plan = {
      optionalText: members
        .filter(([key, child]) => child.type === "string" && !required.has(key))
        .map(([key]) => key),
      nested: members.filter(([, child]) => holdsText(child)),
    };
    plans.set(node, plan);
  }
  return plan;
}

const holding = new WeakMap<SchemaNode, boolean>();
/** Whether an object or array node holds an optional text field somewhere below it (remembered). */
function holdsText(node: SchemaNode): boolean {
  let known = holding.get(node);
  if (known === undefined) {
    known =
      node.type === "object"
        ? planOf(node).optionalText.length > 0 || planOf(node).nested.length > 0
        : node.type === "array" && node.items !== undefined && holdsText(node.items);
    holding.set(node, known);
  }
  return known;
}

/**
 * Empty or only whitespace. `trim` stops at the first other character from either end, so a long
 * text costs nothing; a long run of spaces costs one pass.
 */
export const isBlank = (text: string): boolean => text.length === 0 || text.trim().length === 0;

/** Where the walk is: the segments of the path, joined only for a finding (most nodes have none). */
type Trail = (string | number)[];

const pathOf = (trail: Trail): string =>
  trail.reduce<string>(
    (path, step) => (typeof step === "number" ? `${path}[${step}]` : path === "" ? step : `${path}.${step}`),
    "",
  );

const absent = (trail: Trail, text: string): Violation => ({
  path: pathOf(trail),
  rule: "empty_optional_field",
  message: `is ${text.length === 0 ? "empty" : "blank (whitespace only)"}: an optional field sent without a value is read as absent, and left out of the signed document`,
});

/**
 * `value` without its blank optional text fields, copied only along the way to a change (the
 * submitted document may be a request body that is logged or replayed, and most need no change).
 */
function withoutBlanks(value: unknown, node: SchemaNode, trail: Trail, out: Violation[]): unknown {
  if (Array.isArray(value)) {
    const items = node.items;
    if (node.type !== "array" || items === undefined) return value;
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      trail.push(i);
      const kept = withoutBlanks(item, items, trail, out);
      trail.pop();
      if (kept === item) continue;
      copy ??= value.slice();
      copy[i] = kept;
    }
    return copy ?? value;
  }
  if (node.type !== "object" || !isObject(value)) return value;
  const plan = planOf(node);
  let copy: Record<string, unknown> | undefined;
  for (const key of plan.optionalText) {
    const text = Object.hasOwn(value, key) ? value[key] : undefined;
    if (typeof text !== "string" || !isBlank(text)) continue;
    copy ??= { ...value };
    delete copy[key];
    trail.push(key);
    out.push(absent(trail, text));
    trail.pop();
  }
  for (const [key, child] of plan.nested) {
    if (!Object.hasOwn(value, key)) continue;
    const member = value[key];
    if (typeof member !== "object" || member === null) continue;
    trail.push(key);
    const kept = withoutBlanks(member, child, trail, out);
    trail.pop();
    if (kept === member) continue;
    copy ??= { ...value };
    copy[key] = kept;
  }
  return copy ?? value;
}

/** The document with `invoice_kind` derived when it has none (or an empty one). */
function withKind(doc: Record<string, unknown>, out: Violation[]): Record<string, unknown> {
  const given = doc.invoice_kind;
  if (given !== undefined && !(typeof given === "string" && isBlank(given))) return doc;
  const customer = isObject(doc.accounting_customer_party) ? doc.accounting_customer_party : {};
  const hasTin = typeof customer.tin === "string" && !isBlank(customer.tin);
  const kind = hasTin ? "B2B" : "B2C";
  out.push({
    path: "invoice_kind",
    rule: "invoice_kind_derived",
    message: `is ${given === undefined ? "missing" : "empty"}: ${kind} was used, as the customer party ${hasTin ? "has a TIN" : "has no TIN"} (B2B with one, B2C without); send invoice_kind to say otherwise, e.g. B2G for a government buyer`,
    related: ["accounting_customer_party.tin"],
  });
  return { ...doc, invoice_kind: kind };
}

/**
 * The document as it is read (see above), with a warning for each field read differently from how
 * it was written. The document passed in is not modified.
 */
export function readLeniently(doc: Record<string, unknown>): {
  document: Record<string, unknown>;
  warnings: Violation[];
} {
  const warnings: Violation[] = [];
  const cleaned = withoutBlanks(doc, InvoiceDocument as unknown as SchemaNode, [], warnings) as Record<
    string,
    unknown
  >;
  return { document: withKind(cleaned, warnings), warnings };
}
