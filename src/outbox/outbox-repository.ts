import { type Insertable, sql } from "kysely";
import { chunksFor } from "../db/batch-statements.ts";
import { type Db, type Executor, engineOf } from "../db/database.ts";
import type { JobKind, JobState, OutboxJob, OutboxJobTable } from "../db/schema.ts";

export type Lease = { owner: string; now: string; until: string };

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a repository: one short closure per statement
export function outboxRepository(db: Db) {
  return {
    /**
     * Queues jobs of one kind, due at once: one row each, built here and nowhere else; the ids in
     * the order of `items`. One statement per chunk; a chunk's ids are taken in ascending order,
     * the order its rows were inserted in (RETURNING itself promises no order).
     */
    async enqueue(
      kind: JobKind,
      items: ReadonlyArray<{ irn: string | null; businessId: string; payload?: string | null }>,
      at: string,
      tx: Executor = db,
    ): Promise<number[]> {
      const rows = items.map(
        (item): Insertable<OutboxJobTable> => ({
          kind,
          irn: item.irn,
          business_id: item.businessId,
          payload: item.payload ?? null,
          state: "pending",
          next_attempt_at: at,
          created_at: at,
          updated_at: at,
        }),
      );
      const ids: number[] = [];
      for (const chunk of chunksFor(tx, rows)) {
        const created = await tx.insertInto("outbox_jobs").values(chunk).returning("id").execute();
        ids.push(...created.map((row) => row.id).sort((a, b) => a - b));
      }
      return ids;
    },

    /**
     * A business's forwards waiting for the authority, counted up to `limit` (so never more than
     * `limit` entries of the index of 0015 are read). The states are literals: SQLite uses a partial
     * index only for a query that names its condition's values.
     */
    async queuedForwards(businessId: string, limit: number, tx: Executor = db): Promise<number> {
      const { rows } = await sql<{ count: number | string }>`select count(*) as count from (
          select 1 from outbox_jobs
          where business_id = ${businessId} and kind = 'forward' and state = 'pending'
          limit ${limit}) queued`.execute(tx);
      return Number(rows[0]?.count ?? 0);
    },

    /** Which of these payloads a job of the kind carries, open or failed for good, and its state. */
    async payloadStates(
      kind: JobKind,
      payloads: readonly string[],
      tx: Executor = db,
    ): Promise<Array<{ payload: string; state: JobState }>> {
      if (payloads.length === 0) return [];
      const rows = await tx
        .selectFrom("outbox_jobs")
        .select(["payload", "state"])
        .where("kind", "=", kind)
        .where("state", "in", ["pending", "failed"])
        .where("payload", "in", [...payloads])
        .execute();
      return rows.flatMap((row) =>
        row.payload === null ? [] : [{ payload: row.payload, state: row.state }],
      );
    },

    async openDelivery(irn: string, tx: Executor = db): Promise<OutboxJob | undefined> {
      return tx
        .selectFrom("outbox_jobs")
        .selectAll()
        .where("irn", "=", irn)
        .where("kind", "=", "delivery")
        .where("state", "=", "pending")
        .executeTakeFirst();
    },

    /** Whether a job of the same kind for the same invoice, queued before this one, is still open. */
    async earlierOpen(job: Pick<OutboxJob, "id" | "kind" | "irn">, tx: Executor = db): Promise<boolean> {
      if (job.irn === null) return false;
      const row = await tx
        .selectFrom("outbox_jobs")
        .select("id")
        .where("irn", "=", job.irn)
        .where("kind", "=", job.kind)
        .where("state", "=", "pending")
        .where("id", "<", job.id)
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    async find(id: number, tx: Executor = db): Promise<OutboxJob | undefined> {
      return tx.selectFrom("outbox_jobs").selectAll().where("id", "=", id).executeTakeFirst();
    },

    /**
     * Claims due jobs whose lease is free or expired (a worker that died loses its jobs this way).
     * One statement, so two claimers never take the same job. The claim counts the attempt: one
     * whose worker dies mid-delivery is never settled, and must still use up the retry budget.
     */
    async claimDue(
      lease: Lease,
      limit: number,
      tx: Executor = db,
      kinds: { only?: readonly JobKind[]; except?: readonly JobKind[] } = {},
    ): Promise<OutboxJob[]> {
      return tx
        .updateTable("outbox_jobs")
        .set((eb) => ({
          lease_owner: lease.owner,
          lease_expires_at: lease.until,
          attempts: eb("attempts", "+", 1),
        }))
        .where("id", "in", (eb) =>
          eb
            .selectFrom("outbox_jobs")
            .select("id")
            .where("state", "=", "pending")
            .where("next_attempt_at", "<=", lease.now)
            .where((w) => w.or([w("lease_expires_at", "is", null), w("lease_expires_at", "<", lease.now)]))
            .$if(kinds.only !== undefined, (q) => q.where("kind", "in", kinds.only as JobKind[]))
            .$if(kinds.except !== undefined, (q) => q.where("kind", "not in", kinds.except as JobKind[]))
            .orderBy("next_attempt_at")
            .limit(limit)
            // PostgreSQL: concurrent claimers skip each other's rows instead of taking them twice.
            .$if(engineOf(db) === "postgres", (q) => q.forUpdate().skipLocked()),
        )
        .returningAll()
        .execute();
    },

    /** Claims one job now, due or not, unless another worker holds it; counts the attempt too. */
    async claim(id: number, lease: Lease, tx: Executor = db): Promise<OutboxJob | undefined> {
      return tx
        .updateTable("outbox_jobs")
        .set((eb) => ({
          lease_owner: lease.owner,
          lease_expires_at: lease.until,
          attempts: eb("attempts", "+", 1),
        }))
        .where("id", "=", id)
        .where("state", "=", "pending")
        .where((w) => w.or([w("lease_expires_at", "is", null), w("lease_expires_at", "<", lease.now)]))
        .returningAll()
        .executeTakeFirst();
    },

    /**
     * Finishes a job the caller still holds; false when its lease was lost (another worker took the
     * job over and its outcome is the one that counts).
     */
    async settle(
      id: number,
      owner: string,
      change: Partial<Pick<OutboxJobTable, "state" | "next_attempt_at" | "last_error">> & {
        attempts: number;
        updated_at: string;
      },
      tx: Executor = db,
    ): Promise<boolean> {
      const result = await tx
        .updateTable("outbox_jobs")
        .set({ ...change, lease_owner: null, lease_expires_at: null })
        .where("id", "=", id)
        .where("lease_owner", "=", owner)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Failed jobs of a kind (and of one invoice) pending again with a fresh budget; how many. */
    async requeueFailed(
      kind: JobKind,
      irn: string | undefined,
      now: string,
      tx: Executor = db,
    ): Promise<number> {
      const result = await tx
        .updateTable("outbox_jobs")
        .set({ state: "pending", attempts: 0, next_attempt_at: now, updated_at: now })
        .where("state", "=", "failed")
        .where("kind", "=", kind)
        .$if(irn !== undefined, (q) => q.where("irn", "=", irn as string))
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    /** Gives back the jobs of a stopping worker, so others need not wait for the leases to expire. */
    async release(owner: string, tx: Executor = db): Promise<number> {
      const result = await tx
        .updateTable("outbox_jobs")
        .set({ lease_owner: null, lease_expires_at: null })
        .where("lease_owner", "=", owner)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async stats(now: string) {
      const rows = await db
        .selectFrom("outbox_jobs")
        .select((eb) => [
          "kind",
          "state",
          eb.fn.countAll<number>().as("count"),
          eb.fn.min("created_at").as("oldest"),
          eb.fn
            .sum<number>(eb.case().when("lease_expires_at", ">", now).then(1).else(0).end())
            .as("in_flight"),
        ])
        .groupBy(["kind", "state"])
        .execute();
      return rows.map((r) => ({
        kind: r.kind as JobKind,
        state: r.state,
        count: Number(r.count),
        in_flight: Number(r.in_flight ?? 0),
        oldest: r.oldest as string | null,
      }));
    },
  };
}

export type OutboxRepository = ReturnType<typeof outboxRepository>;
