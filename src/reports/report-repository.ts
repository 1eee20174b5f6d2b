import type { Db, Executor } from "../db/database.ts";

export function reportRepository(db: Db) {
  return {
    /** `number` follows the invoice's last report: the unique (irn, number) index refuses a repeat. */
    async insert(
      row: { irn: string; business_id: string; report: string; created_at: string; number: number },
      tx: Executor = db,
    ) {
      await tx.insertInto("fiscalization_reports").values(row).execute();
    },
    /** How many reports the invoice has, from the index on (irn, number); there are a few at most. */
    async countFor(irn: string, tx: Executor = db): Promise<number> {
      const row = await tx
        .selectFrom("fiscalization_reports")
        .select((eb) => eb.fn.countAll<number | string>().as("count"))
        .where("irn", "=", irn)
        .executeTakeFirstOrThrow();
      return Number(row.count);
    },
  };
}

export type ReportRepository = ReturnType<typeof reportRepository>;
