import { parentPort } from "node:worker_threads";
import { capViolations, MAX_VIOLATIONS } from "../../errors.ts";
import type { RuleContext } from "./rules/types.ts";
import { validateInvoice } from "./validation.ts";

export type ValidationRequest = {
  id: number;
  body: unknown;
  ctx: Omit<RuleContext, "knownProducts">;
  /** The catalog's codes, sent when they changed since the last request (by version). */
  products?: { version: number; codes: string[] | undefined };
  productsVersion: number;
};

let products: { version: number; codes: ReadonlySet<string> | undefined } = { version: -1, codes: undefined };

parentPort?.on("message", (request: ValidationRequest) => {
  try {
    if (request.products) {
      const { version, codes } = request.products;
      products = { version, codes: codes ? new Set(codes) : undefined };
    }
    const result = validateInvoice(request.body, { ...request.ctx, knownProducts: products.codes });
    // Only what an answer can list goes back (a copy costs the event loop what it holds), and of the
    // document only the members that checking changed (denoised amounts, a lower-cased id, a derived
    // invoice_kind) or left out (a blank optional field): the checked document is a shallow copy of
    // the body that replaces just those.
    const patch: Record<string, unknown> = {};
    const removed: string[] = [];
    const body = request.body as Record<string, unknown>;
    const checked = result.document as Record<string, unknown>;
    if (checked !== body && typeof checked === "object" && checked !== null) {
      for (const key of Object.keys(checked)) if (checked[key] !== body[key]) patch[key] = checked[key];
      for (const key of Object.keys(body)) if (!Object.hasOwn(checked, key)) removed.push(key);
    }
    const errors = capViolations(result.errors, MAX_VIOLATIONS, result.errorsBeyond);
    const warnings = capViolations(result.warnings, MAX_VIOLATIONS, result.warningsBeyond);
    parentPort?.postMessage({
      id: request.id,
      errors: errors.shown,
      errorsBeyond: errors.total - errors.shown.length,
      warnings: warnings.shown,
      warningsBeyond: warnings.total - warnings.shown.length,
      patch,
      removed,
    });
  } catch (err) {
    parentPort?.postMessage({ id: request.id, error: err instanceof Error ? err.message : String(err) });
  }
});
