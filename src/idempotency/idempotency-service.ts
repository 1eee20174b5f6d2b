import { batcher } from "../batcher.ts";
import { alone, type Db, writeTransaction } from "../db/database.ts";
import { DomainError } from "../errors.ts";
import { keep, keptBody } from "./answers.ts";
import {
  type Answer,
  CLAIMS_PER_STATEMENT,
  type IdempotencyRepository,
  type KeyRow,
  NO_ANSWER,
} from "./idempotency-repository.ts";
import { KEY_TTL_MS, slotOf, USAGE_SLOT_MS } from "./slots.ts";
import { answersWithWork, idOf, newClaim } from "./with-work.ts";

/**
 * A claim in flight for longer than this was left by a process that died: no request runs this
 * long (sign-transmit waits at most a minute for the authority), so another may take the key over.
 */
export const STALE_CLAIM_MS = 5 * 60 * 1000;
/** Keys deleted per statement when expired ones are pruned, and statements per pruning round. */
const PRUNE_CHUNK = 1000;
const PRUNE_CHUNKS_PER_ROUND = 50;

/** One request as the key is checked against: who, which key, where, and what it carried. */
export type KeyedRequest = {
  businessId: string;
  key: string;
  /** `METHOD /path pattern`. */
  route: string;
  /** See `fingerprint.ts`. */
  fingerprint: string;
};

/** The hold of one request on its key: only its holder may store the answer. */
export type Claim = { businessId: string; key: string; token: string };

export type StoredAnswer = { status: number; body: string; retryAfter: number | null };

/** An answer to keep: `changedNothing` tells, of one too large to keep, whether it may be run again. */
export type Outcome = StoredAnswer & { changedNothing: () => boolean };

export type Begun =
  | {
      kind: "claimed";
      claim: Claim;
      /** A request run again, whose first answer was too large to keep: that answer's status and digest. */
      replaces?: { status: number; sha256: string | null };
    }
  | { kind: "replay"; answer: StoredAnswer };

