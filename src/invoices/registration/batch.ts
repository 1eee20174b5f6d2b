import type { Principal } from "../../businesses/business-service.ts";
import { lineCount } from "../../documents/validation/validation.ts";
import { capViolations, DomainError, type Violation } from "../../errors.ts";
import { pacer } from "../../turns.ts";
import type { BatchResult } from "../invoice-route-schemas.ts";
import { BATCH_FINDINGS_PER_DOCUMENT, BATCH_MAX_LINES } from "./batch-limits.ts";

/** How long a batch holds the event loop before it gives other requests a turn. */
const BATCH_TURN_MS = 20;

/** A document's warnings as its check found them: the first ones, and how many more. */
type Warned = { warnings: Violation[]; warningsBeyond: number };

/**
 * Batches: each document of a batch request is registered as a single sign would be, and each
 * outcome becomes that document's result. `Checked` is whatever `check` hands `commit`: a batch does
 * not look inside it.
 */
export function invoiceBatches<Checked>(deps: {
  /** Validates one document; throws `validation_failed` for an invalid one. */
  check(principal: Principal, body: unknown): Promise<Checked>;
  /** Signs and stores a checked document in the group commit; throws `irn_exists` for a duplicate. */
  commit(principal: Principal, checked: Checked, transmitting: boolean): Promise<Warned>;
}) {
  const { check, commit } = deps;

  /**
   * Signs each document of a batch on its own: an invalid or duplicate document never holds up the
   * others. The valid ones meet in the group commit (transactions of up to 64), and each result is
   * given only after its commit. With `transmitting`, each signed invoice is queued for delivery
   * (the outbox workers deliver it; `lookup/{IRN}` tells when) instead of waited for.
   */
  async function signMany(principal: Principal, bodies: readonly unknown[], transmitting: boolean) {
    refuseOversized(bodies);
    const results: Promise<BatchResult>[] = [];
    const pace = pacer(BATCH_TURN_MS);
    for (const [index, body] of bodies.entries()) {
      // Validation runs on the event loop, one document after the other: the loop gets a turn
      // whenever this batch has held it for BATCH_TURN_MS, so other requests keep moving however
      // the batch's work is spread over its documents. Signing is not waited for here: the valid
      // documents still meet in the group commit.
      await pace();
      const at = { index, irn: claimedIrn(body) };
      let checked: Checked;
      try {
        checked = await check(principal, body);
      } catch (err) {
        if (err instanceof DomainError && err.code === "validation_failed") {
          results.push(Promise.resolve(refused(at, err)));
          continue;
        }
        // Failing the whole batch: the documents already on their way finish first, so none of
        // their outcomes is left without a listener.
        await Promise.allSettled(results);
        throw err;
      }
      const result = commit(principal, checked, transmitting).then(
        (registered) => signed(at, registered, transmitting),
        (err: unknown) => refused(at, err),
      );
      // A failure that is not the document's (the store failing, the preparation thread closed at
      // shutdown) fails the batch through Promise.all below; until the loop gets there it must not
      // count as unhandled, which would take the process down with every request in it.
      result.catch(() => {});
      results.push(result);
    }
    return Promise.all(results);
  }

  return { signMany };
}

/** Where a result belongs: the document's place in the batch, and the IRN it claims, if any. */
type Place = { index: number; irn: string | null };

function claimedIrn(body: unknown): string | null {
  const claimed = typeof body === "object" && body !== null ? (body as { irn?: unknown }).irn : undefined;
  return typeof claimed === "string" ? claimed : null;
}

/** The line limit is the batch's, not a document's: past it, nothing of the batch is checked. */
function refuseOversized(bodies: readonly unknown[]): void {
  const lines = bodies.reduce<number>((sum, body) => sum + lineCount(body), 0);
  if (lines > BATCH_MAX_LINES) {
    throw new DomainError("batch_refused", {
      message: "Failed to validate batch",
      details: `the batch holds ${lines.toLocaleString("en-US")} invoice lines in all; at most ${BATCH_MAX_LINES.toLocaleString("en-US")} are accepted in one request: send the documents in several batches`,
    });
  }
}

function signed(at: Place, { warnings, warningsBeyond }: Warned, transmitting: boolean): BatchResult {
  const { shown, total } = capViolations(warnings, BATCH_FINDINGS_PER_DOCUMENT, warningsBeyond);
  return {
    ...at,
    status: "signed",
    ...(transmitting ? { transmission: "queued" as const } : {}),
    ...(shown.length > 0 ? { warnings: shown } : {}),
    ...(total > shown.length ? { warnings_truncated: true as const, warnings_total: total } : {}),
  };
}

/** A document's own refusal (invalid, duplicate) as its result; anything else fails the batch. */
function refused(at: Place, err: unknown): BatchResult {
  if (err instanceof DomainError && (err.code === "irn_exists" || err.code === "validation_failed")) {
    const listed = err.violations ?? [];
    // The error lists the first of them and counts the rest.
    const { shown, total } = capViolations(
      listed,
      BATCH_FINDINGS_PER_DOCUMENT,
      Math.max(0, (err.violationsTotal ?? 0) - listed.length),
    );
    return {
      ...at,
      status: err.code === "irn_exists" ? "duplicate" : "invalid",
      message: err.message,
      details: err.details,
      ...(err.violations ? { violations: shown } : {}),
      ...(total > shown.length ? { violations_truncated: true as const, violations_total: total } : {}),
    };
  }
  throw err;
}
