import { Worker } from "node:worker_threads";
import { busyError, FairQueue, type Job, QueueFull } from "../../threads/fair-queue.ts";
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
  let worker: Worker | undefined;
  let nextId = 0;
  const queue = new FairQueue<Check, Answer>({
    share: options.share ?? VALIDATION_SHARE,
    capacity: options.maxQueue ?? VALIDATION_QUEUE,
    work: { one: "document", plural: "documents", verb: "checked" },
    refusal: ValidationBusy,
  });
  let current: { id: number; job: Job<Check, Answer>; on: Worker } | undefined;
  // The catalog's codes go over once per set (the set is replaced when the catalog is reloaded).
  let sentProducts: ReadonlySet<string> | undefined | null = null;
  let productsVersion = 0;

  function settle(on: Worker, outcome: Answer | Error) {
    if (current?.on !== on) return;
    const { job } = current;
    current = undefined;
    if (outcome instanceof Error) job.reject(outcome);
    else if (outcome.error === undefined) job.resolve(outcome);
    else job.reject(new Error(`checking the invoice failed: ${outcome.error}`));
    next();
  }

  function thread(): Worker {
    if (worker) return worker;
    const started = new Worker(THREAD, {
      resourceLimits: { maxOldGenerationSizeMb: options.maxMemoryMb ?? 512 },
    });
    sentProducts = null;
    started.on("message", (answer: Answer) => {
      if (current?.id === answer.id) settle(started, answer);
    });
    started.on("error", (err) => settle(started, err));
    started.on("exit", (code) => {
      if (worker === started) worker = undefined;
      settle(started, new Error(`the validation thread stopped (exit code ${code})`));
    });
    worker = started;
    return started;
  }

  function next() {
    if (current) return;
    const job = queue.take();
    if (!job) {
      // Idle, the thread must not keep the process alive; while a check is out, it must.
      worker?.unref();
      return;
    }
    const { knownProducts, ...rest } = job.input.ctx;
    const request: ValidationRequest = { id: nextId++, body: job.input.body, ctx: rest, productsVersion };
    const target = thread();
    if (sentProducts !== knownProducts) {
      productsVersion++;
      request.products = { version: productsVersion, codes: knownProducts ? [...knownProducts] : undefined };
      sentProducts = knownProducts;
    }
    current = { id: request.id, job, on: target };
    target.ref();
    target.postMessage(request);
  }

  async function checked(body: unknown, ctx: RuleContext): Promise<Answer> {
    // A document that does not name the caller's business has no business: it shares one lane.
    const submitted = queue.submit(ctx.business?.id ?? "unidentified", { body, ctx });
    next();
    try {
      return await submitted;
    } catch (err) {
      if (err instanceof ValidationBusy) throw busyError("the validation thread", err);
      throw err;
    }
  }

  const validate: Validate = async (body, ctx) => {
    if (!options.thread || lineCount(body) <= INLINE_LINES) return validateInvoice(body, ctx);
    const answer = await checked(body, ctx);
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
      queue.clear(new Error("the validation thread is closed"));
      await stopping?.terminate();
    },
  };
}

export type ValidationPool = ReturnType<typeof validationPool>;
