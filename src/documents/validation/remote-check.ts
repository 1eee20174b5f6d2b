import { capViolations, MAX_VIOLATIONS } from "../../errors.ts";
import type { ValidationResult } from "./validation.ts";

/*
 * A check made on a thread (the validation thread's, or a sign's on the preparation thread): what
 * goes there besides the body, and what comes back.
 */

/**
 * The catalog's codes for a check to carry to `thread` (numbered by the pool): the set once per
 * thread, and again when the catalog is reloaded (a new set); undefined when the thread has it.
 */
export function catalogSync() {
  let sentTo: number | undefined;
  let sent: ReadonlySet<string> | undefined;
  return (thread: number, known: ReadonlySet<string> | undefined): string[] | null | undefined => {
    if (thread === sentTo && known === sent) return undefined;
    [sentTo, sent] = [thread, known];
    return known ? [...known] : null;
  };
}

/**
 * The thread's side of catalogSync: the set the last check that carried one sent (null: no
 * catalog), kept for the checks that follow.
 */
export function catalogKept() {
  let products: ReadonlySet<string> | undefined;
  return (sent: string[] | null | undefined): ReadonlySet<string> | undefined => {
    if (sent !== undefined) products = sent ? new Set(sent) : undefined;
    return products;
  };
}

/**
 * A check made on a thread, as it comes back: what an answer can list, and of the document only
 * what checking changed. A copy costs the event loop what it holds, so the checked document does not
 * come back whole: it is a shallow copy of the body that replaces the members checking changed
 * (denoised amounts, a lower-cased id, a derived invoice_kind) and leaves out the ones it dropped (a
 * blank optional field).
 */
export type ValidationAnswer = {
  errors: ValidationResult["errors"];
  errorsBeyond: number;
  warnings: ValidationResult["warnings"];
  warningsBeyond: number;
  patch: Record<string, unknown>;
  /** Members of the body the checked document leaves out. */
  removed: string[];
};

/** The answer to send back for `result`, the check of `body`. */
export function answerOf(body: unknown, result: ValidationResult): ValidationAnswer {
  const patch: Record<string, unknown> = {};
  const removed: string[] = [];
  const given = body as Record<string, unknown>;
  const checked = result.document as Record<string, unknown>;
  if (checked !== given && typeof checked === "object" && checked !== null) {
    for (const key of Object.keys(checked)) if (checked[key] !== given[key]) patch[key] = checked[key];
    for (const key of Object.keys(given)) if (!Object.hasOwn(checked, key)) removed.push(key);
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
}

function hasKeys(object: Record<string, unknown>): boolean {
  for (const _ in object) return true;
  return false;
}

/** The check's result again, on this side: the checked document rebuilt from the body and the answer. */
export function resultOf(body: unknown, answer: ValidationAnswer): ValidationResult {
  // Most documents come back unchanged (the patch empty, nothing removed): the body is the document.
  let document = body as Record<string, unknown>;
  if (answer.removed.length > 0 || hasKeys(answer.patch)) {
    document = { ...document, ...answer.patch };
    for (const key of answer.removed) delete document[key];
  }
  return {
    errors: answer.errors,
    errorsBeyond: answer.errorsBeyond,
    warnings: answer.warnings,
    warningsBeyond: answer.warningsBeyond,
    document,
  };
}
