import type { Violation } from "./errors.ts";

/** Success envelopes exactly as the spec defines them; error envelopes live in the error mapper. */

export function action<T>(message: string, data: T) {
  return { status: true as const, code: 200 as const, message, data };
}

export function reference<T>(data: T[]) {
  return { code: 200 as const, data };
}

export function units<T>(data: T[]) {
  return { status: true as const, message: "Units fetched successfully", data };
}

export function health() {
  return { code: 200 as const, data: null, message: "API is healthy" };
}

/** Warnings ride beside the spec's fields, so `data` stays exactly as the spec says. */
export function withWarnings<T extends object>(
  body: T,
  warnings: readonly Violation[],
): T | (T & { warnings: Violation[] }) {
  return warnings.length > 0 ? { ...body, warnings: [...warnings] } : body;
}
