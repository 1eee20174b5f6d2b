import { randomUUID } from "node:crypto";
import type { Executor } from "../db/database.ts";
import type { OutboxQueue } from "../outbox/outbox-service.ts";
import type { WebhookRepository } from "./webhook-repository.ts";

export type EventType =
  | "invoice.signed"
  | "invoice.transmitted"
  | "invoice.transmission_failed"
  | "invoice.payment_updated"
  /** An invoice a supplier sent to this business (inbox/). */
  | "invoice.received";

/** One event for one business's webhook. */
export type Notice = { businessId: string; type: EventType; data: Record<string, unknown>; at: string };

/**
 * Queues webhook events as outbox jobs in the caller's transaction, so an event exists exactly when
 * the change it announces was committed. The outbox's worker sends them.
 */
export function webhookNotifier(deps: {
  outbox: Pick<OutboxQueue, "enqueue">;
  webhooks: Pick<WebhookRepository, "subscribed" | "subscribedRead">;
}) {
  const { outbox, webhooks } = deps;

  /**
   * Queues an event for each notice whose business has a webhook; `subscribed` (from
   * `subscribersRead`) when the caller has read it already.
   */
  async function notifyMany(notices: readonly Notice[], tx: Executor, subscribed?: ReadonlySet<string>) {
    if (notices.length === 0) return;
    subscribed ??= await webhooks.subscribed([...new Set(notices.map((n) => n.businessId))], tx);
    const sent = notices.filter((notice) => subscribed.has(notice.businessId));
    if (sent.length === 0) return;
    // Each event keeps its own time in its body; the jobs are queued together, at the latest of
    // those times (the transaction commits after all of them).
    const latest = sent.reduce((max, notice) => (notice.at > max ? notice.at : max), sent[0]?.at ?? "");
    const items = sent.map(({ businessId, type, data, at }) => ({
      irn: typeof data.irn === "string" ? data.irn : null,
      businessId,
      payload: JSON.stringify({ id: `evt_${randomUUID()}`, type, created_at: at, data }),
    }));
    await outbox.enqueue("webhook", items, latest, tx);
  }

  return {
    notifyMany,
    notify: (notice: Notice, tx: Executor) => notifyMany([notice], tx),
    /**
     * Which of these businesses (at least one) have a webhook: a read built and not run, to be run
     * with others (readTogether).
     */
    subscribersRead: (businessIds: readonly string[], tx: Executor) =>
      webhooks.subscribedRead(businessIds, tx),
  };
}

export type WebhookNotifier = ReturnType<typeof webhookNotifier>;
