import type { Db, Executor } from "../db/database.ts";

export type AuditEntry = {
  at: string;
  actor: string;
  action: string;
  business_id: string | null;
  subject: string;
  detail?: Record<string, unknown>;
};

/** The append-only log of changes that are not about one invoice (those are in its history). */
export function auditLogRepository(db: Db) {
  return {
    async append(entry: AuditEntry, tx: Executor = db): Promise<void> {
      await tx
        .insertInto("audit_log")
        .values({ ...entry, detail: JSON.stringify(entry.detail ?? {}) })
        .execute();
    },
    async entries(businessId?: string, tx: Executor = db) {
      return tx
        .selectFrom("audit_log")
        .select(["at", "actor", "action", "business_id", "subject"])
        .$if(businessId !== undefined, (q) => q.where("business_id", "=", businessId as string))
        .orderBy("id")
        .execute();
    },
    async keys(businessId?: string, tx: Executor = db) {
      return tx
        .selectFrom("api_keys")
        .select(["api_key", "business_id", "revoked_at"])
        .$if(businessId !== undefined, (q) => q.where("business_id", "=", businessId as string))
        .execute();
    },
  };
}

export type AuditLogRepository = ReturnType<typeof auditLogRepository>;
