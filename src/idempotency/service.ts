import { randomUUID } from "node:crypto";
import { batcher } from "../batcher.ts";
import { type Db, writeTransaction } from "../db/database.ts";
import { DomainError } from "../errors.ts";
import type { Answer, IdempotencyRepository, KeyRow } from "./repository.ts";

/** A key is kept, and its answer replayed, for this long after it was claimed. */
export const KEY_TTL_MS = 24 * 60 * 60 * 1000;
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

export type Begun = { kind: "claimed"; claim: Claim } | { kind: "replay"; answer: StoredAnswer };

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
}) {
  const { db, keys, waitMs } = deps;

  // The claims (and the answers) of one turn of the event loop share one transaction, not a commit
  // apiece. A claim is not flushed to disk: the request's own writes (its sign, then its stored
  // answer) are, and flush it with them; lost in a power cut before them, it only lets the retry run.
  const claiming = batcher<KeyRow, boolean>(
    (rows) =>
      writeTransaction(
        db,
        async (tx) => {
          const won: { ok: true; value: boolean }[] = [];
          for (const row of rows) won.push({ ok: true, value: await keys.insertClaim(row, tx) });
          return won;
        },
        { flush: false },
      ),
    { maxBatch: 64, concurrency: 1 },
  );
  const storing = batcher<{ claim: Claim; answer: Answer }, boolean>(
    (items) =>
      writeTransaction(db, async (tx) => {
        const stored: { ok: true; value: boolean }[] = [];
        for (const { claim, answer } of items) {
          stored.push({ ok: true, value: await keys.complete(idOf(claim), answer, tx) });
        }
        return stored;
      }),
    { maxBatch: 64, concurrency: 1 },
  );

  const idOf = (claim: Claim) => ({
    business_id: claim.businessId,
    idempotency_key: claim.key,
    claim: claim.token,
  });

  // Wake-ups only: what a waiter then does, it decides from the database.
  const waiters = new Map<string, Set<() => void>>();
  const slot = (businessId: string, key: string) => `${businessId}\u0000${key}`;
  function settled(claim: Claim): void {
    const name = slot(claim.businessId, claim.key);
    for (const wake of waiters.get(name) ?? []) wake();
    waiters.delete(name);
  }
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

  return {
    /**
     * Claims the request's key, or answers what an earlier request with it answered. Throws a 422
     * when the key was used for another request, a 409 when its request is still running after
     * `waitMs`, or at once when `gone` says the caller went away (a client that gave up and retries
     * must not leave a waiter polling behind each attempt).
     */
    async begin(request: KeyedRequest, gone?: AbortSignal): Promise<Begun> {
      const deadline = Date.now() + waitMs;
      const id = { business_id: request.businessId, idempotency_key: request.key };
      const fresh = () => {
        const token = randomUUID();
        return {
          claim: { businessId: request.businessId, key: request.key, token },
          row: {
            route: request.route,
            fingerprint: request.fingerprint,
            claim: token,
            created_at: new Date().toISOString(),
          },
        };
      };
      for (;;) {
        const attempt = fresh();
        const row = { ...id, ...attempt.row, status: null, retry_after: null, response: null };
        if (await claiming.submit(row)) return { kind: "claimed", claim: attempt.claim };
        // Another request holds the key: watch its row until it answers, goes, or goes stale.
        for (let pause = 20; ; pause = Math.min(pause * 2, 250)) {
          const held = await keys.find(id);
          if (!held) break;
          const age = Date.now() - Date.parse(held.created_at);
          const expired = age >= KEY_TTL_MS;
          if (!expired && (held.route !== request.route || held.fingerprint !== request.fingerprint)) {
            throw reused(request, held);
          }
          if (!expired && held.status !== null && held.response !== null) {
            const answer = { status: held.status, body: held.response, retryAfter: held.retry_after };
            return { kind: "replay", answer };
          }
          if (expired || age >= STALE_CLAIM_MS) {
            const again = fresh();
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

    /** Stores the claim's answer for replay; false when the claim was taken over meanwhile. */
    async complete(claim: Claim, answer: StoredAnswer): Promise<boolean> {
      try {
        return await storing.submit({
          claim,
          answer: { status: answer.status, response: answer.body, retry_after: answer.retryAfter },
        });
      } finally {
        settled(claim);
      }
    },

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
      return deleted;
    },
  };
}

export type IdempotencyService = ReturnType<typeof idempotencyService>;
