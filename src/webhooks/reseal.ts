import { type Sealer, sealedKid } from "../crypto/sealer.ts";
import { type Resealer, resealUnder } from "../keys/rotation.ts";
import type { WebhookRepository } from "./webhook-repository.ts";

/** The webhooks' part of a data-key rotation: their signing secrets, sealed under the business id. */
export function webhookResealer(deps: {
  sealer: Pick<Sealer, "seal" | "open">;
  webhooks: Pick<WebhookRepository, "all" | "setSecretIf">;
}): Resealer {
  const { sealer, webhooks } = deps;
  return async (kid, underKey) => {
    // One per business: few enough for one transaction.
    const hooks = (await webhooks.all()).filter((hook) => sealedKid(hook.secret) !== kid);
    if (hooks.length === 0) return 0;
    return underKey(async (tx) => {
      let count = 0;
      for (const hook of hooks) {
        const resealed = resealUnder(sealer, hook.secret, hook.business_id, kid);
        // A webhook set again meanwhile has a new secret, sealed under the new key already.
        if (await webhooks.setSecretIf(hook.business_id, hook.secret, resealed, tx)) count += 1;
      }
      return count;
    });
  };
}
