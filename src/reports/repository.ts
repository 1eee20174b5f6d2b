import type { Db, Executor } from "../db/database.ts";

export function reportRepository(db: Db) {
  return {
    async insert(
      row: { irn: string; business_id: string; report: string; created_at: string },
      tx: Executor = db,
    ) {
      await tx.insertInto("fiscalization_reports").values(row).execute();
    },
    async forInvoice(irn: string, tx: Executor = db) {
      return tx
        .selectFrom("fiscalization_reports")
        .select(["report", "created_at"])
        .where("irn", "=", irn)
        .orderBy("id")
        .execute();
    },
  };
}

export type ReportRepository = ReturnType<typeof reportRepository>;
