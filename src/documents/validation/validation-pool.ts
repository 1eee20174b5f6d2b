import { FairQueue, orBusy, QueueFull } from "../../threads/fair-queue.ts";
import { failedWith, WorkerPool } from "../../threads/worker-pool.ts";
import { catalogSync, resultOf } from "./remote-check.ts";
import type { RuleContext } from "./rules/types.ts";
import { isLargeDocument, type ValidationResult, validateInvoice } from "./validation.ts";
import type { ValidationAnswer, ValidationRequest } from "./validation-thread.ts";

const THREAD = new URL("./validation-thread.ts", import.meta.url);

export type Validate = (body: unknown, ctx: RuleContext) => Promise<ValidationResult>;

/** The thread's share of one business's documents (e.g. 16 waiting), and of all. */
export const VALIDATION_SHARE = 16;
export const VALIDATION_QUEUE = 128;

/** The business's share of the validation thread's queue is used: the caller answers 503. */
export class ValidationBusy extends QueueFull {}

type Check = { body: unknown; ctx: RuleContext };

/**
 * Checks invoices without holding the event loop: a MiB of invoice lines takes 30 ms or more to
 * check (a batch document of 10,000 lines, 100 ms), time in which no other request would be
 * answered. Large documents go to a thread of their own, started on the first and again after a
 * crash; small ones, nearly all, are checked in place. With `thread: false` (one core), every
 * document is checked in place. The thread checks one document at a time, from a queue shared
 * fairly between businesses (src/threads/fair-queue.ts): at most `share` of one business wait, at
 * most `maxQueue` in all, taken in turn by business, so one business's large documents do not hold
 * up another's.
 */
export function validationPool(options: {
  thread: boolean;
  maxMemoryMb?: number;
  share?: number;
  maxQueue?: number;
}) {
  const queue = new FairQueue<Check, ValidationAnswer>({
    share: options.share ?? VALIDATION_SHARE,
    capacity: options.maxQueue ?? VALIDATION_QUEUE,
    work: { one: "document", plural: "documents", verb: "checked" },
    refusal: ValidationBusy,
  });
  // The catalog's codes go over once per thread and set (the set is replaced when the catalog is reloaded).
  const catalog = catalogSync();
  const pool = new WorkerPool({
    entry: THREAD,
    queue,
    resourceLimits: { maxOldGenerationSizeMb: options.maxMemoryMb ?? 512 },
    toThread: ({ body, ctx }: Check, thread) => {
      const { knownProducts, ...rest } = ctx;
      const request: ValidationRequest = { body, ctx: rest };
      const products = catalog(thread, knownProducts);
      if (products !== undefined) request.products = products;
      return request;
    },
    fail: failedWith("checking the invoice", "the validation thread"),
  });

  async function checked(body: unknown, ctx: RuleContext): Promise<ValidationAnswer> {
    // A document that does not name the caller's business has no business: it shares one lane.
    const submitted = queue.submit(ctx.business?.id ?? "unidentified", { body, ctx });
    pool.pump();
    return orBusy(submitted, "the validation thread");
  }

  const validate: Validate = async (body, ctx) => {
    if (!options.thread || !isLargeDocument(body)) return validateInvoice(body, ctx);
    return resultOf(body, await checked(body, ctx));
  };

  return {
    validate,
    close: () => pool.close(new Error("the validation thread is closed")),
  };
}

export type ValidationPool = ReturnType<typeof validationPool>;
