import { createHmac } from "node:crypto";
import type { Sealer } from "../crypto/sealer.ts";
import type { OutboxJob } from "../db/schema.ts";
import {
  backoffMs,
  type OutboxSettings,
  OutOfAttempts,
  refuseOutOfAttempts,
  timeLimit,
  withTimeout,
} from "../transmission/attempts.ts";
import { DeliveryError, isRedirect, redirectOf } from "../transmission/authority/connector.ts";
import { iso, type JobHandler, type JobSettling, type Outcome } from "../transmission/jobs.ts";
import type { OutboxRepository } from "../transmission/outbox-repository.ts";
import type { WebhookRepository } from "./webhook-repository.ts";

/** `t=<unix>,v1=<hex HMAC-SHA256(secret, "t.body")>`, as receivers verify it. */
export function webhookSignature(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${mac}`;
}

/**
 * Sends a webhook event from the outbox to the business's registered URL, signed with its secret,
 * retried with the outbox's backoff until the receiver answers 2xx or the attempts run out.
 */
export function webhookDispatcher(deps: {
  outbox: Pick<OutboxRepository, "settle">;
  settling: JobSettling;
  webhooks: Pick<WebhookRepository, "find">;
  sealer: Pick<Sealer, "open">;
  settings: OutboxSettings;
}): JobHandler {
  const { outbox, settling, webhooks, sealer, settings } = deps;
  const { skip, write } = settling;

  async function sendWebhook(job: OutboxJob, owner: string, timeoutMs: number): Promise<Outcome> {
    const attempt = job.attempts;
    const hook = await webhooks.find(job.business_id);
    if (!hook || !job.payload) {
      return skip(job, owner, "no webhook registered");
    }
    const body = job.payload;
    try {
      refuseOutOfAttempts(job, settings);
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

  return sendWebhook;
}
