import type { FastifyReply } from "fastify";
import { capViolations, MAX_VIOLATIONS, type Violation } from "../errors.ts";

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

/**
 * Warnings ride beside the spec's fields, so `data` stays exactly as the spec says; past
 * MAX_VIOLATIONS, the answer lists the first and counts them all.
 */
export function withWarnings<T extends object>(
  body: T,
  warnings: readonly Violation[],
  /** Warnings found beyond those in the list, counted where they were found. */
  beyond = 0,
): T | (T & { warnings: Violation[]; warnings_truncated?: true; warnings_total?: number }) {
  if (warnings.length === 0) return body;
  const { shown, total } = capViolations(warnings, MAX_VIOLATIONS, beyond);
  return total > shown.length
    ? { ...body, warnings: shown, warnings_truncated: true as const, warnings_total: total }
    : { ...body, warnings: shown };
}

/** A PDF of the invoice `irn`, shown inline, under a file name made of the IRN's safe characters. */
export function sendPdf(reply: FastifyReply, irn: string, pdf: Buffer) {
  return reply
    .type("application/pdf")
    .header("content-disposition", `inline; filename="${irn.replace(/[^A-Za-z0-9._-]/g, "_")}.pdf"`)
    .send(pdf);
}
