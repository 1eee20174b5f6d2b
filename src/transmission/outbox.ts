import { randomBytes } from "node:crypto";
import type { Executor } from "../db/database.ts";
import type { OutboxJob } from "../db/schema.ts";
import type { OutboxSettings } from "./attempts.ts";
import type { AuthorityHold } from "./authority-hold.ts";
import { iso, type JobHandler, type JobSettling, type Outcome } from "./jobs.ts";
import type { OutboxRepository } from "./outbox-repository.ts";

export type { Outcome } from "./jobs.ts";

/** The kinds of job that call the authority, and wait while it refuses our credential. */
const AUTHORITY_KINDS = ["delivery", "forward"] as const;

export type { OutboxSettings };

/**
 * Due jobs, up to `limit`. While the authority refuses our credential, its jobs (deliveries,
 * forwards) are left alone but for one probe per interval among all workers: a delivery if one is
 * due, else a forward. Webhooks go on.
 */
async function claimAroundHold(
  deps: { outbox: OutboxRepository; hold: Pick<AuthorityHold, "current" | "takeProbe"> },
  claim: { owner: string; now: string; until: string },
  limit: number,
  tx: Executor,
): Promise<OutboxJob[]> {
  const { outbox, hold } = deps;
  if ((await hold.current(tx)) === undefined) return outbox.claimDue(claim, limit, tx);
  const jobs = await outbox.claimDue(claim, limit, tx, { except: AUTHORITY_KINDS });
  if (jobs.length >= limit || !(await hold.takeProbe(Date.now(), tx))) return jobs;
  for (const kind of AUTHORITY_KINDS) {
    const probe = await outbox.claimDue(claim, 1, tx, { only: [kind] });
    if (probe.length > 0) return [...jobs, ...probe];
  }
  return jobs;
}

/**
 * A job not tried now because the authority refuses our credential, as the bounded wait reports
 * it: why, and when the probe will tell more. Undefined when nothing is paused.
 */
async function pausedJob(
  deps: { outbox: Pick<OutboxRepository, "find">; hold: Pick<AuthorityHold, "current"> },
  jobId: number,
): Promise<{ job: OutboxJob | undefined } | undefined> {
  const paused = await deps.hold.current();
  if (!paused) return undefined;
  const job = await deps.outbox.find(jobId);
  return {
    job: job && {
      ...job,
      last_error: `deliveries to the authority are paused since ${paused.since}: it refused this service's credentials (${paused.reason}); the operator must fix them`,
      next_attempt_at: paused.next_probe_at,
    },
  };
}

/**
 * The durable outbox. Jobs are written in the same transaction as the state change they announce,
 * claimed under a lease, and run by the handler of their kind, which retries them with backoff until
 * delivered or out of attempts.
 */
