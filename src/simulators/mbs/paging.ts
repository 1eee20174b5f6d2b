import { invalid } from "./envelopes.ts";

export type Query = Record<string, unknown>;
export type Page<T> = { items: T[]; page: number; size: number; total: number };

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** One query parameter as text; a repeated one is refused rather than guessed at. */
export function queryText(query: Query, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || value === "") return undefined;
  if (typeof value !== "string") throw invalid(`${name} must be given once`);
  return value;
}

function wholeNumber(query: Query, name: string, fallback: number, max: number): number {
  const text = queryText(query, name);
  if (text === undefined) return fallback;
  const n = /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= 1 && n <= max)) throw invalid(`${name} must be a whole number from 1 to ${max}`);
  return n;
}

function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === undefined || a === null) return 1;
  if (b === undefined || b === null) return -1;
  return String(a) < String(b) ? -1 : 1;
}

/**
 * The spec's paging for every search: `size` (1…100, default 20), `page` (from 1), `sort_by` (one of
 * `sortable`) and `sort_direction_desc` (`true`/`false`). The answer's shape is the simulator's
 * choice: `{items, page, size, total}`.
 */
export function pageOf<T extends object>(
  items: readonly T[],
  query: Query,
  sortable: readonly (keyof T & string)[],
): Page<T> {
  const size = wholeNumber(query, "size", DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  const page = wholeNumber(query, "page", 1, 1_000_000);
  const sortBy = queryText(query, "sort_by") ?? sortable[0];
  if (!sortBy || !(sortable as readonly string[]).includes(sortBy)) {
    throw invalid(`sort_by must be one of ${sortable.join(", ")}`);
  }
  // Any case: Python's requests writes the boolean True as "True" [client].
  const desc = (queryText(query, "sort_direction_desc") ?? "false").toLowerCase();
  if (desc !== "true" && desc !== "false") throw invalid("sort_direction_desc must be true or false");
  const key = sortBy as keyof T;
  // Array.prototype.sort is stable: equal keys keep the order they were created in.
  const sorted = [...items].sort((a, b) => compare(a[key], b[key]) * (desc === "true" ? -1 : 1));
  return { items: sorted.slice((page - 1) * size, page * size), page, size, total: items.length };
}
