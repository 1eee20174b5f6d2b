import { createHmac, randomBytes } from "node:crypto";
import { type Db, type Executor, engineOf, writeTransaction } from "../db/database.ts";
import type { OutboxJob } from "../db/schema.ts";
import type { Sealer } from "../keys/sealer.ts";
import {
  backoffMs,
  cutOffReason,
  type OutboxSettings,
  OutOfAttempts,
  outOfAttempts,
  timeLimit,
  withTimeout,
} from "./attempts.ts";
import { type AuthorityConnector, DeliveryError, isRedirect, redirectOf } from "./authority.ts";
import type { OutboxRepository } from "./outbox-repository.ts";
import type { DeliveryPort } from "./port.ts";
import type { WebhookRepository } from "./webhook-repository.ts";

export type { OutboxSettings };

export type Outcome = "delivered" | "retry" | "failed" | "lost" | "skipped";

const iso = (ms: number) => new Date(ms).toISOString();

/** `t=<unix>,v1=<hex HMAC-SHA256(secret, "t.body")>`, as receivers verify it. */
export function webhookSignature(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${mac}`;
}

/**
 * The durable outbox. Jobs are written in the same transaction as the state change they announce,
 * claimed under a lease, and retried with backoff until delivered or out of attempts; the IRN is the
 * idempotency key, so a delivery repeated after an ambiguous failure is fiscalized once.
 */
export function transmissionService(deps: {
  db: Db;
  outbox: OutboxRepository;
  /** The invoices side of a delivery: what to send, and what its outcome means (see port.ts). */
  invoices: DeliveryPort;
  webhooks: Pick<WebhookRepository, "find">;
  sealer: Pick<Sealer, "seal" | "open">;
  authority: AuthorityConnector;
  settings: OutboxSettings;
  onSettled?: (job: OutboxJob, outcome: Outcome) => void;
}) {
  const { db, outbox, invoices, webhooks, sealer, authority, settings } = deps;

  /**
   * Writes outside a caller's transaction. On SQLite they wait for another process's write lock
   * without blocking the event loop (see writeTransaction); PostgreSQL waits on the server anyway.
   */
  const write = <T>(work: (tx: Executor) => Promise<T>): Promise<T> =>
    engineOf(db) === "postgres" ? work(db) : writeTransaction(db, work);

  const exhausted = (job: OutboxJob) => outOfAttempts(job, settings);
  const incomplete = () => cutOffReason(settings);

  /** A job with nothing left to do: done, and the claim's count taken back, since nothing was attempted. */
  async function skip(job: OutboxJob, owner: string, reason: string | null): Promise<Outcome> {
    const settled = await write((tx) =>
      outbox.settle(
        job.id,
        owner,
        {
          state: "done",
          attempts: job.attempts - 1,
          last_error: reason,
          updated_at: new Date().toISOString(),
        },
        tx,
      ),
    );
    return settled ? "skipped" : "lost";
  }

  async function deliver(job: OutboxJob, owner: string, timeoutMs: number): Promise<Outcome> {
    const irn = job.irn as string;
    const target = await invoices.target(irn);
    const attempt = job.attempts;
    const now = () => new Date().toISOString();
    if ("skip" in target) return skip(job, owner, target.skip);
    const actor = `outbox:${owner}`;
    const started = Date.now();
    try {
      if (exhausted(job)) throw new OutOfAttempts(incomplete());
      const receipt = await withTimeout(timeLimit(job, timeoutMs, settings), (signal) =>
        authority.deliver({ irn, businessId: target.businessId, document: target.document }, signal),
      );
      return await writeTransaction(db, async (tx) => {
        const settled = await outbox.settle(
          job.id,
          owner,
          { state: "done", attempts: attempt, updated_at: receipt.at },
          tx,
        );
        if (!settled) return "lost";
        await invoices.delivered(
          irn,
          {
            businessId: target.businessId,
            at: receipt.at,
            actor,
            attempt,
            durationMs: Date.now() - started,
            authority: authority.name,
            reference: receipt.reference,
          },
          tx,
        );
        return "delivered";
      });
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      const permanent = err instanceof DeliveryError && err.permanent;
      const cutOff = err instanceof OutOfAttempts;
      // The attempt that was cut off is the one recorded; the claim that found it made none.
      const made = cutOff ? settings.maxAttempts : attempt;
      const at = now();
      const final = permanent || cutOff || attempt >= settings.maxAttempts;
      const next = final ? undefined : iso(Date.now() + backoffMs(attempt, settings));
      return writeTransaction(db, async (tx) => {
        const settled = await outbox.settle(
          job.id,
          owner,
          final
            ? { state: "failed", attempts: made, last_error: error, updated_at: at }
            : {
                state: "pending",
                attempts: made,
                last_error: error,
                next_attempt_at: next as string,
                updated_at: at,
              },
          tx,
        );
        if (!settled) return "lost";
        await invoices.attemptFailed(
          irn,
          {
            businessId: target.businessId,
            at,
            actor,
            attempt: made,
            outcome: cutOff ? "incomplete" : permanent ? "rejected" : "error",
            error,
            ...(cutOff ? {} : { durationMs: Date.now() - started }),
            ...(next ? { nextAttemptAt: next } : {}),
            authority: authority.name,
            final,
          },
          tx,
        );
        return final ? "failed" : "retry";
      });
    }
  }

  async function sendWebhook(job: OutboxJob, owner: string, timeoutMs: number): Promise<Outcome> {
    const attempt = job.attempts;
    const hook = await webhooks.find(job.business_id);
    if (!hook || !job.payload) {
      return skip(job, owner, "no webhook registered");
    }
    const body = job.payload;
    try {
      if (exhausted(job)) throw new OutOfAttempts(incomplete());
      const response = await withTimeout(timeLimit(job, timeoutMs, settings), async (signal) => {
        const secret = sealer.open(hook.secret, hook.business_id);
        const answer = await fetch(hook.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "user-agent": "einvoice-webhooks/1",
            "x-einvoice-event-id": (JSON.parse(body) as { id: string }).id,
            "x-einvoice-signature": webhookSignature(secret, body, Math.floor(Date.now() / 1000)),
          },
          body,
          signal,
          // The signed event goes to the registered URL only, never wherever that URL points on.
          redirect: "manual",
        });
        await answer.body?.cancel();
        return answer;
      });
      if (isRedirect(response.status))
        throw new DeliveryError(`receiver answered a redirect: ${redirectOf(response)}`);
      if (response.status < 200 || response.status > 299)
        throw new DeliveryError(`receiver answered ${response.status}`);
      return (await write((tx) =>
        outbox.settle(
          job.id,
          owner,
          { state: "done", attempts: attempt, updated_at: new Date().toISOString() },
          tx,
        ),
      ))
        ? "delivered"
        : "lost";
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      const cutOff = err instanceof OutOfAttempts;
      const final = cutOff || attempt >= settings.maxAttempts;
      const settled = await write((tx) =>
        outbox.settle(
          job.id,
          owner,
          {
            state: final ? "failed" : "pending",
            attempts: cutOff ? settings.maxAttempts : attempt,
            last_error: error,
            updated_at: new Date().toISOString(),
            ...(final ? {} : { next_attempt_at: iso(Date.now() + backoffMs(attempt, settings)) }),
          },
          tx,
        ),
      );
      return !settled ? "lost" : final ? "failed" : "retry";
    }
  }

  async function process(
    job: OutboxJob,
    owner: string,
    timeoutMs = settings.deliveryTimeoutMs,
  ): Promise<Outcome> {
    const outcome =
      job.kind === "delivery"
        ? await deliver(job, owner, timeoutMs)
        : await sendWebhook(job, owner, timeoutMs);
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
    claimDue: (owner: string, limit: number) => write((tx) => outbox.claimDue(lease(owner), limit, tx)),
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

    async stats() {
      return outbox.stats(new Date().toISOString());
    },
  };
}

export type TransmissionService = ReturnType<typeof transmissionService>;
