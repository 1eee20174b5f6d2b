import type { Db, Executor } from "../db/database.ts";
import type { ApiKeyTable, BusinessTable } from "../db/schema.ts";

export function businessRepository(db: Db) {
  return {
    async insert(row: BusinessTable, tx: Executor = db): Promise<void> {
      await tx.insertInto("businesses").values(row).execute();
    },
    async findById(id: string, tx: Executor = db): Promise<BusinessTable | undefined> {
      return tx.selectFrom("businesses").selectAll().where("id", "=", id).executeTakeFirst();
    },
    async findByServiceId(serviceId: string, tx: Executor = db): Promise<BusinessTable | undefined> {
      return tx.selectFrom("businesses").selectAll().where("service_id", "=", serviceId).executeTakeFirst();
    },
    async findByCertificate(certificate: string, tx: Executor = db): Promise<BusinessTable | undefined> {
      return tx
        .selectFrom("businesses")
        .selectAll()
        .where("certificate", "=", certificate)
        .executeTakeFirst();
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
