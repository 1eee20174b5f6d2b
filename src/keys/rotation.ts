import { type Db, type Executor, writeTransaction } from "../db/database.ts";
import type { InvoiceRepository } from "../invoices/repository.ts";
import type { WebhookRepository } from "../transmission/webhook-repository.ts";
import type { DataKeyStateRepository } from "./key-state-repository.ts";
import { type Sealer, sealedKid } from "./sealer.ts";

const PAGE = 500;

/**
 * Data-key rotation: makes the first configured key current for every process, then re-encrypts
 * every sealed value (invoices' confidential fields, webhook secrets) under it, a page per
 * transaction. The key is recorded first, in a transaction of its own: from its commit on, every
 * write that seals uses the new key (see sealing.ts), so the single pass that follows finds every
 * row still under an old one. Values sealed under older keys stay readable throughout, so the
 * service keeps running while this runs; afterwards the old keys may be retired.
 */
export function dataKeyRotation(deps: {
  db: Db;
  sealer: Pick<Sealer, "seal" | "open" | "currentKid">;
  state: Pick<DataKeyStateRepository, "current" | "record">;
  invoices: Pick<InvoiceRepository, "sealedNotUnder" | "setSealedIf">;
  webhooks: Pick<WebhookRepository, "all" | "setSecretIf">;
}) {
  const { db, sealer, state, invoices, webhooks } = deps;

  /** A second rotation to another key started meanwhile: its pass, not this one, has the last word. */
  async function stillCurrent(kid: string, tx: Executor): Promise<void> {
    const now = await state.current(tx, { share: true });
    if (now !== kid) {
      throw new Error(`data key '${now}' was made current while re-encrypting under '${kid}': rotate again`);
    }
  }
  const reseal = (sealed: string, context: string, kid: string) =>
    sealer.seal(sealer.open(sealed, context), context, kid);

  return {
    async resealAll(): Promise<{ kid: string; invoices: number; webhooks: number }> {
      const kid = sealer.currentKid;
      await writeTransaction(db, (tx) => state.record(kid, new Date().toISOString(), tx));
      let invoiceCount = 0;
      // Keyset pages over the primary key: one pass, each row read once.
      for (let after = ""; ; ) {
        const page = await invoices.sealedNotUnder(kid, after, PAGE);
        const last = page.at(-1);
        if (!last) break;
        await writeTransaction(db, async (tx) => {
          await stillCurrent(kid, tx);
          for (const row of page) {
            const sealed = row.sealed as string;
            // Compare-and-set: a value changed meanwhile is left as it now is.
            if (await invoices.setSealedIf(row.irn, sealed, reseal(sealed, row.irn, kid), tx)) {
              invoiceCount += 1;
            }
          }
        });
        after = last.irn;
      }
      const hooks = (await webhooks.all()).filter((hook) => sealedKid(hook.secret) !== kid);
      let webhookCount = 0;
      if (hooks.length > 0) {
        await writeTransaction(db, async (tx) => {
          await stillCurrent(kid, tx);
          for (const hook of hooks) {
            const resealed = reseal(hook.secret, hook.business_id, kid);
            // A webhook set again meanwhile has a new secret, sealed under the new key already.
            if (await webhooks.setSecretIf(hook.business_id, hook.secret, resealed, tx)) webhookCount += 1;
          }
        });
      }
      return { kid, invoices: invoiceCount, webhooks: webhookCount };
    },
  };
}
