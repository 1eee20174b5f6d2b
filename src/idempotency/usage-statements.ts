import { sql } from "kysely";
import { chunksFor, compiledOnce } from "../db/batch-statements.ts";
import { type Db, type Executor, engineOf } from "../db/database.ts";

/** The bytes of answers each business's keys keep, by 15-minute slot (see the service's quota). */
export function usageStatements(db: Db) {
  /** Adds `bytes` to what a business's keys keep, in the slot of the time they were stored in. */
  const addUsage = async (businessId: string, slot: number, bytes: number, tx: Executor = db) => {
    await tx
      .insertInto("idempotency_usage")
      .values({ business_id: businessId, slot, bytes })
      .onConflict((oc) =>
        oc
          .columns(["business_id", "slot"])
          .doUpdateSet({ bytes: sql`idempotency_usage.bytes + excluded.bytes` }),
      )
      .execute();
  };
  return {
    /**
     * Adds to several businesses' usage, a statement a row, in the order of their ids (the order
     * PostgreSQL's statement takes them in too). `storeAnswers` counts a batch's answers with this
     * on SQLite, and in the statement that stores them on PostgreSQL.
     */
    async addUsages(rows: readonly { businessId: string; slot: number; bytes: number }[], tx: Executor = db) {
      const ordered = [...rows].sort((a, b) => inBusinessOrder(a.businessId, b.businessId));
      for (const { businessId, slot, bytes } of ordered) await addUsage(businessId, slot, bytes, tx);
    },

    /**
     * What each business's keys keep in the slots from `fromSlot` on, and the oldest of those
     * slots, in one statement (the quota checks of one turn of the event loop: on PostgreSQL a
     * round trip per request was a third of a keyed sign's statements).
     */
    async usages(businessIds: readonly string[], fromSlot: number, tx: Executor = db) {
      const found = new Map<string, { bytes: number; oldest: number | null }>();
      for (const chunk of chunksFor(tx, [...new Set(businessIds)])) {
        const rows = await tx
          .selectFrom("idempotency_usage")
          .select((eb) => [
            "business_id",
            eb.fn.sum<number | string | null>("bytes").as("bytes"),
            eb.fn.min("slot").as("oldest"),
          ])
          .where("business_id", "in", chunk)
          .where("slot", ">=", fromSlot)
          .groupBy("business_id")
          .execute();
        for (const row of rows)
          found.set(row.business_id, { bytes: Number(row.bytes ?? 0), oldest: row.oldest });
      }
      return businessIds.map((id) => found.get(id) ?? { bytes: 0, oldest: null });
    },

    /** Forgets the usage of the slots before `slot`; answers how many rows went. */
    async deleteUsageBefore(slot: number, tx: Executor = db): Promise<number> {
      const result = await tx.deleteFrom("idempotency_usage").where("slot", "<", slot).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

export type UsageStatements = ReturnType<typeof usageStatements>;

/**
 * The order usage rows are written in, by business id, by every statement that writes several: two
 * processes' statements then never wait on each other's rows in opposite orders (a deadlock).
 */
export const inBusinessOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Bytes added to `rows` businesses' usage in a slot: business id, slot and bytes a row. */
export function usageUpsertText(tx: Executor, rows: number): string {
  return compiledOnce(
    `${engineOf(tx)}\u0000idempotency usage\u0000${rows}`,
    () =>
      tx
        .insertInto("idempotency_usage")
        .values(Array.from({ length: rows }, () => ({ business_id: "", slot: 0, bytes: 0 })))
        .onConflict((oc) =>
          oc
            .columns(["business_id", "slot"])
            .doUpdateSet({ bytes: sql`idempotency_usage.bytes + excluded.bytes` }),
        )
        .compile().sql,
  );
}
