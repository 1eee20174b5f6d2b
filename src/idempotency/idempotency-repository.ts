import { CompiledQuery, sql } from "kysely";
import { chunksFor, compiledOnce, type Lead, type Statement } from "../db/batch-statements.ts";
import { type Db, type Executor, engineOf } from "../db/database.ts";
import { PLANNED_EACH_TIME } from "../db/postgres-statements.ts";
import type { IdempotencyKeyTable } from "../db/schema.ts";
import type { KeptAnswer } from "./answers.ts";
import {
  inBusinessOrder,
  type UsageStatements,
  usageStatements,
  usageUpsertText,
} from "./usage-statements.ts";

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

/**
 * The claims one statement of `insertClaims` holds, and the most a turn's claims are made in one
 * call of `claimWithin` (one statement on PostgreSQL whatever their count).
 */
export const CLAIMS_PER_STATEMENT = 64;

/** A key's primary key, from anything that names one. */
const byId = (id: KeyId) => ({ business_id: id.business_id, idempotency_key: id.idempotency_key }) as const;

/** The columns of a key's answer, in the order `answerUpdateText` takes their values. */
const ANSWER_COLUMNS = [
  "status",
  "retry_after",
  "response",
  "response_gzip",
  "response_bytes",
  "response_sha256",
  "replay",
] as const satisfies readonly (keyof Answer)[];

/** A key's answer stored where its claim still holds it: the answer's values, then the key's and claim's. */
function answerUpdateText(tx: Executor): string {
  return compiledOnce(`${engineOf(tx)}\u0000idempotency answer`, () => {
    const answer = Object.fromEntries(ANSWER_COLUMNS.map((column) => [column, null]));
    return tx
      .updateTable("idempotency_keys")
      .set(answer)
      .where("business_id", "=", "")
      .where("idempotency_key", "=", "")
      .where("claim", "=", "")
      .compile().sql;
  });
}

/** Storing the answers of the requests that hold their keys, with the bytes they keep. */
function answerStatements(db: Db, usage: UsageStatements) {
  /** Stores the answer of the request whose claim still holds the key; false when it lost it. */
  const complete = async (
    id: KeyId & Pick<KeyRow, "claim">,
    answer: Answer,
    tx: Executor = db,
  ): Promise<boolean> => {
    const { business_id, idempotency_key } = byId(id);
    const result = await tx
      .updateTable("idempotency_keys")
      .set(answer)
      .where("business_id", "=", business_id)
      .where("idempotency_key", "=", idempotency_key)
      .where("claim", "=", id.claim)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  };
  return {
    /**
     * The writes that store the answers of several requests in a transaction of the caller's, among
     * its own writes (executeTogether): each answer where its claim still holds its key, and one
     * upsert of the bytes they keep, by business in the order of their ids (as `addUsages`). A
     * key's update finds its row by the whole primary key: planned once for a table still empty, it
     * still takes the index (where `storeAnswers`' join is planned each time). Their answers are not
     * read: an answer whose claim was taken over meanwhile is not stored, and its bytes are counted
     * all the same (a claim is taken over only after `STALE_CLAIM_MS`). An answer `inserted` with
     * its claim, earlier in the transaction (`claimsLead`), is only counted.
     */
    answerWrites(
      items: readonly {
        id: KeyId & Pick<KeyRow, "claim">;
        answer: Answer;
        bytes: number;
        inserted?: boolean;
      }[],
      slot: number,
      tx: Executor,
    ): Statement[] {
      const update = answerUpdateText(tx);
      const writes: Statement[] = items.flatMap(({ id, answer, inserted }) =>
        inserted
          ? []
          : [
              CompiledQuery.raw(update, [
                ...ANSWER_COLUMNS.map((column) => answer[column]),
                id.business_id,
                id.idempotency_key,
                id.claim,
              ]),
            ],
      );
      const counted = new Map<string, number>();
      for (const { id, bytes } of items)
        if (bytes > 0) counted.set(id.business_id, (counted.get(id.business_id) ?? 0) + bytes);
      if (counted.size === 0) return writes;
      const parameters: unknown[] = [];
      for (const [businessId, bytes] of [...counted].sort(([a], [b]) => inBusinessOrder(a, b)))
        parameters.push(businessId, slot, bytes);
      writes.push(CompiledQuery.raw(usageUpsertText(tx, counted.size), parameters));
      return writes;
    },

    /**
     * Stores the answers of several requests, each only where its claim still holds its key (for
     * each, false when it lost it), and counts the bytes of those stored for their businesses'
     * quota in `slot`. On PostgreSQL one statement, the rows as arrays (a round trip per answer was
     * most of what a batch of them cost there), the usage counted from the rows the update stored:
     * atomic by itself, it needs no transaction around it (`alone`). On SQLite a statement an
     * answer, then `addUsages`, in the caller's transaction.
     */
    async storeAnswers(
      items: readonly { id: KeyId & Pick<KeyRow, "claim">; answer: Answer; bytes: number }[],
      slot: number,
      tx: Executor = db,
    ): Promise<boolean[]> {
      if (items.length === 0) return [];
      if (engineOf(tx) !== "postgres") {
        const stored: boolean[] = [];
        for (const { id, answer } of items) stored.push(await complete(id, answer, tx));
        const counted = new Map<string, number>();
        items.forEach(({ id, bytes }, i) => {
          if (stored[i] && bytes > 0) counted.set(id.business_id, (counted.get(id.business_id) ?? 0) + bytes);
        });
        await usage.addUsages(
          [...counted].map(([businessId, bytes]) => ({ businessId, slot, bytes })),
          tx,
        );
        return stored;
      }
      const column = <K extends keyof Answer>(name: K) => items.map(({ answer }) => answer[name] ?? null);
      // The usage rows are inserted in the order of the business ids, so that two processes'
      // statements never wait on each other's rows in opposite orders (a deadlock).
      // Planned afresh each time (PLANNED_EACH_TIME): the update looks its keys up in a table that
      // grows by a row a keyed request.
      const result = await sql<{ claim: string }>`${sql.raw(PLANNED_EACH_TIME)}with v as (
          select * from unnest(${items.map(({ id }) => id.business_id)}::text[], ${items.map(({ id }) => id.idempotency_key)}::text[],
            ${items.map(({ id }) => id.claim)}::text[], ${column("status")}::integer[], ${column("retry_after")}::integer[],
            ${column("response")}::text[], ${column("response_gzip")}::bytea[], ${column("response_bytes")}::integer[],
            ${column("response_sha256")}::text[], ${column("replay")}::text[], ${items.map(({ bytes }) => bytes)}::bigint[])
            as v(business_id, idempotency_key, claim, status, retry_after, response, response_gzip, response_bytes,
              response_sha256, replay, bytes)
        ), stored as (
          update idempotency_keys as k set status = v.status,
            retry_after = v.retry_after, response = v.response, response_gzip = v.response_gzip,
            response_bytes = v.response_bytes, response_sha256 = v.response_sha256, replay = v.replay
          from v
          where k.business_id = v.business_id and k.idempotency_key = v.idempotency_key and k.claim = v.claim
          returning k.claim, k.business_id, v.bytes
        ), counted as (
          insert into idempotency_usage (business_id, slot, bytes)
          select business_id, ${slot}::integer, sum(bytes) from stored where bytes > 0
          group by business_id order by business_id
          on conflict (business_id, slot) do update set bytes = idempotency_usage.bytes + excluded.bytes
        )
        select claim from stored`.execute(tx);
      const stored = new Set(result.rows.map((row) => row.claim));
      return items.map(({ id }) => stored.has(id.claim));
    },
  };
}

