import type { Executor } from "../db/database.ts";
import { messageOf } from "../outbox/failure.ts";
import type { JobHandler, Plan, Verdict } from "../outbox/verdict.ts";
import { DeliveryError, type ReceiptsConnector } from "../transmission/authority/connector.ts";
import { type AuthorityHold, authorityVerdict } from "../transmission/authority-hold.ts";
import type { InboxRepository } from "./inbox-repository.ts";
import type { InboxService, Source } from "./inbox-service.ts";

/**
 * How many received invoices are checked and stored per transaction, and how much of the answer's
 * text they may be: 150 invoices of 1,000 lines, read 100 at a time, took a process to 507 MB.
 */
export const RECEIVE_CHUNK = 100;
export const RECEIVE_CHUNK_BYTES = 2 * 2 ** 20;
/** The most set-aside or unaddressed entries one day's outcome lists (the count is whole). */
const LISTED_AT_MOST = 100;

/** What one day's pull did. */
export type DayOutcome = {
  day: string;
  listed: number;
  stored: number;
  already: number;
  /** Not stored, each with its reason: no buyer of this service, no IRN, or over a bound. */
  unaddressed: Array<{ irn: string | null; reason: string }>;
  /** How many there were in all (`unaddressed` lists the first ones). */
  unaddressedCount: number;
  error: string | null;
  /** Stopped at the lease: where the next attempt goes on, if the list still begins the same. */
  resume?: Resume;
};

/** An entry's index, and the digest of the list's text before it. */
type Resume = { at: number; digest: string };

/** A pull job's payload: which source and which day. */
export type PullPayload = { source: Source; day: string };

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export function payloadOf(job: { payload: string | null }): PullPayload | undefined {
  try {
    const payload = JSON.parse(job.payload ?? "null") as Partial<PullPayload> | null;
    if (payload && typeof payload.day === "string" && DAY.test(payload.day) && payload.source === "mbs")
      return { source: payload.source, day: payload.day };
  } catch {
    // A payload this version did not write: skipped below, with the reason.
  }
  return undefined;
}

/**
 * One day of the invoices the authority holds for this service's businesses as buyers, as a job of
 * the outbox: its lease makes one worker at a time pull the day, and its single retry policy
 * (settle.ts) tries a failed day again with backoff until the budget is spent, when the day is
 * failed for good, reported by the outbox's metrics and `outbox status`, and queued again by
 * `outbox retry --kind pull`; later days go on meanwhile. The day's list is stored a slice at a
 * time, each once per buyer and IRN (a day pulled again stores nothing twice), and what the day
 * did is kept on the source's row in the transaction that settles the job. `observe` hears each
 * day's outcome in this process (`invoices pull --wait` prints them).
 */
