import { MAX_VIOLATIONS, type Violation } from "../../errors.ts";
import { InvoiceDocument } from "../schema.ts";
import { normalizeDocument } from "./rules/amounts.ts";
import { INVOICE_RULES } from "./rules/index.ts";
import { readLeniently } from "./rules/lenient.ts";
import { isObject, type RuleContext } from "./rules/types.ts";

export type ValidationResult = {
  errors: Violation[];
  warnings: Violation[];
  /** Errors counted but not listed: only ever beyond MAX_VIOLATIONS listed ones. */
  errorsBeyond: number;
  /** Warnings counted but not listed (only when checked on the validation thread). */
  warningsBeyond: number;
  /**
   * The document as checked, and as it is stored when it is signed (see normalizeDocument and
   * readLeniently).
   */
  document: unknown;
};

type SchemaNode = {
  type?: unknown;
  maxItems?: number;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
};

const arrays = new WeakMap<SchemaNode, boolean>();
/** Whether the schema node is or holds an array (remembered: the schema never changes). */
function holdsArray(node: SchemaNode | undefined): boolean {
  if (node === undefined) return false;
  let known = arrays.get(node);
  if (known === undefined) {
    known =
      node.type === "array" ||
      Object.values(node.properties ?? {}).some(holdsArray) ||
      holdsArray(node.items);
    arrays.set(node, known);
  }
  return known;
}

const members = new WeakMap<SchemaNode, [string, SchemaNode][]>();
/** The members of an object node that are or hold arrays (remembered). */
function arrayMembers(node: SchemaNode): [string, SchemaNode][] {
  let known = members.get(node);
  if (known === undefined) {
    known = Object.entries(node.properties ?? {}).filter(([, child]) => holdsArray(child));
    members.set(node, known);
  }
  return known;
}

/** The arrays of the schema with a bound, and where they are: only those paths are walked. */
function oversized(value: unknown, node: SchemaNode, path: string, out: Violation[]): void {
  if (node.type === "array" && Array.isArray(value)) {
    if (node.maxItems !== undefined && value.length > node.maxItems) {
      out.push({
        path: path || "(body)",
        rule: "maxItems",
        message: `must NOT have more than ${node.maxItems} items`,
        actual: value.length,
      });
      return;
    }
    const items = node.items;
    if (items && holdsArray(items)) {
      for (let i = 0; i < value.length; i++) oversized(value[i], items, `${path}[${i}]`, out);
    }
  } else if (node.properties && isObject(value)) {
    for (const [key, child] of arrayMembers(node)) {
      if (Object.hasOwn(value, key)) oversized(value[key], child, path ? `${path}.${key}` : key, out);
    }
  }
}

/** How many lines a submitted document holds, whatever else it is. */
export function lineCount(body: unknown): number {
  const lines = isObject(body) ? body.invoice_line : undefined;
  return Array.isArray(lines) ? lines.length : 0;
}

/**
 * Documents with more lines than this are checked on the validation thread: checking costs about
 * 10 µs a line, so up to here it holds the event loop for 2 ms at most, less than a copy to the
 * thread and back would.
 */
export const INLINE_LINES = 200;

/**
 * Whether a document is one for the validation thread, whatever else would check it: the one test
 * of where a document is checked. A smaller one is checked where its caller is, in place or, for a
 * single sign or validate, on the preparation thread with the rest of its work (register.ts).
 */
export const isLargeDocument = (body: unknown): boolean => lineCount(body) > INLINE_LINES;

/**
 * Reads a submitted document leniently (rules/lenient.ts), runs every rule over it and sorts the
 * findings into errors and warnings. An array longer than the schema allows (330,000 empty lines
 * fit in a MiB) is refused before any rule looks at its items, so the work stays proportional to
 * what can be accepted.
 */
export function validateInvoice(body: unknown, ctx: RuleContext): ValidationResult {
  if (!isObject(body)) {
    return {
      errors: [{ path: "(body)", rule: "type", message: "must be a JSON object (the invoice document)" }],
      warnings: [],
      errorsBeyond: 0,
      warningsBeyond: 0,
      document: body,
    };
  }
  const tooLong: Violation[] = [];
  oversized(body, InvoiceDocument as unknown as SchemaNode, "", tooLong);
  if (tooLong.length > 0)
    return { errors: tooLong, warnings: [], errorsBeyond: 0, warningsBeyond: 0, document: body };
  // Read as the client meant it (noise out of amounts, blank optional fields absent, invoice_kind
  // derived), then judged: the rules see, and a sign stores, what the warnings describe.
  const { document, warnings } = readLeniently(normalizeDocument(body));
  const errors: Violation[] = [];
  // Error rules may count what the answer cannot list; warnings are few per field and listed.
  const budget = { room: 0, beyond: 0 };
  for (const rule of INVOICE_RULES) {
    const severity = typeof rule.severity === "function" ? rule.severity(ctx) : rule.severity;
    const into = severity === "error" ? errors : warnings;
    budget.room = Math.max(0, MAX_VIOLATIONS - errors.length);
    // One by one: a spread of tens of thousands of findings would overflow the call stack.
    for (const finding of rule.check(document, ctx, severity === "error" ? budget : undefined))
      into.push(finding);
  }
  return { errors, warnings, errorsBeyond: budget.beyond, warningsBeyond: 0, document };
}

/** Checks a document, where it costs the event loop least (see validationPool). */
export type InvoiceValidator = (
  body: unknown,
  ctx: RuleContext,
) => Promise<ValidationResult> | ValidationResult;