/**
 * With `flush: false`, a condition that sets `synchronous_commit` off for the statement's own
 * transaction, where there is no transaction around it to `set local` in: PostgreSQL decides
 * whether a commit waits for its log to reach the disk by the setting in force when it commits, and
 * `set_config(…, true)` holds until the end of the transaction. The condition is a one-time filter,
 * evaluated once whatever the rows, and always true.
 */
const unflushed = (options: { flush?: boolean }) =>
  options.flush === false
    ? sql` where (select set_config('synchronous_commit', 'off', true)) = 'off'`
    : sql``;

/**
 * PostgreSQL's WITH clauses that claim keys where their businesses' quota leaves room: `used`, what
 * each row's business keeps in the slots from `fromSlot` on (its bytes and oldest slot), and
 * `claimed`, the claims inserted (their `claim` tokens), each with its row's answer when it has one
 * (a claim made with the work it answers: `claimsLead`). The rows go in ordered by key, so that two
 * statements claiming the same keys wait on each other in one order, never in a cycle (a deadlock:
 * PostgreSQL would abort one); of two claims of one key, the first given wins (`ordinality`).
 */
function claimClauses(rows: readonly KeyRow[], quota: { fromSlot: number; quotaBytes: number }) {
  const column = <K extends keyof KeyRow>(name: K) => rows.map((row) => row[name]);
  const businessIds = [...new Set(column("business_id"))];
  return sql`used as (
      select business_id, sum(bytes) as bytes, min(slot) as oldest from idempotency_usage
      where business_id = any(${businessIds}::text[]) and slot >= ${quota.fromSlot}::integer
      group by business_id
    ), claimed as (
      insert into idempotency_keys (business_id, idempotency_key, route, fingerprint, claim, created_at, status, response)
      select v.business_id, v.idempotency_key, v.route, v.fingerprint, v.claim, v.created_at, v.status, v.response
      from unnest(${column("business_id")}::text[], ${column("idempotency_key")}::text[], ${column("route")}::text[],
        ${column("fingerprint")}::text[], ${column("claim")}::text[], ${column("created_at")}::text[],
        ${column("status")}::integer[], ${column("response")}::text[])
        with ordinality as v(business_id, idempotency_key, route, fingerprint, claim, created_at, status, response, ord)
      where coalesce((select used.bytes from used where used.business_id = v.business_id), 0) < ${quota.quotaBytes}::bigint
      order by v.business_id, v.idempotency_key, v.ord
      on conflict (business_id, idempotency_key) do nothing
      returning claim
    )`;
}