/**
 * Idempotency-Key: the first request with a key claims it (an insert the primary key decides, so two
 * processes never both win), runs, and stores its answer; any later request with the same key and
 * body gets that answer again, for 24 hours. A request arriving while the first still runs waits
 * for the stored answer, polling the database (the first may be in another process), for up to
 * `waitMs`; when the first runs in this process, its end wakes the waiters at once.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a factory: begin, complete and release are its closures, each short
export function idempotencyService(deps: {
  db: Db;
  keys: IdempotencyRepository;
  /** How long a request waits for another one holding its key, before a 409. */
  waitMs: number;
  /** The bytes of answers one business's keys may keep over 24 hours (none taken past it). */
  quotaBytes: number;
}) {
  const { db, keys, waitMs, quotaBytes } = deps;

  // The claims (and the answers) of one turn of the event loop share one commit, not one apiece,
  // and the claims are made with the quota check of their businesses (claimWithin: one statement on
  // PostgreSQL, where the check was a round trip of its own before them). A claim is not flushed to
  // disk: the request's own writes (its sign, then its stored answer) are, and flush it with them,
  // the log being written and flushed in order; lost in a power cut before them, it only lets the
  // retry run. On PostgreSQL each of these batches is one statement, run without a transaction
  // around it (`alone`): one round trip where begin, the setting, the statement and commit made
  // four, each of which the batch's requests waited for; the statement sets its own commit
  // unflushed (claimWithin). Flushed, a claim waited for the disk behind the signs' commits: 6.0-6.2
  // ms a claim against 3.5-4.8 (PostgreSQL, 2 processes, one business, bench:http).
  const claiming = batcher<KeyRow, { won: boolean; bytes: number; oldest: number | null }>(
    async (rows) =>
      (
        await alone(
          db,
          (tx) =>
            keys.claimWithin(rows, { fromSlot: slotOf(Date.now() - KEY_TTL_MS), quotaBytes }, tx, {
              flush: false,
            }),
          { flush: false },
        )
      ).map((value) => ({ ok: true as const, value })),
    { maxBatch: CLAIMS_PER_STATEMENT, concurrency: 1 },
  );
  // Each kept answer's bytes are counted for its business with it (storeAnswers): one row per
  // business and slot, updated in the order of the business ids, so that two processes' batches
  // never wait on each other's rows in opposite orders (a deadlock, on PostgreSQL).
  const storing = batcher<{ claim: Claim; answer: Answer; bytes: number }, boolean>(
    async (items) => {
      const slot = slotOf(Date.now());
      const stored = await alone(db, (tx) =>
        keys.storeAnswers(
          items.map(({ claim, answer, bytes }) => ({ id: idOf(claim), answer, bytes })),
          slot,
          tx,
        ),
      );
      return stored.map((value) => ({ ok: true as const, value }));
    },
    { maxBatch: 64, concurrency: 1 },
  );

  // Wake-ups only: what a waiter then does, it decides from the database.
  const waiters = new Map<string, Set<() => void>>();
  const slot = (businessId: string, key: string) => `${businessId}\u0000${key}`;
  function settled(claim: Claim): void {
    const name = slot(claim.businessId, claim.key);
    for (const wake of waiters.get(name) ?? []) wake();
    waiters.delete(name);
  }
  const answers = answersWithWork({ keys, quotaBytes, settled });

  /** Sleeps `ms`, or less when a request of this process settles the key or the caller goes. */
  function nap(request: KeyedRequest, ms: number, gone?: AbortSignal): Promise<void> {
    const name = slot(request.businessId, request.key);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        waiters.get(name)?.delete(done);
        gone?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      gone?.addEventListener("abort", done);
      const set = waiters.get(name) ?? new Set();
      set.add(done);
      waiters.set(name, set);
    });
  }

  function reused(request: KeyedRequest, row: KeyRow): DomainError {
    const what = row.route === request.route ? "with a different request body" : `for ${row.route}`;
    return new DomainError("idempotency_key_reused", {
      message: "Idempotency-Key reused",
      details: `the Idempotency-Key '${request.key}' was used ${what} on ${row.created_at}: a key stands for one request; send a new key for a new request`,
      publicMessage: "This Idempotency-Key belongs to another request; nothing was done with this one.",
    });
  }

  const inProgress = (request: KeyedRequest) =>
    new DomainError("request_in_progress", {
      message: "Request in progress",
      details: `a request with the Idempotency-Key '${request.key}' is still being processed; retry later`,
      retryAfter: 2,
    });

  function notKept(request: KeyedRequest, row: KeyRow): DomainError {
    const size = row.response_bytes === null ? "" : ` of ${row.response_bytes.toLocaleString("en-US")} bytes`;
    const digest = row.response_sha256 === null ? "" : `, SHA-256 ${row.response_sha256}`;
    return new DomainError("idempotency_answer_not_kept", {
      message: "Answer not kept",
      details: `the request with the Idempotency-Key '${request.key}' was done on ${row.created_at} and answered ${row.status}, but its answer${size}${digest} was too large to keep for replay; it is not done again: look its invoices up by IRN (lookup/{IRN})`,
      publicMessage:
        "This request was already done; its answer was too large to keep, and nothing was done again.",
    });
  }

  /**
   * The refusal of a business's new key when the answers its keys keep fill its quota: bytes counted
   * by 15-minute slot, a slot's all expired 24 hours after its end, when Retry-After points.
   */
  function overQuota({ bytes, oldest }: { bytes: number; oldest: number | null }): DomainError | undefined {
    const now = Date.now();
    if (bytes < quotaBytes) return undefined;
    const freed = ((oldest ?? slotOf(now)) + 1) * USAGE_SLOT_MS + KEY_TTL_MS;
    const retryAfter = Math.max(1, Math.ceil((freed - now) / 1000));
    const used = bytes.toLocaleString("en-US");
    return new DomainError("idempotency_quota_exceeded", {
      message: "Idempotency-Key quota exceeded",
      details: `the answers kept for this business's Idempotency-Keys of the last 24 hours take ${used} bytes, its quota is ${quotaBytes.toLocaleString("en-US")}: nothing was done; retry after ${retryAfter} s, when the oldest expire, or send the request without an Idempotency-Key`,
      retryAfter,
    });
  }

  const fresh = (request: KeyedRequest) => {
    const claim = newClaim(request);
    return {
      claim,
      row: {
        route: request.route,
        fingerprint: request.fingerprint,
        claim: claim.token,
        created_at: new Date().toISOString(),
      },
    };
  };

  /**
   * What a retry gets from a key whose request has answered: that answer; or, when it was too large
   * to keep, the request run again if it changed nothing (undefined: another retry took it first),
   * else a 409.
   */
  async function answered(
    request: KeyedRequest,
    held: KeyRow & { status: number },
  ): Promise<Begun | undefined> {
    const body = await keptBody(held);
    if (body !== undefined)
      return { kind: "replay", answer: { status: held.status, body, retryAfter: held.retry_after } };
    if (held.replay !== "rerun") throw notKept(request, held);
    const again = fresh(request);
    if (!(await writeTransaction(db, (tx) => keys.takeOver(held, again.row, tx)))) return undefined;
    return {
      kind: "claimed",
      claim: again.claim,
      replaces: { status: held.status, sha256: held.response_sha256 },
    };
  }

  return {
    /**
     * Claims the request's key, or answers what an earlier request with it answered. Throws a 422
     * when the key was used for another request, a 409 when its request is still running after
     * `waitMs` (or answered too much to keep, having done something), a 429 when a new key would
     * pass the business's quota, or at once when `gone` says the caller went away (a client that
     * gave up and retries must not leave a waiter polling behind each attempt).
     */
    async begin(request: KeyedRequest, gone?: AbortSignal): Promise<Begun> {
      const deadline = Date.now() + waitMs;
      const id = { business_id: request.businessId, idempotency_key: request.key };
      for (;;) {
        const attempt = fresh(request);
        // The quota is checked with the claim, before any work, so a refusal loses nothing; a retry
        // of a key already held is let by.
        const { won, ...used } = await claiming.submit({ ...id, ...attempt.row, ...NO_ANSWER });
        if (won) return { kind: "claimed", claim: attempt.claim };
        const full = overQuota(used);
        // Another request holds the key: watch its row until it answers, goes, or goes stale.
        for (let pause = 20; ; pause = Math.min(pause * 2, 250)) {
          const held = await keys.find(id);
          if (!held) {
            if (full) throw full;
            break;
          }
          const age = Date.now() - Date.parse(held.created_at);
          const expired = age >= KEY_TTL_MS;
          if (!expired && (held.route !== request.route || held.fingerprint !== request.fingerprint)) {
            throw reused(request, held);
          }
          if (!expired && held.status !== null) {
            const begun = await answered(request, { ...held, status: held.status });
            if (begun) return begun;
            continue;
          }
          if (expired || age >= STALE_CLAIM_MS) {
            if (full) throw full;
            const again = fresh(request);
            if (await writeTransaction(db, (tx) => keys.takeOver(held, again.row, tx))) {
              return { kind: "claimed", claim: again.claim };
            }
            continue;
          }
          const left = deadline - Date.now();
          if (left <= 0 || gone?.aborted) throw inProgress(request);
          await nap(request, Math.min(pause, left), gone);
        }
        // Given back (its request failed on the server's side): claim it afresh.
        if (Date.now() > deadline) throw inProgress(request);
      }
    },

    /**
     * Stores the claim's answer for replay (see `answers.ts` for how), counting its bytes for the
     * business; false when the claim was taken over meanwhile.
     */
    async complete(claim: Claim, outcome: Outcome): Promise<boolean> {
      try {
        const { kept, bytes } = await keep(outcome.body, outcome.changedNothing);
        return await storing.submit({
          claim,
          answer: { status: outcome.status, retry_after: outcome.retryAfter, ...kept },
          bytes,
        });
      } finally {
        settled(claim);
      }
    },

    ...answers,

    /** Gives the key back: the next request with it runs afresh. */
    async release(claim: Claim): Promise<boolean> {
      try {
        return await writeTransaction(db, (tx) => keys.release(idOf(claim), tx));
      } finally {
        settled(claim);
      }
    },

    /**
     * Deletes keys claimed more than 24 hours ago, a chunk per statement (each its own short write
     * transaction, so signs go on in between), up to a bounded number of chunks; answers how many.
     */
    async prune(now = Date.now()): Promise<number> {
      const cutoff = new Date(now - KEY_TTL_MS).toISOString();
      let deleted = 0;
      for (let round = 0; round < PRUNE_CHUNKS_PER_ROUND; round++) {
        const chunk = await writeTransaction(db, (tx) => keys.deleteClaimedBefore(cutoff, PRUNE_CHUNK, tx));
        deleted += chunk;
        if (chunk < PRUNE_CHUNK) break;
      }
      // The usage of slots whose answers have all expired.
      await writeTransaction(db, (tx) => keys.deleteUsageBefore(slotOf(now - KEY_TTL_MS), tx));
      return deleted;
    },
  };
}

export type IdempotencyService = ReturnType<typeof idempotencyService>;
