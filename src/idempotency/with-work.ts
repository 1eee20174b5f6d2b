import { randomUUID } from "node:crypto";
import type { Lead, Statement } from "../db/batch-statements.ts";
import type { Executor } from "../db/database.ts";
import { keptAsIs } from "./answers.ts";
import { type IdempotencyRepository, NO_ANSWER } from "./idempotency-repository.ts";
import type { Claim, KeyedRequest } from "./idempotency-service.ts";
import { KEY_TTL_MS, slotOf } from "./slots.ts";

/*
 * Keys claimed, and answers stored, in the transaction of the work they answer (a sign's:
 * group-commit.ts), among its writes, instead of in statements and commits of their own before
 * and after it.
 */

/**
 * An answer stored with the writes of its request's own work (`answerWrites`), in their
 * transaction: the claim that holds the key, and the answer, of at most 1 KiB (kept as it is).
 * With `claiming`, the key is not held yet: it is claimed in that transaction too, inserted with
 * the answer (`claimWith`, `claimsInside`), and `won` says, once the transaction's first statement
 * has run, whether it was (false again when that transaction then failed: group-commit.ts).
 */
export type AnswerWith = {
  claim: Claim;
  status: number;
  body: string;
  claiming?: { route: string; fingerprint: string; won: boolean };
};

/**
 * A request whose key was to be claimed with its work (`claiming`) and was not: another request
 * holds it, or its business's quota is full. Nothing of its work was done; its caller claims the key
 * the usual way (`begin`), which answers what that case answers.
 */
export class KeyNotClaimed extends Error {
  constructor() {
    super("the Idempotency-Key was not claimed with its request's work");
  }
}

/** A new hold on the request's key, under a token of its own. */
export const newClaim = (request: KeyedRequest): Claim => ({
  businessId: request.businessId,
  key: request.key,
  token: randomUUID(),
});

/** A claim's key, as the repository finds its row: where the claim still holds it. */
export const idOf = (claim: Claim) => ({
  business_id: claim.businessId,
  idempotency_key: claim.key,
  claim: claim.token,
});

/**
 * The claims and the answers made with the work they answer. `settled` wakes the requests of this
 * process that wait on a key (the service's).
 */
export function answersWithWork(deps: {
  keys: IdempotencyRepository;
  /** The bytes of answers one business's keys may keep over 24 hours (none taken past it). */
  quotaBytes: number;
  settled: (claim: Claim) => void;
}) {
  const { keys, quotaBytes, settled } = deps;
  return {
    /**
     * The writes that store answers in the caller's transaction, among the writes of the work they
     * answer (a sign's, group-commit.ts): the answer commits with the work it tells of, and costs
     * no statement and no commit of its own. An answer larger than 1 KiB is the caller's mistake.
     * Once the answer leaves, `answeredWith` wakes the claim's waiters.
     */
    answerWrites(answers: readonly AnswerWith[], tx: Executor): Statement[] {
      if (answers.length === 0) return [];
      const items = answers.map(({ claim, status, body, claiming }) => {
        const asIs = keptAsIs(body);
        if (!asIs)
          throw new Error(
            `an answer stored with its work is at most 1 KiB, not ${Buffer.byteLength(body)} bytes`,
          );
        return {
          id: idOf(claim),
          answer: { status, retry_after: null, ...asIs.kept },
          bytes: asIs.bytes,
          inserted: claiming !== undefined,
        };
      });
      return keys.answerWrites(items, slotOf(Date.now()), tx);
    },

    /**
     * A keyed request's answer to claim its key with, in the transaction of its work, instead of
     * claiming the key before the work (`begin`): a statement and a commit less, and a round trip
     * less that the request waits for. Undefined for an answer over 1 KiB, whose key is claimed
     * before the work.
     */
    claimWith(request: KeyedRequest, status: number, body: string): AnswerWith | undefined {
      if (!keptAsIs(body)) return undefined;
      return {
        claim: newClaim(request),
        status,
        body,
        claiming: { route: request.route, fingerprint: request.fingerprint, won: false },
      };
    },

    /**
     * The claims of answers made `claimWith`, to run first in the transaction of their work, before
     * it locks anything (readLed), with the quota check `begin` makes: answers the claim tokens won.
     * An answer that did not win is not to be stored, and its work not done (KeyNotClaimed).
     */
    claimsInside(answers: readonly AnswerWith[]): Lead<Set<string>> {
      const created_at = new Date().toISOString();
      const rows = answers.map(({ claim, status, body, claiming }) => {
        if (!claiming) throw new Error("claimsInside: an answer made without claimWith");
        return {
          business_id: claim.businessId,
          idempotency_key: claim.key,
          route: claiming.route,
          fingerprint: claiming.fingerprint,
          claim: claim.token,
          created_at,
          ...NO_ANSWER,
          status,
          response: body,
        };
      });
      return keys.claimsLead(rows, { fromSlot: slotOf(Date.now() - KEY_TTL_MS), quotaBytes });
    },

    /**
     * The writes that take back the answers inserted with their claims (`claimsInside`) when their
     * work was refused in the same transaction (an IRN taken): the keys stay claimed, unanswered,
     * for their requests to store their refusals as any answer (`complete`).
     */
    withdrawWrites(claims: readonly Claim[], tx: Executor): Statement[] {
      if (claims.length === 0) return [];
      return keys.answerWrites(
        claims.map((claim) => ({ id: idOf(claim), answer: { ...NO_ANSWER }, bytes: 0 })),
        slotOf(Date.now()),
        tx,
      );
    },

    /** The claim's answer was stored with its work (`answerWrites`): wakes the requests waiting on it. */
    answeredWith(claim: Claim): void {
      settled(claim);
    },
  };
}