/** Claiming keys nobody holds, alone or with their businesses' quota checked in the same statement. */
function claimStatements(db: Db, usage: UsageStatements) {
  const insertClaims = async (rows: readonly KeyRow[], tx: Executor = db): Promise<boolean[]> => {
    const won = new Set<string>();
    for (const chunk of chunksFor(tx, rows, CLAIMS_PER_STATEMENT)) {
      const inserted = await tx
        .insertInto("idempotency_keys")
        .values(chunk)
        .onConflict((oc) => oc.columns(["business_id", "idempotency_key"]).doNothing())
        .returning("claim")
        .execute();
      for (const { claim } of inserted) won.add(claim);
    }
    return rows.map((row) => won.has(row.claim));
  };

  /**
   * The quota check and the claims of one turn of the event loop together: what each row's
   * business keeps in the slots from `fromSlot` on (as `usages`), and its claim made only where
   * that is under `quotaBytes` (as `insertClaims`: false when the key is held, or its business's
   * quota is full). On PostgreSQL one statement, the rows as arrays: the quota read was a round
   * trip of its own, before the claims' one, that every keyed request waited for. On SQLite the
   * two in turn, in the caller's transaction. With `flush: false` on PostgreSQL the transaction
   * the statement runs in commits without waiting for the disk (`unflushed`): the statement's own
   * when it runs alone, the whole of the caller's when it runs in one.
   */
  async function claimWithin(
    rows: readonly KeyRow[],
    quota: { fromSlot: number; quotaBytes: number },
    tx: Executor = db,
    options: { flush?: boolean } = {},
  ): Promise<Array<{ won: boolean; bytes: number; oldest: number | null }>> {
    if (rows.length === 0) return [];
    const businessIds = rows.map((row) => row.business_id);
    if (engineOf(tx) !== "postgres") {
      const used = await usage.usages(businessIds, quota.fromSlot, tx);
      const room = rows.filter((_, i) => (used[i]?.bytes ?? 0) < quota.quotaBytes);
      const won = new Set((await insertClaims(room, tx)).flatMap((ok, i) => (ok ? [room[i]?.claim] : [])));
      return rows.map((row, i) => ({
        won: won.has(row.claim),
        ...(used[i] as { bytes: number; oldest: number | null }),
      }));
    }
    const result = await sql<{
      claim: string | null;
      business_id: string | null;
      bytes: string | null;
      oldest: number | null;
    }>`with ${claimClauses(rows, quota)}
      select claim, null as business_id, null as bytes, null::integer as oldest from claimed
      union all select null, business_id, bytes::text, oldest from used${unflushed(options)}`.execute(tx);
    const won = new Set<string>();
    const used = new Map<string, { bytes: number; oldest: number | null }>();
    for (const row of result.rows) {
      if (row.claim !== null) won.add(row.claim);
      else if (row.business_id !== null)
        used.set(row.business_id, { bytes: Number(row.bytes ?? 0), oldest: row.oldest });
    }
    return rows.map((row) => ({
      won: won.has(row.claim),
      ...(used.get(row.business_id) ?? { bytes: 0, oldest: null }),
    }));
  }

  return {
    insertClaims,
    claimWithin,

    /**
     * The claims of keys made in the transaction of the work they answer, each row with its answer,
     * where their businesses' quota leaves room (as `claimWithin`): the statement to run first, in
     * the batch's reads (`readLed`), answering the claims won. A key already held, even by a
     * transaction not yet committed, is not claimed (PostgreSQL waits for that one's end first).
     */
    claimsLead(rows: readonly KeyRow[], quota: { fromSlot: number; quotaBytes: number }): Lead<Set<string>> {
      return {
        clauses: claimClauses(rows, quota),
        query: sql`select claim from claimed`,
        answer: (found) => new Set(found.map((row) => String(row.claim))),
        runFirst: async (tx) => {
          const won = await claimWithin(rows, quota, tx);
          return new Set(rows.flatMap((row, i) => (won[i]?.won ? [row.claim] : [])));
        },
      };
    },
  };
}

export function idempotencyRepository(db: Db) {
  const usage = usageStatements(db);
  return {
    ...usage,
    ...answerStatements(db, usage),
    ...claimStatements(db, usage),

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