export function pullHandler(deps: {
  receipts: ReceiptsConnector | undefined;
  service: Pick<InboxService, "receive">;
  inbox: Pick<InboxRepository, "pulled" | "pull">;
  /** A refused credential pauses the pulls with every other call to the authority. */
  hold: Pick<AuthorityHold, "passed" | "failed">;
  observe?: (jobId: number, outcome: DayOutcome) => void;
}): JobHandler {
  const { receipts, service, inbox, hold } = deps;
  return async (job, attempt): Promise<Verdict> => {
    const payload = payloadOf(job);
    if (!payload) return { outcome: "skip", reason: "not a day to pull from a known source" };
    if (!receipts) return { outcome: "skip", reason: "this authority relays no invoices to buyers" };
    const { source, day } = payload;
    const outcome: DayOutcome = {
      day,
      listed: 0,
      stored: 0,
      already: 0,
      unaddressed: [],
      unaddressedCount: 0,
      error: null,
    };
    // Storing is not bounded by the call's time limit: it stops at three quarters of the lease,
    // so the day is never run by two processes at once, and goes on at the next claim.
    const started = Date.now();
    const leaseLeft = job.lease_expires_at ? Date.parse(job.lease_expires_at) - started : Number.NaN;
    let listDigest: (end: number) => string = () => "";
    const stopAt = Number.isFinite(leaseLeft) ? started + leaseLeft * 0.75 : Number.POSITIVE_INFINITY;
    try {
      const list = await attempt.send(
        (signal) => receipts.pull({ from: day, to: day }, signal),
        (message) => new DeliveryError(message),
      );
      outcome.listed = list.length;
      listDigest = (end) => list.prefixDigest(end);
      const from = await resumeAt(list);
      outcome.already += from;
      for (let i = from; i < list.length; ) {
        // At least one slice an attempt: a day always moves on.
        if (i > from && Date.now() > stopAt) return unfinished(i);
        // Each slice parsed only now: a day's documents are never all in memory at once.
        const end = list.sliceEnd(i, RECEIVE_CHUNK, RECEIVE_CHUNK_BYTES);
        const slice = await list.read(i, end);
        i = end;
        const receipt = await service.receive(slice, source, `pull:${attempt.owner}`);
        outcome.stored += receipt.stored.length;
        outcome.already += receipt.already;
        outcome.unaddressedCount += receipt.unaddressed.length;
        const room = LISTED_AT_MOST - outcome.unaddressed.length;
        outcome.unaddressed.push(...receipt.unaddressed.slice(0, Math.max(0, room)));
      }
    } catch (err) {
      outcome.error = `${day}: ${messageOf(err)}`;
      deps.observe?.(job.id, outcome);
      const report = async (plan: Plan, tx: Executor) => {
        await hold.failed(err, plan.at, tx);
        await inbox.pulled(
          source,
          { at: plan.at, received: outcome.stored, error: outcome.error, summary: summaryOf(outcome) },
          tx,
        );
      };
      return { ...authorityVerdict(err), report };
    }
    deps.observe?.(job.id, outcome);
    return { outcome: "done", report: told(null) };

    /** What the day did, told in the settle's transaction. */
    function told(error: string | null) {
      return async (plan: Plan, tx: Executor) => {
        await hold.passed(tx);
        await inbox.pulled(
          source,
          { at: plan.at, received: outcome.stored, error, summary: summaryOf(outcome) },
          tx,
        );
      };
    }

    /**
     * Out of lease before the list's end: what is stored stays, and the next claim goes on past it
     * (what is stored already is not checked again). Not counted when this attempt stored some;
     * counted when it stored none, so a day that can make no progress fails out on its budget.
     */
    /**
     * Where the last attempt at this day stopped at its lease, when the day's list begins as it did
     * then (the same bytes up to there): every entry before was stored, found stored or set aside,
     * and reading them again to find them stored could itself outlast a lease.
     */
    async function resumeAt(list: { length: number; prefixDigest(end: number): string }) {
      const last = (await inbox.pull(source))?.last_outcome;
      if (!last) return 0;
      try {
        const { day: lastDay, resume } = JSON.parse(last) as { day?: string; resume?: Resume };
        if (lastDay !== day || !resume || resume.at > list.length || resume.at <= 0) return 0;
        return list.prefixDigest(resume.at) === resume.digest ? resume.at : 0;
      } catch {
        return 0;
      }
    }

    function unfinished(at: number): Verdict {
      outcome.resume = { at, digest: listDigest(at) };
      outcome.error = `${day}: read ${at} of ${outcome.listed} entries before the lease's end (${outcome.stored} stored now); the rest at the next attempt`;
      deps.observe?.(job.id, outcome);
      if (outcome.stored === 0)
        return {
          outcome: "failed",
          error: outcome.error,
          permanent: false,
          cutOff: false,
          report: told(outcome.error),
        };
      return { outcome: "held", error: outcome.error, pace: "soon", report: told(outcome.error) };
    }
  };
}

/** A day's outcome as the source's row keeps it: its counts and the first few entries set aside. */
function summaryOf(outcome: DayOutcome): string {
  return JSON.stringify({ ...outcome, unaddressed: outcome.unaddressed.slice(0, 10) });
}
