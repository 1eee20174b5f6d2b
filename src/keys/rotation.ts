import type { Db } from "../db/database.ts";
import type { InvoiceRepository } from "../invoices/repository.ts";
import type { WebhookRepository } from "../transmission/webhook-repository.ts";
import type { Sealer } from "./sealer.ts";

const PAGE = 500;

/**
 * Re-encrypts every sealed value (invoices' confidential fields, webhook secrets) under the current
 * data key, a page per transaction. Values sealed under older keys stay readable throughout, so the
 * service keeps running while this runs; afterwards the old keys may be retired.
 */
export function dataKeyRotation(deps: {
  db: Db;
  sealer: Pick<Sealer, "seal" | "open" | "currentKid">;
  invoices: Pick<InvoiceRepository, "sealedNotUnder" | "setSealed">;
  webhooks: Pick<WebhookRepository, "all" | "setSecret">;
}) {
  const { db, sealer, invoices, webhooks } = deps;
  return {
    async resealAll(): Promise<{ kid: string; invoices: number; webhooks: number }> {
      const kid = sealer.currentKid;
      let invoiceCount = 0;
      for (;;) {
        const page = await invoices.sealedNotUnder(kid, PAGE);
        if (page.length === 0) break;
        await db.transaction().execute(async (tx) => {
          for (const row of page) {
            await invoices.setSealed(
              row.irn,
              sealer.seal(sealer.open(row.sealed as string, row.irn), row.irn),
              tx,
            );
          }
        });
        invoiceCount += page.length;
      }
      let webhookCount = 0;
      for (const hook of await webhooks.all()) {
        if (hook.secret.startsWith(`v1.${kid}.`)) continue;
        await webhooks.setSecret(
          hook.business_id,
          sealer.seal(sealer.open(hook.secret, hook.business_id), hook.business_id),
        );
        webhookCount += 1;
      }
      return { kid, invoices: invoiceCount, webhooks: webhookCount };
    },
  };
}
