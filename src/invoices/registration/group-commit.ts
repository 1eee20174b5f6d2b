import type { Outcome } from "../../batcher.ts";
import type { BusinessRepository, ChainHead } from "../../businesses/business-repository.ts";
import { actorOf, type Principal } from "../../businesses/business-service.ts";
import type { Signer } from "../../crypto/signer.ts";
import { executeTogether, readLed } from "../../db/batch-statements.ts";
import { type Db, type Executor, isTransientDatabaseError, writeTransaction } from "../../db/database.ts";
import type { InvoiceTable } from "../../db/schema.ts";
import type { Claim, IdempotencyService } from "../../idempotency/idempotency-service.ts";
import { type AnswerWith, KeyNotClaimed } from "../../idempotency/with-work.ts";
import type { SealingService, SealingUnder } from "../../keys/sealing.ts";
import type { WebhookNotifier } from "../../webhooks/notifier.ts";
import type { InvoiceRepository } from "../invoice-repository.ts";
import type { InvoiceLifecycle } from "../lifecycle.ts";
import { irnExists } from "./duplicates.ts";

/**
 * A sign as it reaches the group commit: checked, its cryptography worked out on the preparation
 * thread (canonical form, sealing, QR code), its row complete but for the chain link: `chain_seq`,
 * `previous_hash`, `hash`, `signature` and `kid` are null until `link` fills them in.
 */
export type Submission = {
  principal: Principal;
  businessId: string;
  signedAt: string;
  /** RFC 8785 form of the document, for the signed payload. */
  canonical: string;
  row: InvoiceTable;
  /** The answer to store for its Idempotency-Key, with the invoice (see `answerWrites`). */
  answer?: AnswerWith | undefined;
};

/**
 * For a keyed sign whose key is claimed in its batch's transaction (`claiming`): records whether it
 * was, given the claims won, and answers the error of one that was not (its document is not signed).
 */
function claimedHere(item: Submission, won: ReadonlySet<string> | undefined): KeyNotClaimed | undefined {
  const answer = item.answer;
  if (!answer?.claiming) return undefined;
  answer.claiming.won = won?.has(answer.claim.token) === true;
  return answer.claiming.won ? undefined : new KeyNotClaimed();
}

/** Keys claimed in a transaction that then failed: not claimed after all. */
function unclaimed(batch: readonly Submission[]): void {
  for (const item of batch) if (item.answer?.claiming) item.answer.claiming.won = false;
}

/** The preparation thread sealed under its first key; a rotation may have made another current. */
function resealUnder(under: SealingUnder | undefined, batch: readonly Submission[]): void {
  if (!under) return;
  for (const s of batch) if (s.row.sealed !== null) s.row.sealed = under.reseal(s.row.sealed, s.row.irn);
}

/**
 * Makes a submission the next link of its business's chain, signed, and moves the chain's head to
 * it. The row's chain columns are filled in place (a batch retried sign by sign fills them again):
 * a copy of the row with them added cost a new object of 24 fields for every sign.
 */
function link(signer: Pick<Signer, "signCanonical">, item: Submission, head: ChainHead): InvoiceTable {
  const { row, businessId, signedAt } = item;
  const previous = head.chain_head;
  const signature = signer.signCanonical(
    { irn: row.irn, business_id: businessId, signed_at: signedAt, previous_hash: previous },
    item.canonical,
  );
  head.chain_length += 1;
  head.chain_head = signature.hash;
  row.chain_seq = head.chain_length;
  row.previous_hash = previous;
  row.hash = signature.hash;
  row.signature = signature.value;
  row.kid = signature.kid;
  return row;
}

/** What a committed sign answers: its IRN and, signed with its transmission, its delivery job. */
export type Registered = { irn: string; jobId: number | undefined };

/**
 * The group commit: the signs that reach it in one turn of the event loop are signed and stored
 * in one transaction, with one commit (on SQLite, one fsync of the WAL) and a few multi-row
 * statements instead of a transaction and about ten statements each; each sign is answered only
 * after the commit. The transaction also writes the first history entry, the webhook notice and,
 * for sign-transmit, the delivery job. Only the chain links and their Ed25519 signatures are made
 * under the chains' lock, on the event loop as the bare sign makes them: handed to libuv's thread
 * pool and back, a batch's signatures measured no faster on a 2-core machine, and cost a hand-off
 * to four more threads (bench/RESULTS.md, 2026-12-06).
 */
