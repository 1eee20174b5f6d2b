import type { Db, Executor } from "../db/database.ts";
import type { ApiKeyTable, Business, NewBusinessRow } from "../db/schema.ts";

export function businessRepository(db: Db) {
  return {
    async insert(row: NewBusinessRow, tx: Executor = db): Promise<void> {
      await tx.insertInto("businesses").values(row).execute();
    },
    async findById(id: string, tx: Executor = db): Promise<Business | undefined> {
      return tx.selectFrom("businesses").selectAll().where("id", "=", id).executeTakeFirst();
    },
    async findByServiceId(serviceId: string, tx: Executor = db): Promise<Business | undefined> {
      return tx.selectFrom("businesses").selectAll().where("service_id", "=", serviceId).executeTakeFirst();
    },
    async findByCertificate(certificate: string, tx: Executor = db): Promise<Business | undefined> {
      return tx
        .selectFrom("businesses")
        .selectAll()
        .where("certificate", "=", certificate)
        .executeTakeFirst();
    },
    /**
     * Takes the next position in the business's hash chain and returns the previous head. The
     * update is the transaction's first write, so it takes the lock (a row lock on PostgreSQL, the
     * write lock on SQLite) that serializes the signs of one business until commit.
     */
    async advanceChain(
      id: string,
      tx: Executor,
    ): Promise<{ chain_head: string | null; chain_length: number }> {
      return tx
        .updateTable("businesses")
        .set((eb) => ({ chain_length: eb("chain_length", "+", 1) }))
        .where("id", "=", id)
        .returning(["chain_head", "chain_length"])
        .executeTakeFirstOrThrow();
    },
    async setChainHead(id: string, hash: string, tx: Executor): Promise<void> {
      await tx.updateTable("businesses").set({ chain_head: hash }).where("id", "=", id).execute();
    },
    async list(tx: Executor = db): Promise<Business[]> {
      return tx.selectFrom("businesses").selectAll().orderBy("created_at").orderBy("id").execute();
    },
    async count(tx: Executor = db): Promise<number> {
      const row = await tx
        .selectFrom("businesses")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async insertKey(row: ApiKeyTable, tx: Executor = db): Promise<void> {
      await tx.insertInto("api_keys").values(row).execute();
    },
    async findActiveKey(apiKey: string, tx: Executor = db): Promise<ApiKeyTable | undefined> {
      return tx
        .selectFrom("api_keys")
        .selectAll()
        .where("api_key", "=", apiKey)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
    },
    async findKey(apiKey: string, tx: Executor = db): Promise<ApiKeyTable | undefined> {
      return tx.selectFrom("api_keys").selectAll().where("api_key", "=", apiKey).executeTakeFirst();
    },
    async revokeKey(apiKey: string, at: string, tx: Executor = db): Promise<void> {
      await tx
        .updateTable("api_keys")
        .set({ revoked_at: at })
        .where("api_key", "=", apiKey)
        .where("revoked_at", "is", null)
        .execute();
    },
  };
}

export type BusinessRepository = ReturnType<typeof businessRepository>;
