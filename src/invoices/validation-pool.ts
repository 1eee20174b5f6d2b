import { Worker } from "node:worker_threads";
import type { RuleContext } from "./rules/types.ts";
import { lineCount, type ValidationResult, validateInvoice } from "./validation.ts";
import type { ValidationRequest } from "./validation-thread.ts";

const THREAD = new URL("./validation-thread.mjs", import.meta.url);

/**
 * Documents with more lines than this are checked on the validation thread: checking costs about
 * 10 µs a line, so up to here it holds the event loop for 2 ms at most, less than a copy to the
 * thread and back would.
 */
export const INLINE_LINES = 200;

export type Validate = (body: unknown, ctx: RuleContext) => Promise<ValidationResult>;

type Answer = {
  id: number;
  error?: string;
  errors: ValidationResult["errors"];
  errorsBeyond: number;
  warnings: ValidationResult["warnings"];
  warningsBeyond: number;
  patch: Record<string, unknown>;
  /** Members of the body the checked document leaves out. */
  removed: string[];
};

/**
 * Checks invoices without holding the event loop: a MiB of invoice lines takes 30 ms or more to
 * check (a batch document of 10,000 lines, 100 ms), time in which no other request would be
 * answered. Large documents go to a thread of their own, started on the first and again after a
 * crash; small ones, nearly all, are checked in place. With `thread: false` (one core), every
 * document is checked in place.
 */
export function validationPool(options: { thread: boolean; maxMemoryMb?: number }) {
  let worker: Worker | undefined;
  let nextId = 0;
  const waiting = new Map<number, { resolve(answer: Answer): void; reject(err: Error): void }>();
  // The catalog's codes go over once per set (the set is replaced when the catalog is reloaded).
  let sentProducts: ReadonlySet<string> | undefined | null = null;
  let productsVersion = 0;

  function failAll(err: Error) {
    for (const { reject } of waiting.values()) reject(err);
    waiting.clear();
  }

  function thread(): Worker {
    if (worker) return worker;
    const started = new Worker(THREAD, {
      resourceLimits: { maxOldGenerationSizeMb: options.maxMemoryMb ?? 512 },
    });
    sentProducts = null;
    started.on("message", (answer: Answer) => {
      const pending = waiting.get(answer.id);
      waiting.delete(answer.id);
      // Idle, the thread must not keep the process alive; while a check is out, it must.
      if (waiting.size === 0) started.unref();
      if (!pending) return;
      if (answer.error === undefined) pending.resolve(answer);
      else pending.reject(new Error(`checking the invoice failed: ${answer.error}`));
    });
    started.on("error", (err) => failAll(err));
    started.on("exit", (code) => {
      if (worker === started) worker = undefined;
      failAll(new Error(`the validation thread stopped (exit code ${code})`));
    });
    worker = started;
    return started;
  }

  const validate: Validate = async (body, ctx) => {
    if (!options.thread || lineCount(body) <= INLINE_LINES) return validateInvoice(body, ctx);
    const { knownProducts, ...rest } = ctx;
    const request: ValidationRequest = { id: nextId++, body, ctx: rest, productsVersion };
    const target = thread();
    if (sentProducts !== knownProducts) {
      productsVersion++;
      request.products = { version: productsVersion, codes: knownProducts ? [...knownProducts] : undefined };
      sentProducts = knownProducts;
    }
    const answer = await new Promise<Answer>((resolve, reject) => {
      waiting.set(request.id, { resolve, reject });
      target.ref();
      target.postMessage(request);
    });
    const document: Record<string, unknown> = { ...(body as Record<string, unknown>), ...answer.patch };
    for (const key of answer.removed) delete document[key];
    return {
      errors: answer.errors,
      errorsBeyond: answer.errorsBeyond,
      warnings: answer.warnings,
      warningsBeyond: answer.warningsBeyond,
      document,
    };
  };

  return {
    validate,
    async close() {
      const stopping = worker;
      worker = undefined;
      await stopping?.terminate();
    },
  };
}

export type ValidationPool = ReturnType<typeof validationPool>;
