import { sql } from "kysely";
import type { Db, Executor } from "../db/database.ts";
import type { IdempotencyKeyTable } from "../db/schema.ts";
import type { KeptAnswer } from "./answers.ts";

export type KeyRow = IdempotencyKeyTable;
/** Which key: a business's own. */
export type KeyId = Pick<KeyRow, "business_id" | "idempotency_key">;
export type Answer = Pick<KeyRow, "status" | "retry_after"> & KeptAnswer;
/** A row's answer columns emptied: the key in flight again. */
export const NO_ANSWER = {
  status: null,
  retry_after: null,
  response: null,
  response_gzip: null,
  response_bytes: null,
  response_sha256: null,
  replay: null,
} as const;

/** The bytes of answers each business's keys keep, by 15-minute slot (see the service's quota). */
function usageStatements(db: Db) {
  return {
    /** Adds `bytes` to what a business's keys keep, in the slot of the time they were stored in. */
    async addUsage(businessId: string, slot: number, bytes: number, tx: Executor = db): Promise<void> {
      await tx
        .insertInto("idempotency_usage")
        .values({ business_id: businessId, slot, bytes })
        .onConflict((oc) =>
          oc
            .columns(["business_id", "slot"])
            .doUpdateSet({ bytes: sql`idempotency_usage.bytes + excluded.bytes` }),
        )
        .execute();
    },

    /** What a business's keys keep in the slots from `fromSlot` on, and the oldest of those slots. */
    async usage(businessId: string, fromSlot: number, tx: Executor = db) {
      const row = await tx
        .selectFrom("idempotency_usage")
        .select((eb) => [
          eb.fn.sum<number | string | null>("bytes").as("bytes"),
          eb.fn.min("slot").as("oldest"),
        ])
        .where("business_id", "=", businessId)
        .where("slot", ">=", fromSlot)
        .executeTakeFirst();
      return { bytes: Number(row?.bytes ?? 0), oldest: row?.oldest ?? null };
    },

    /** Forgets the usage of the slots before `slot`; answers how many rows went. */
    async deleteUsageBefore(slot: number, tx: Executor = db): Promise<number> {
      const result = await tx.deleteFrom("idempotency_usage").where("slot", "<", slot).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

export function idempotencyRepository(db: Db) {
  const byId = (id: KeyId) => ({ business_id: id.business_id, idempotency_key: id.idempotency_key }) as const;

  return {
    ...usageStatements(db),

    /** Claims a key nobody holds; false when a row for it exists (the primary key decides). */
    async insertClaim(row: KeyRow, tx: Executor = db): Promise<boolean> {
      const result = await tx
        .insertInto("idempotency_keys")
        .values(row)
        .onConflict((oc) => oc.columns(["business_id", "idempotency_key"]).doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
    },

    async find(id: KeyId, tx: Executor = db): Promise<KeyRow | undefined> {
      const { business_id, idempotency_key } = byId(id);
      return tx
        .selectFrom("idempotency_keys")
        .selectAll()
        .where("business_id", "=", business_id)
        .where("idempotency_key", "=", idempotency_key)
        .executeTakeFirst();
    },

    /**
     * Compare-and-set: claims a key again (expired, or left by a request that died) only while the
     * claim `from` still holds it, so of two requests taking it over one wins.
     */
    async takeOver(
      from: KeyId & Pick<KeyRow, "claim">,
      to: Pick<KeyRow, "route" | "fingerprint" | "claim" | "created_at">,
      tx: Executor = db,
    ): Promise<boolean> {
      const { business_id, idempotency_key } = byId(from);
      const result = await tx
        .updateTable("idempotency_keys")
        .set({ ...to, ...NO_ANSWER })
        .where("business_id", "=", business_id)
        .where("idempotency_key", "=", idempotency_key)
        .where("claim", "=", from.claim)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Stores the answer of the request whose claim still holds the key; false when it lost it. */
    async complete(id: KeyId & Pick<KeyRow, "claim">, answer: Answer, tx: Executor = db): Promise<boolean> {
      const { business_id, idempotency_key } = byId(id);
      const result = await tx
        .updateTable("idempotency_keys")
        .set(answer)
        .where("business_id", "=", business_id)
        .where("idempotency_key", "=", idempotency_key)
        .where("claim", "=", id.claim)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Gives a key back (its request answered nothing worth keeping), if the claim still holds it. */
    async release(id: KeyId & Pick<KeyRow, "claim">, tx: Executor = db): Promise<boolean> {
      const { business_id, idempotency_key } = byId(id);
      const result = await tx
        .deleteFrom("idempotency_keys")
        .where("business_id", "=", business_id)
        .where("idempotency_key", "=", idempotency_key)
        .where("claim", "=", id.claim)
        .executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },

    /** Deletes up to `limit` keys claimed before `cutoff`; answers how many. */
    async deleteClaimedBefore(cutoff: string, limit: number, tx: Executor = db): Promise<number> {
      const result = await tx
        .deleteFrom("idempotency_keys")
        .where(({ eb, refTuple, selectFrom }) =>
          eb(
            refTuple("business_id", "idempotency_key"),
            "in",
            selectFrom("idempotency_keys")
              .select(["business_id", "idempotency_key"])
              .where("created_at", "<", cutoff)
              .limit(limit)
              .$asTuple("business_id", "idempotency_key"),
          ),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

export type IdempotencyRepository = ReturnType<typeof idempotencyRepository>;