export function groupCommit(deps: {
  db: Db;
  invoices: Pick<InvoiceRepository, "existingRead">;
  businesses: Pick<BusinessRepository, "chainsLock" | "chainHeadUpdates">;
  /** The key sealed values are stored under, read in the transaction that stores them. */
  sealing: Pick<SealingService, "underRead">;
  signer: Pick<Signer, "signCanonical">;
  /** Stores the signed invoices in their first state, with their history, notices and deliveries. */
  lifecycle: Pick<InvoiceLifecycle, "signed">;
  notifier: Pick<WebhookNotifier, "subscribersRead">;
  /** Claims the keys of keyed signs and stores their answers with them. */
  answers: Pick<IdempotencyService, "answerWrites" | "claimsInside" | "withdrawWrites">;
}) {
  const { db, invoices, businesses, sealing, signer, lifecycle, notifier, answers } = deps;

  /**
   * Signs and stores a batch in the caller's transaction with a few multi-row statements: each
   * invoice takes the next link of its business's chain, in submission order. An IRN registered
   * before, or earlier in the same batch, fails alone.
   */
  async function signInto(tx: Executor, batch: readonly Submission[]): Promise<Outcome<Registered>[]> {
    const businessIds = [...new Set(batch.map((s) => s.businessId))];
    // The key to seal under, the IRNs taken, the webhooks and the chains' heads, locked: on
    // PostgreSQL one statement (readLed), where each was a round trip that every sign of the batch
    // waited for. The lock is held for the signatures and the writes, not for reads that come after
    // it. An IRN registered by another process after the statement's snapshot still fails on the
    // constraint. The keys of keyed signs are claimed in it, first: a claim waiting for another
    // process's transaction that holds the same key never holds a chain that one waits for.
    const claiming = batch.flatMap((s) => (s.answer?.claiming ? [s.answer] : []));
    const {
      led: won,
      reads: [under, takenIrns, subscribers, locked],
    } = await readLed<Set<string>, [SealingUnder | undefined, string[], Set<string>, ChainHead[]]>(
      tx,
      claiming.length > 0 ? answers.claimsInside(claiming) : undefined,
      [
        batch.some((s) => s.row.sealed !== null) ? sealing.underRead(tx) : undefined,
        invoices.existingRead([...new Set(batch.map((s) => s.row.irn))], tx),
        notifier.subscribersRead(businessIds, tx),
        businesses.chainsLock(businessIds, tx),
      ],
    );
    resealUnder(under, batch);
    const taken = new Set(takenIrns);
    const heads = new Map(locked.map((head) => [head.id, head]));
    const outcomes: Outcome<Registered>[] = [];
    const signed: Array<{ item: Submission; row: InvoiceTable }> = [];
    // Claimed here for signs refused here: their answers are taken back, their keys stay claimed.
    const withdrawn: Claim[] = [];
    for (const item of batch) {
      const head = heads.get(item.businessId);
      if (!head) throw new Error(`business ${item.businessId} has no row to hold its chain`);
      const notClaimed = claimedHere(item, won);
      if (notClaimed) {
        outcomes.push({ ok: false, error: notClaimed });
        continue;
      }
      if (taken.has(item.row.irn)) {
        if (item.answer?.claiming) withdrawn.push(item.answer.claim);
        outcomes.push({ ok: false, error: irnExists(item.row.irn) });
        continue;
      }
      taken.add(item.row.irn);
      const row = link(signer, item, head);
      signed.push({ item, row });
      outcomes.push({ ok: true, value: { irn: row.irn, jobId: undefined } });
    }
    if (signed.length === 0) {
      await executeTogether(tx, answers.withdrawWrites(withdrawn, tx));
      return outcomes;
    }
    // The chains' heads move in the statement that stores the invoices, and the answers of keyed
    // signs are stored there too: on PostgreSQL it goes out with the statement after it (its answer
    // is not read: executeTogether): the outbox's insert when the batch queues events or
    // deliveries, else the commit. Stored in a batch of their own after the sign, the answers were
    // a statement and a flushed commit more that every keyed sign waited for.
    const keyed = signed.flatMap(({ item }) => (item.answer ? [item.answer] : []));
    const jobs = await lifecycle.signed(
      signed.map(({ item, row }) => ({ row, actor: actorOf(item.principal) })),
      tx,
      subscribers,
      [
        ...businesses.chainHeadUpdates(
          [...new Set(signed.map(({ row }) => row.business_id))].map((id) => heads.get(id) as ChainHead),
          tx,
        ),
        ...answers.answerWrites(keyed, tx),
        ...answers.withdrawWrites(withdrawn, tx),
      ],
    );
    for (const outcome of outcomes) if (outcome.ok) outcome.value.jobId = jobs.get(outcome.value.irn);
    return outcomes;
  }

  /**
   * One transaction for the batch. If it fails for a reason the batch did not foresee, each sign is
   * tried on its own, so only its culprit fails; a transient failure (the database locked, say)
   * fails them all, for the client to retry.
   */
  async function commit(batch: Submission[]): Promise<Outcome<Registered>[]> {
    try {
      return await writeTransaction(db, (tx) => signInto(tx, batch));
    } catch (error) {
      // Its claims went with it: a sign's route must not take its key for claimed.
      unclaimed(batch);
      if (batch.length === 1 || isTransientDatabaseError(error)) throw error;
      return Promise.all(
        batch.map((item) =>
          writeTransaction(db, (tx) => signInto(tx, [item])).then(
            ([outcome]) => outcome as Outcome<Registered>,
            (err: unknown) => {
              unclaimed([item]);
              return { ok: false as const, error: err };
            },
          ),
        ),
      );
    }
  }

  return { commit };
}

export type GroupCommit = ReturnType<typeof groupCommit>;
