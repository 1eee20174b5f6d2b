import { randomUUID } from "node:crypto";
import type { Executor } from "../db/database.ts";
import type { OutboxRepository } from "../transmission/outbox-repository.ts";
import type { WebhookRepository } from "./webhook-repository.ts";

export type EventType =
  | "invoice.signed"
  | "invoice.transmitted"
  | "invoice.transmission_failed"
  | "invoice.payment_updated";

/** One event for one business's webhook. */
export type Notice = { businessId: string; type: EventType; data: Record<string, unknown>; at: string };

/**
 * Queues webhook events as outbox jobs in the caller's transaction, so an event exists exactly when
 * the change it announces was committed. The outbox's worker sends them.
 */
export function webhookNotifier(deps: {
  outbox: Pick<OutboxRepository, "enqueueMany">;
  webhooks: Pick<WebhookRepository, "subscribed">;
}) {
  const { outbox, webhooks } = deps;

  /**
   * Queues an event for each notice whose business has a webhook; `subscribed` (from
   * `subscribers`) when the caller has read it already.
   */
  async function notifyMany(notices: readonly Notice[], tx: Executor, subscribed?: ReadonlySet<string>) {
    if (notices.length === 0) return;
    subscribed ??= await webhooks.subscribed([...new Set(notices.map((n) => n.businessId))], tx);
    const jobs = notices
      .filter((notice) => subscribed.has(notice.businessId))
      .map(({ businessId, type, data, at }) => ({
        kind: "webhook" as const,
        irn: typeof data.irn === "string" ? data.irn : null,
        business_id: businessId,
        payload: JSON.stringify({ id: `evt_${randomUUID()}`, type, created_at: at, data }),
        state: "pending" as const,
        next_attempt_at: at,
        created_at: at,
        updated_at: at,
      }));
    if (jobs.length > 0) await outbox.enqueueMany(jobs, tx);
  }

  return {
    notifyMany,
    notify: (notice: Notice, tx: Executor) => notifyMany([notice], tx),
    /** Which of these businesses have a webhook. */
    subscribers: (businessIds: readonly string[], tx: Executor) => webhooks.subscribed(businessIds, tx),
  };
}

export type WebhookNotifier = ReturnType<typeof webhookNotifier>;