export function transmissionService(deps: {
  outbox: OutboxRepository;
  settling: Pick<JobSettling, "write">;
  /** What runs a job of each kind: deliveries (delivery.ts) and webhook events (webhooks/dispatcher.ts). */
  handlers: Record<OutboxJob["kind"], JobHandler>;
  settings: OutboxSettings;
  /** The pause of the jobs that go to the authority while it refuses our credential. */
  hold: Pick<AuthorityHold, "current" | "takeProbe">;
  onSettled?: (job: OutboxJob, outcome: Outcome) => void;
}) {
  const { outbox, handlers, settings, hold } = deps;
  const { write } = deps.settling;

  async function process(
    job: OutboxJob,
    owner: string,
    timeoutMs = settings.deliveryTimeoutMs,
  ): Promise<Outcome> {
    const outcome = await handlers[job.kind](job, owner, timeoutMs);
    deps.onSettled?.(job, outcome);
    return outcome;
  }

  const lease = (owner: string, ms = settings.leaseMs) => {
    const now = Date.now();
    return { owner, now: iso(now), until: iso(now + ms) };
  };

  return {
    settings,
    process,
    /** Due jobs, up to `limit`, around the authority hold (claimAroundHold). */
    claimDue: (owner: string, limit: number) =>
      write((tx) => claimAroundHold({ outbox, hold }, lease(owner), limit, tx)),
    release: (owner: string) => write((tx) => outbox.release(owner, tx)),

    /** Deliveries of invoices signed in this transaction (none of them can have a job yet): IRN → job id. */
    async enqueueNewDeliveries(
      invoices: ReadonlyArray<{ irn: string; businessId: string }>,
      now: string,
      tx: Executor,
    ): Promise<Map<string, number>> {
      const created = await outbox.enqueueMany(
        invoices.map(({ irn, businessId }) => ({
          kind: "delivery" as const,
          irn,
          business_id: businessId,
          payload: null,
          state: "pending" as const,
          next_attempt_at: now,
          created_at: now,
          updated_at: now,
        })),
        tx,
      );
      return new Map(created.map((job) => [job.irn as string, job.id]));
    },

    /** The id of the invoice's delivery still to be made, if there is one. */
    async openDelivery(irn: string, tx: Executor): Promise<number | undefined> {
      return (await outbox.openDelivery(irn, tx))?.id;
    },

    /** Queues the delivery of an invoice in the caller's transaction; reuses a job already open. */
    async enqueueDelivery(irn: string, businessId: string, now: string, tx: Executor): Promise<number> {
      const open = await outbox.openDelivery(irn, tx);
      if (open) return open.id;
      return outbox.enqueue(
        {
          kind: "delivery",
          irn,
          business_id: businessId,
          payload: null,
          state: "pending",
          next_attempt_at: now,
          created_at: now,
          updated_at: now,
        },
        tx,
      );
    },

    /**
     * Tries the delivery at once, within `waitMs`: claims the job and runs it, or, when another
     * worker holds it, watches it until the deadline. Whatever happens, the job stays durable.
     */
    async deliverNow(jobId: number, waitMs: number): Promise<OutboxJob | undefined> {
      const paused = await pausedJob({ outbox, hold }, jobId);
      if (paused) return paused.job;
      const deadline = Date.now() + waitMs;
      const owner = `request:${randomBytes(6).toString("hex")}`;
      if (waitMs > 0) {
        // The lease outlives the wait by the attempt's own limit, so no one else starts it meanwhile.
        const claimed = await write((tx) =>
          outbox.claim(jobId, lease(owner, Math.max(waitMs, settings.deliveryTimeoutMs) + 1000), tx),
        );
        if (claimed) {
          await process(claimed, owner, Math.max(1, Math.min(settings.deliveryTimeoutMs, waitMs)));
          return outbox.find(jobId);
        }
      }
      // Another worker holds the job: watch it until an attempt ends (a claim counts the attempt
      // and leaves the time of the last change alone; the end of an attempt sets it) or the wait is over.
      let seen: string | undefined;
      for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
        const job = await outbox.find(jobId);
        seen ??= job?.updated_at;
        if (job?.state !== "pending" || job.updated_at !== seen || Date.now() >= deadline) return job;
        await new Promise((resolve) => setTimeout(resolve, Math.min(pause, deadline - Date.now())));
      }
    },

    /**
     * The operator's second chance for what failed for good: payment updates and VAT reports
     * (`forward`) and webhook events. An invoice's failed delivery is queued again by `transmit`.
     */
    async requeueFailed(kind: "forward" | "webhook", irn?: string): Promise<number> {
      return write((tx) => outbox.requeueFailed(kind, irn, new Date().toISOString(), tx));
    },

    async stats() {
      return outbox.stats(new Date().toISOString());
    },

    /** Whether deliveries to the authority are paused because it refuses our credential (and since when). */
    authorityHold: () => hold.current(),
  };
}

export type TransmissionService = ReturnType<typeof transmissionService>;
