import { type Db, writeTransaction } from "../db/database.ts";
import type { OutboxJob } from "../db/schema.ts";
import type { OutboxQueue } from "../outbox/outbox-service.ts";
import type { Outcome } from "../outbox/verdict.ts";
import type { ReceiptsConnector } from "../transmission/authority/connector.ts";
import type { InboxRepository } from "./inbox-repository.ts";
import type { Source } from "./inbox-service.ts";
import { type DayOutcome, type PullPayload, payloadOf } from "./pull-job.ts";

const DAY_MS = 86_400_000;

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const plusDays = (day: string, n: number) => dayOf(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS);

/** What one collection did: the days it queued and, for `collect`, what the pulls run here did. */
export type Collection =
  | { pulled: false; reason: string }
  | {
      pulled: true;
      days: number;
      listed: number;
      stored: number;
      already: number;
      unaddressed: Array<{ irn: string | null; reason: string }>;
      /** The last day queued: the next collection queues from the day before it. */
      cursor: string | null;
      /** The first day's failure, if a day failed (it is tried again by the outbox's policy). */
      error: string | null;
    };

/** What the collector needs of the outbox: queuing, the open pulls, and running pull jobs here. */
export type PullJobs = Pick<OutboxQueue, "enqueue" | "payloadStates"> & {
  claimKind(owner: string, kind: "pull", limit: number): Promise<OutboxJob[]>;
  process(job: OutboxJob, owner: string): Promise<Outcome>;
};

/**
 * Collects the invoices waiting at the authority for this service's businesses as buyers, as jobs
 * of the outbox, one per day (pull-job.ts). Every few seconds each worker asks whether a collection
 * is due: the source's row decides (a compare-and-set, so one process queues each), and the days
 * from the day before the last one queued (what was transmitted late in the day it reached) to today
 * are queued, each unless its pull is still open. The outbox's lease, retries and budget run them.
 */
export function inboxCollector(deps: {
  db: Db;
  inbox: Pick<InboxRepository, "takeCollection" | "pullNow" | "pull">;
  jobs: PullJobs;
  receipts: ReceiptsConnector | undefined;
  source: Source;
  pullMs: number;
  lookbackDays: number;
  /** The outcome of each day pulled in this process, by job id (pull-job.ts's `observe`). */
  observed: Map<number, DayOutcome>;
}) {
  const { db, inbox, jobs, receipts, source, pullMs, lookbackDays } = deps;
  const iso = (ms: number) => new Date(ms).toISOString();

  /** Queues the days of a collection, if one is due (`force`: due or not). */
  async function schedule(options: { force?: boolean } = {}): Promise<{ days: string[]; cursor: string }> {
    const now = Date.now();
    const today = dayOf(now);
    return writeTransaction(db, async (tx) => {
      const taken = await inbox.takeCollection(
        source,
        { now: iso(now), next: iso(now + pullMs), today },
        options.force === true,
        tx,
      );
      if (!taken) return { days: [], cursor: today };
      const first = taken.cursor_day ? plusDays(taken.cursor_day, -1) : plusDays(today, -lookbackDays);
      const window: string[] = [];
      for (let day = first; day <= today; day = plusDays(day, 1)) window.push(day);
      const payloadOfDay = (day: string) => JSON.stringify({ source: "mbs", day } satisfies PullPayload);
      const known = await jobs.payloadStates("pull", window.map(payloadOfDay), tx);
      const stateOf = new Map<string | undefined, string>();
      for (const job of known) {
        const day = payloadOf(job)?.day;
        if (job.state === "pending" || !stateOf.has(day)) stateOf.set(day, job.state);
      }
      // A day still open is not queued twice. A past day that failed for good (its budget spent,
      // reported by the outbox) is not read again until the operator queues it again (`outbox
      // retry --kind pull`): what made it fail may be a poisoned answer. Today is queued whatever
      // happened before: its invoices are still arriving.
      const days = window.filter((day) => {
        const state = stateOf.get(day);
        return state === undefined || (state === "failed" && day === today);
      });
      await jobs.enqueue(
        "pull",
        days.map((day) => ({ irn: null, businessId: "", payload: payloadOfDay(day) })),
        iso(now),
        tx,
      );
      return { days, cursor: today };
    });
  }

  return {
    /** The workers' round: queues a collection's days when one is due. */
    async schedule(): Promise<{ queued: string[] } | { queued: false; reason: string }> {
      if (!receipts) return { queued: false, reason: "this authority relays no invoices to buyers" };
      return { queued: (await schedule()).days };
    },

    /**
     * One collection now, run in this process (`invoices pull --wait`): its days queued, due or not,
     * and every pull job due now run here, one after the other, through the outbox. A day that fails
     * stays queued for the workers, at its backoff.
     */
    async collect(owner: string, options: { force?: boolean } = {}): Promise<Collection> {
      if (!receipts) return { pulled: false, reason: "this authority relays no invoices to buyers" };
      const { cursor } = await schedule(options);
      const outcome = {
        pulled: true as const,
        days: 0,
        listed: 0,
        stored: 0,
        already: 0,
        unaddressed: [] as Array<{ irn: string | null; reason: string }>,
        cursor,
        error: null as string | null,
      };
      const ran = new Set<number>();
      for (;;) {
        const [job] = await jobs.claimKind(owner, "pull", 1);
        if (!job) break;
        await jobs.process(job, owner);
        // Due again already (a short backoff): it was tried here once; the workers go on with it.
        if (ran.has(job.id)) break;
        ran.add(job.id);
        const day = deps.observed.get(job.id);
        deps.observed.delete(job.id);
        if (!day) continue;
        outcome.days++;
        outcome.listed += day.listed;
        outcome.stored += day.stored;
        outcome.already += day.already;
        outcome.unaddressed.push(...day.unaddressed.slice(0, 100 - outcome.unaddressed.length));
        outcome.error ??= day.error;
      }
      return outcome;
    },

    /** Asks the workers for a collection now (the next one to look queues it). */
    pullNow: () => inbox.pullNow(source, new Date().toISOString()),

    /** Where collecting stands: the cursor, the last pull, its error, the totals. */
    state: () => inbox.pull(source),
  };
}

export type InboxCollector = ReturnType<typeof inboxCollector>;
