import { compiledByCount, type Read, read } from "../db/batch-statements.ts";
import type { Db, Executor } from "../db/database.ts";
import type { WebhookTable } from "../db/schema.ts";

export function webhookRepository(db: Db) {
  const subscribedRead = (businessIds: readonly string[], tx: Executor = db): Read<Set<string>> => ({
    query: compiledByCount(tx, "webhooks of", businessIds, () =>
      tx.selectFrom("webhooks").select("business_id").where("business_id", "in", businessIds),
    ),
    answer: (rows) => new Set(rows.map((row) => row.business_id as string)),
  });
  return {
    async upsert(row: WebhookTable, tx: Executor = db): Promise<void> {
      await tx
        .insertInto("webhooks")
        .values(row)
        .onConflict((oc) =>
          oc
            .column("business_id")
            .doUpdateSet({ url: row.url, secret: row.secret, created_at: row.created_at }),
        )
        .execute();
    },
    async all(tx: Executor = db): Promise<WebhookTable[]> {
      return tx.selectFrom("webhooks").selectAll().execute();
    },
    /** Replaces the sealed secret only while it is still `from` (data-key rotation). */
    async setSecretIf(businessId: string, from: string, secret: string, tx: Executor = db): Promise<boolean> {
      const result = await tx
        .updateTable("webhooks")
        .set({ secret })
        .where("business_id", "=", businessId)
        .where("secret", "=", from)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    /** Which of these businesses have a webhook. */
    async subscribed(businessIds: readonly string[], tx: Executor = db): Promise<Set<string>> {
      if (businessIds.length === 0) return new Set();
      return read(tx, subscribedRead(businessIds, tx));
    },
    /** `subscribed` built and not run (at least one business), to be run with other reads (readTogether). */
    subscribedRead,
    async find(businessId: string, tx: Executor = db): Promise<WebhookTable | undefined> {
      return tx.selectFrom("webhooks").selectAll().where("business_id", "=", businessId).executeTakeFirst();
    },
  };
}

export type WebhookRepository = ReturnType<typeof webhookRepository>;
