import type { Violation } from "../../http/errors.ts";

/** What rules may know beyond the document: the business it is submitted for. */
export type RuleContext = {
  business: { id: string; service_id: string } | undefined;
};

/**
 * A rule reads the document defensively (it also runs on documents that failed the schema, so that
 * one answer reports every problem) and returns its violations.
 */
export type Rule = {
  name: string;
  severity: "error" | "warning";
  check(doc: Record<string, unknown>, ctx: RuleContext): Violation[];
};

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
