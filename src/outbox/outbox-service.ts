import { randomBytes } from "node:crypto";
import type { Executor } from "../db/database.ts";
import type { JobKind, OutboxJob } from "../db/schema.ts";
import { type OutboxSettings, refuseOutOfAttempts, timeLimit, withTimeout } from "./attempts.ts";
import { type ClaimHold, claimAroundHold, lease, pausedJob } from "./claims.ts";
import type { OutboxRepository } from "./outbox-repository.ts";
import { outboxSettler } from "./settle.ts";
import type { Attempt, JobHandler, Outcome } from "./verdict.ts";
import type { Write } from "./write.ts";

export type { OutboxSettings } from "./attempts.ts";
export type { Outcome } from "./verdict.ts";

/**
 * Queuing jobs, in the caller's transaction: all that the sides that queue (the invoice lifecycle,
 * the webhooks' notifier, the forwarder) need, so they exist before the handlers that report back
 * to them, and the service (which runs those handlers) after them.
 */
export function outboxQueue(outbox: Pick<OutboxRepository, "enqueue" | "openDelivery" | "payloadStates">) {
  return {
    /** Queues jobs of one kind in the caller's transaction: one row each, ids in the order of `items`. */
    enqueue(
      kind: JobKind,
      items: ReadonlyArray<{ irn: string | null; businessId: string; payload?: string | null }>,
      at: string,
      tx: Executor,
    ): Promise<number[]> {
      return outbox.enqueue(kind, items, at, tx);
    },

    /** Which of these payloads a job of the kind carries, open or failed, in the caller's transaction. */
    payloadStates: (kind: JobKind, payloads: readonly string[], tx: Executor) =>
      outbox.payloadStates(kind, payloads, tx),

    /** The id of the invoice's delivery still to be made, if there is one. */
    async openDelivery(irn: string, tx: Executor): Promise<number | undefined> {
      return (await outbox.openDelivery(irn, tx))?.id;
    },
  };
}

export type OutboxQueue = ReturnType<typeof outboxQueue>;

/**
 * The durable outbox. Jobs are written in the same transaction as the state change they announce,
 * claimed under a lease, and run by the handler of their kind; the outbox settles each by its
 * single retry policy (settle.ts), with backoff, until done or out of attempts.
 */
export function outboxService(deps: {
  outbox: OutboxRepository;
  write: Write;
  /** What runs a job of each kind: deliveries and forwards (transmission/), webhook events (webhooks/). */
  handlers: Record<JobKind, JobHandler>;
  settings: OutboxSettings;
  /** The pause of the jobs that go to the authority while it refuses our credential. */
  hold: ClaimHold;
  onSettled?: (job: OutboxJob, outcome: Outcome) => void;
  /**
   * Kinds this process runs one at a time (a day's pull: its answer, up to 64 MiB, is in memory
   * while it runs, and five at once took a process past 512 MB where one at a time stayed under).
   */
  single?: readonly JobKind[];
}) {
  const { outbox, write, handlers, settings, hold } = deps;
  const { settle } = outboxSettler({ outbox, write, settings });
  const singleKinds = deps.single ?? [];
  /** How many jobs of each single kind this process runs now. */
  const running = new Map<JobKind, number>();
  const runningSingle = () => new Set(singleKinds.filter((kind) => (running.get(kind) ?? 0) > 0));
  /** The authority hold's probe under way in this process, if any. */
  let probing: Promise<void> | undefined;

  async function process(
    job: OutboxJob,
    owner: string,
    timeoutMs = settings.deliveryTimeoutMs,
  ): Promise<Outcome> {
    const single = singleKinds.includes(job.kind);
    // Counted before the first await: the claimer that handed it over claims again only after.
    if (single) running.set(job.kind, (running.get(job.kind) ?? 0) + 1);
    try {
      return await run(job, owner, timeoutMs);
    } finally {
      if (single) running.set(job.kind, (running.get(job.kind) ?? 1) - 1);
    }
  }

  async function run(job: OutboxJob, owner: string, timeoutMs: number): Promise<Outcome> {
    const claimed = { ...job, lease_owner: owner };
    const attempt: Attempt = {
      owner,
      async send(work, timedOut) {
        refuseOutOfAttempts(claimed, settings);
        return withTimeout(timeLimit(claimed, timeoutMs, settings), work, timedOut);
      },
    };
    const outcome = await settle(claimed, await handlers[job.kind](claimed, attempt));
    deps.onSettled?.(job, outcome);
    return outcome;
  }

  return {
    ...outboxQueue(outbox),
    settings,
    process,
    /**
     * Due jobs, up to `limit`, around the authority hold (claimAroundHold). The claimer that took
     * the hold's probe starts it once the claim's transaction is over (a call holds no lock), and
     * does not wait for it: the jobs it claimed start now. A probe that lifts the hold makes the
     * jobs it paused due at the next claim.
     */
    async claimDue(owner: string, limit: number): Promise<OutboxJob[]> {
      const { jobs, probe } = await write((tx) =>
        claimAroundHold({ outbox, hold }, lease(owner, settings.leaseMs), limit, tx, {
          kinds: singleKinds,
          running: runningSingle(),
        }),
      );
      // Its own failures are answers (unanswered: the next interval asks again); only writing its
      // outcome can fail, and then the hold stands as it was until the next one.
      const over = () => {
        probing = undefined;
      };
      if (probe && !probing) probing = hold.probe().then(over, over);
      return jobs;
    },
    /** Gives back what `owner` claimed and did not start, once a probe under way has ended. */
    release: async (owner: string) => {
      await probing;
      return write((tx) => outbox.release(owner, tx));
    },
    /**
     * Due jobs of one kind, up to `limit`, to be run by the caller (`invoices pull --wait`): none of
     * a kind the authority hold pauses while it stands.
     */
    async claimKind(owner: string, kind: JobKind, limit: number): Promise<OutboxJob[]> {
      return write(async (tx) => {
        if (hold.kinds.includes(kind) && (await hold.current(tx)) !== undefined) return [];
        return outbox.claimDue(lease(owner, settings.leaseMs), limit, tx, { only: [kind] });
      });
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
     * (`forward`), webhook events, and days of received invoices (`pull`). An invoice's failed
     * delivery is queued again by `transmit`.
     */
    async requeueFailed(kind: "forward" | "webhook" | "pull", irn?: string): Promise<number> {
      return write((tx) => outbox.requeueFailed(kind, irn, new Date().toISOString(), tx));
    },

    async stats() {
      return outbox.stats(new Date().toISOString());
    },

    /** Whether deliveries to the authority are paused because it refuses our credential (and since when). */
    authorityHold: () => hold.current(),
  };
}

export type OutboxService = ReturnType<typeof outboxService>;
/** The name its callers knew it by, when it lived in transmission/. */
export type TransmissionService = OutboxService;
