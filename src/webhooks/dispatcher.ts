import { createHmac } from "node:crypto";
import type { Sealer } from "../crypto/sealer.ts";
import { JobFailure } from "../outbox/failure.ts";
import { failedWith, type JobHandler, type Verdict } from "../outbox/verdict.ts";
import { isRedirect, redirectOf } from "../redirects.ts";
import type { WebhookRepository } from "./webhook-repository.ts";

/** `t=<unix>,v1=<hex HMAC-SHA256(secret, "t.body")>`, as receivers verify it. */
export function webhookSignature(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${mac}`;
}

/**
 * Sends a webhook event from the outbox to the business's registered URL, signed with its secret;
 * the outbox retries it with its backoff until the receiver answers 2xx or the attempts run out.
 */
export function webhookDispatcher(deps: {
  webhooks: Pick<WebhookRepository, "find">;
  sealer: Pick<Sealer, "open">;
}): JobHandler {
  const { webhooks, sealer } = deps;

  return async (job, attempt): Promise<Verdict> => {
    const hook = await webhooks.find(job.business_id);
    if (!hook || !job.payload) return { outcome: "skip", reason: "no webhook registered" };
    const body = job.payload;
    try {
      const response = await attempt.send(async (signal) => {
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
        throw new JobFailure(`receiver answered a redirect: ${redirectOf(response)}`);
      if (response.status < 200 || response.status > 299)
        throw new JobFailure(`receiver answered ${response.status}`);
      return { outcome: "done" };
    } catch (err) {
      return failedWith(err);
    }
  };
}
