import { setTimeout as sleep } from "node:timers/promises";
import { type Db, writeTransaction } from "../db/database.ts";
import { JobFailure, messageOf } from "../outbox/failure.ts";
import type { ReceiptsConnector, WaitingList } from "../transmission/authority/connector.ts";
import type { InboxRepository } from "./inbox-repository.ts";
import type { InboxService, Source } from "./inbox-service.ts";

/** How many received invoices are checked and stored per transaction. */
export const RECEIVE_CHUNK = 100;
/** Tries per day of a pull: a transient failure is tried again at once, twice, before the pull stops. */
const TRIES_PER_DAY = 3;
const DAY_MS = 86_400_000;

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const plusDays = (day: string, n: number) => dayOf(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS);

/** What one collection did. */
export type Collection =
  | { pulled: false; reason: string }
  | {
      pulled: true;
      days: number;
      listed: number;
      stored: number;
      already: number;
      unaddressed: Array<{ irn: string | null; reason: string }>;
      /** The first day the next collection asks for, less one day of overlap. */
      cursor: string | null;
      error: string | null;
    };

/**
 * Collects the invoices waiting at the authority for this service's businesses as buyers. One
 * process at a time pulls a source: it takes the source's lease (a row, inbox_pulls), pulls day by
 * day from the cursor (less one day, for what was transmitted late in the day it reached) to today,
 * stores each day's invoices (each once per buyer and IRN, announced in the same transaction), and
 * moves the cursor only past days stored whole. A process killed mid-pull loses nothing: its lease
 * expires, the next pull lists those days again, and what was stored is not stored twice.
 */
export function inboxCollector(deps: {
  db: Db;
  inbox: Pick<InboxRepository, "claimPull" | "renewPull" | "finishPull" | "pullNow" | "pull">;
  service: Pick<InboxService, "receive">;
  receipts: ReceiptsConnector | undefined;
  source: Source;
  pullMs: number;
  lookbackDays: number;
  /** How long a pull may hold the source before another process may take it over. */
  leaseMs: number;
  /** The time limit of one call of the pull. */
  callTimeoutMs: number;
  /** The pause before a failed day is tried again, doubled each time. */
  retryPauseMs?: number;
}) {
  const { db, inbox, service, receipts, source, pullMs, lookbackDays, leaseMs, callTimeoutMs } = deps;
  const retryPauseMs = deps.retryPauseMs ?? 500;
  const iso = (ms: number) => new Date(ms).toISOString();

  /** One day's list, tried again after a transient failure. */
  async function pullDay(pull: ReceiptsConnector["pull"], day: string): Promise<WaitingList> {
    for (let tried = 1; ; tried++) {
      try {
        return await pull({ from: day, to: day }, AbortSignal.timeout(callTimeoutMs));
      } catch (err) {
        const permanent = err instanceof JobFailure && err.permanent;
        if (permanent || tried >= TRIES_PER_DAY) throw err;
        await sleep(retryPauseMs * 2 ** (tried - 1));
      }
    }
  }

  return {
    /**
     * One collection, if the source's lease is free and a pull is due (`force`: due or not). The
     * workers call it every few seconds; the database decides which one pulls and when.
     */
    async collect(owner: string, options: { force?: boolean } = {}): Promise<Collection> {
      if (!receipts) return { pulled: false, reason: "this authority relays no invoices to buyers" };
      const started = Date.now();
      const claimed = await writeTransaction(db, (tx) =>
        inbox.claimPull(source, owner, iso(started), iso(started + leaseMs), options.force === true, tx),
      );
      if (!claimed) return { pulled: false, reason: "another process is pulling, or no pull is due yet" };
      const today = dayOf(started);
      const first = claimed.cursor_day ? plusDays(claimed.cursor_day, -1) : plusDays(today, -lookbackDays);
      const outcome = {
        pulled: true as const,
        days: 0,
        listed: 0,
        stored: 0,
        already: 0,
        unaddressed: [] as Array<{ irn: string | null; reason: string }>,
        cursor: null as string | null,
        error: null as string | null,
      };
      try {
        for (let day = first; day <= today; day = plusDays(day, 1)) {
          const listed = await pullDay(receipts.pull, day);
          outcome.listed += listed.length;
          for (let i = 0; i < listed.length; i += RECEIVE_CHUNK) {
            // Each slice parsed only now: a day's documents are never all in memory at once.
            const slice = await listed.read(i, i + RECEIVE_CHUNK);
            const receipt = await service.receive(slice, source, `pull:${owner}`);
            outcome.stored += receipt.stored.length;
            outcome.already += receipt.already;
            outcome.unaddressed.push(...receipt.unaddressed.slice(0, 100 - outcome.unaddressed.length));
          }
          outcome.days++;
          outcome.cursor = day;
          const kept = await writeTransaction(db, (tx) =>
            inbox.renewPull(source, owner, iso(Date.now() + leaseMs), day, tx),
          );
          // Taken over (this pull outlived its lease): the other process goes on from here.
          if (!kept) throw new Error("the pull's lease expired and another process took it over");
        }
      } catch (err) {
        outcome.error = messageOf(err);
      }
      const at = Date.now();
      // After a failure the next pull comes sooner than the schedule, but not at once.
      const next = outcome.error === null ? at + pullMs : at + Math.min(pullMs, 30_000);
      await writeTransaction(db, (tx) =>
        inbox.finishPull(
          source,
          owner,
          {
            at: iso(at),
            next: iso(next),
            cursorDay: outcome.cursor,
            received: outcome.stored,
            error: outcome.error,
          },
          tx,
        ),
      );
      return outcome;
    },

    /** Asks the workers for a pull now (the next one to look takes it). */
    pullNow: () => inbox.pullNow(source, new Date().toISOString()),

    /** Where collecting stands: the cursor, the last pull, its error, the totals. */
    state: () => inbox.pull(source),
  };
}

export type InboxCollector = ReturnType<typeof inboxCollector>;
