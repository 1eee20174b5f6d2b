import type { Violation } from "../../../errors.ts";

/** What rules may know beyond the document. */
export type RuleContext = {
  /** The business the document is submitted for; undefined when it is not the caller's. */
  business: { id: string; service_id: string; tin?: string } | undefined;
  /** HS codes of the document found in the product catalog; undefined when no catalog is imported. */
  knownProducts?: ReadonlySet<string> | undefined;
  /** A supplier TIN other than the business's is an error, not a warning (EINVOICE_STRICT_SUPPLIER). */
  strictSupplier?: boolean;
};

/**
 * A rule reads the document defensively (it also runs on documents that failed the schema, so that
 * one answer reports every problem) and returns its findings.
 */
export type Rule = {
  name: string;
  /** Fixed, or decided by the deployment's settings. */
  severity: "error" | "warning" | ((ctx: RuleContext) => "error" | "warning");
  check(doc: Record<string, unknown>, ctx: RuleContext, budget?: FindingBudget): Violation[];
};

/**
 * How many more findings an answer can list (`room`) and how many were found beyond them
 * (`beyond`): a rule that may find tens of thousands counts those past the room instead of
 * building them.
 */
export type FindingBudget = { room: number; beyond: number };

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Objects of an array with their paths, skipping entries of the wrong type (the schema reports those). */
export function entries(value: unknown, path: string): [Record<string, unknown>, string][] {
  // A loop, not flatMap: every rule walks the lines through here, and flatMap's array per item
  // cost more than the rest of the walk.
  const out: [Record<string, unknown>, string][] = [];
  if (!Array.isArray(value)) return out;
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    if (isObject(item)) out.push([item, `${path}[${i}]`]);
  }
  return out;
}

export const num = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isFinite(v) ? v : undefined;
export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/**
 * A line's quantity, unit price, price base quantity (1 when absent) and the gross amount they give,
 * before discount and fee; undefined when one of them is not a usable number.
 */
export function lineBase(line: Record<string, unknown>) {
  const price = isObject(line.price) ? line.price : {};
  const quantity = num(line.invoiced_quantity);
  const unit = num(price.price_amount);
  const per = price.base_quantity === undefined ? 1 : num(price.base_quantity);
  if (quantity === undefined || unit === undefined || per === undefined || per === 0) return undefined;
  return { quantity, unit, per, gross: (quantity * unit) / per };
}
