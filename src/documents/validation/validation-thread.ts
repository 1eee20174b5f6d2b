import type { ThreadMain } from "../../threads/worker-pool.ts";
import { answerOf, catalogKept, type ValidationAnswer } from "./remote-check.ts";
import type { RuleContext } from "./rules/types.ts";
import { validateInvoice } from "./validation.ts";

export type { ValidationAnswer };

export type ValidationRequest = {
  body: unknown;
  ctx: Omit<RuleContext, "knownProducts">;
  /** The catalog's codes (null: no catalog), sent to each thread once, and again when the set changes. */
  products?: string[] | null;
};

/** The validation thread's module (see validation-pool.ts). */
export default (() => {
  const catalog = catalogKept();
  return (request: ValidationRequest): ValidationAnswer => {
    const knownProducts = catalog(request.products);
    return answerOf(request.body, validateInvoice(request.body, { ...request.ctx, knownProducts }));
  };
}) satisfies ThreadMain;
