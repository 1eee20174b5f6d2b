import { capViolations, MAX_VIOLATIONS } from "../../errors.ts";
import type { ThreadMain } from "../../threads/worker-pool.ts";
import type { RuleContext } from "./rules/types.ts";
import { type ValidationResult, validateInvoice } from "./validation.ts";

export type ValidationRequest = {
  body: unknown;
  ctx: Omit<RuleContext, "knownProducts">;
  /** The catalog's codes (null: no catalog), sent to each thread once, and again when the set changes. */
  products?: string[] | null;
};

/** What comes back: what an answer can list, and of the document only what checking changed. */
export type ValidationAnswer = {
  errors: ValidationResult["errors"];
  errorsBeyond: number;
  warnings: ValidationResult["warnings"];
  warningsBeyond: number;
  patch: Record<string, unknown>;
  /** Members of the body the checked document leaves out. */
  removed: string[];
};

/** The validation thread's module (see validation-pool.ts). */
export default (() => {
  let products: ReadonlySet<string> | undefined;
  return (request: ValidationRequest): ValidationAnswer => {
    if (request.products !== undefined) products = request.products ? new Set(request.products) : undefined;
    const result = validateInvoice(request.body, { ...request.ctx, knownProducts: products });
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
    return {
      errors: errors.shown,
      errorsBeyond: errors.total - errors.shown.length,
      warnings: warnings.shown,
      warningsBeyond: warnings.total - warnings.shown.length,
      patch,
      removed,
    };
  };
}) satisfies ThreadMain;
