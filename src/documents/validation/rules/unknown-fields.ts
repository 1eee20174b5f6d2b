import type { Violation } from "../../../errors.ts";
import { InvoiceDocument } from "../../schema.ts";
import { isObject, type Rule } from "./types.ts";

type SchemaNode = { type?: unknown; properties?: Record<string, SchemaNode>; items?: SchemaNode };

/** Levenshtein distance, for "did you mean" on misspelt field names. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/**
 * "Did you mean" costs a distance per known name, quadratic in the names' lengths: it is offered only
 * for names a person could have mistyped, and for the first few of them in a document.
 */
const SUGGEST_MAX_LENGTH = 64;
const SUGGESTIONS_PER_DOCUMENT = 50;

type Budget = { left: number; seen: Map<Record<string, SchemaNode>, Map<string, string>> };

/** The suggestion for `name` among the fields of `properties`, worked out once per document. */
function suggestionFor(name: string, properties: Record<string, SchemaNode>, budget: Budget): string {
  let known = budget.seen.get(properties);
  if (!known) {
    known = new Map();
    budget.seen.set(properties, known);
  }
  let found = known.get(name);
  if (found === undefined) {
    if (name.length > SUGGEST_MAX_LENGTH || budget.left <= 0) return "";
    budget.left--;
    found = suggestion(name, Object.keys(properties));
    known.set(name, found);
  }
  return found;
}

function suggestion(name: string, known: string[]): string {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const d = distance(name, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(name.length / 4))
    ? `; did you mean '${best}'?`
    : "";
}

function walk(value: unknown, schema: SchemaNode, path: string, out: Violation[], budget: Budget): void {
  if (schema.properties && isObject(value)) {
    const properties = schema.properties;
    for (const key of Object.keys(value)) {
      // Own properties only: `constructor` or `toString` in a document are unknown fields too.
      const childSchema = Object.hasOwn(properties, key) ? properties[key] : undefined;
      const child = value[key];
      // Paths are built only where they can be reported: below objects and arrays, and for an unknown field.
      if (childSchema && typeof child === "object" && child !== null) {
        walk(child, childSchema, path ? `${path}.${key}` : key, out, budget);
      } else if (!childSchema) {
        out.push({
          path: path ? `${path}.${key}` : key,
          rule: "unknown_field",
          message: `is not a field of the invoice document and was ignored${suggestionFor(key, properties, budget)}`,
        });
      }
    }
  } else if (schema.items && Array.isArray(value)) {
    const items = schema.items;
    value.forEach((item, i) => {
      walk(item, items, `${path}[${i}]`, out, budget);
    });
  }
}

/**
 * Fields this version does not know are named, as warnings: newer clients send optional fields
 * (`isic_code`, `service_category`, …) that must not break them, and a misspelling is still caught.
 */
export const unknownFields: Rule = {
  name: "unknown_fields",
  severity: "warning",
  check(doc) {
    const out: Violation[] = [];
    walk(doc, InvoiceDocument as unknown as SchemaNode, "", out, {
      left: SUGGESTIONS_PER_DOCUMENT,
      seen: new Map(),
    });
    return out;
  },
};
