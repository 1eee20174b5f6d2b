import { CompiledQuery, type RawBuilder, sql } from "kysely";
import { chunksFor, compiledByCount, compiledOnce, type Read } from "../db/batch-statements.ts";
import { type Db, type Executor, engineOf } from "../db/database.ts";
import type { ApiKeyTable, Business, NewBusinessRow } from "../db/schema.ts";

/** Where a business's hash chain ends: the hash of its latest signed invoice and the chain's length. */
export type ChainHead = { id: string; chain_head: string | null; chain_length: number };

/**
 * The statements that move the heads of several chains (one a chunk), to run with others
 * (executeTogether). Each text is compiled once for its engine and number of chains (compiledOnce):
 * built for every batch, its nodes and frozen objects took as much of a sign batch's event loop as
 * its inserts' once did.
 */
function chainHeadUpdates(heads: readonly ChainHead[], tx: Executor): CompiledQuery[] {
  return chunksFor(tx, heads).map((chunk) => {
    const text = compiledOnce(`${engineOf(tx)}\u0000chain heads\u0000${chunk.length}`, () => {
      const cases = (value: (head: ChainHead) => RawBuilder<unknown>) =>
        sql.join(
          chunk.map((head) => sql`when ${head.id} then ${value(head)}`),
          sql` `,
        );
      return sql`update businesses
        set chain_head = case id ${cases((head) => sql`cast(${head.chain_head} as text)`)} end,
          chain_length = case id ${cases((head) => sql`cast(${head.chain_length} as integer)`)} end
        where id in (${sql.join(chunk.map((head) => head.id))})`.compile(tx).sql;
    });
    // The values in the text's order: each head's id and hash, each id and length, then the ids.
    const parameters: unknown[] = [];
    for (const head of chunk) parameters.push(head.id, head.chain_head);
    for (const head of chunk) parameters.push(head.id, head.chain_length);
    for (const head of chunk) parameters.push(head.id);
    return CompiledQuery.raw(text, parameters);
  });
}

export function businessRepository(db: Db) {
  function chainsLock(ids: readonly string[], tx: Executor): Read<ChainHead[]> {
    // FOR NO KEY UPDATE, the lock the update of the chain's head takes anyway: it keeps other
    // batches off the chain, but not a row that merely names the business (its foreign key takes
    // FOR KEY SHARE). FOR UPDATE made every such insert wait for the batch's commit: an
    // Idempotency-Key's claim took 8.0-11.9 ms with it, 3.9-5.9 without, of a keyed sign's 27-37
    // ms at the median (PostgreSQL, 2 processes, one business).
    const query = compiledByCount(tx, "chains lock", ids, () => {
      const built = tx
        .selectFrom("businesses")
        .select(["id", "chain_head", "chain_length"])
        .where("id", "in", ids)
        .orderBy("id");
      return engineOf(tx) === "postgres" ? built.forNoKeyUpdate() : built;
    });
    return {
      query,
      answer: (rows) =>
        rows.map((row) => ({
          id: row.id as string,
          chain_head: row.chain_head as string | null,
          chain_length: Number(row.chain_length),
        })),
    };
  }
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
     * The heads of these businesses' hash chains (at least one), locked until the transaction ends:
     * a row lock on PostgreSQL (taken in id order, so two batches never wait on each other in a
     * cycle), the write lock the transaction already holds on SQLite. The signs of one business are
     * serialized here. A read built and not run, to be run with others (readTogether).
     */
    chainsLock,
    /** Moves the heads of several chains, run with the batch's other writes (executeTogether). */
    chainHeadUpdates,
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
    /** A business's credentials, newest first: keys and dates, never the secrets' hashes. */
    async keysOf(businessId: string, tx: Executor = db) {
      return tx
        .selectFrom("api_keys")
        .select(["api_key", "created_at", "revoked_at"])
        .where("business_id", "=", businessId)
        .orderBy("created_at", "desc")
        .orderBy("api_key")
        .execute();
    },
    async findKey(apiKey: string, tx: Executor = db): Promise<ApiKeyTable | undefined> {
      return tx.selectFrom("api_keys").selectAll().where("api_key", "=", apiKey).executeTakeFirst();
    },
    /**
     * The counter every change to `api_keys` moves (migration-0019.ts), as a number; undefined when
     * it cannot be read (the database unreachable, say): then nothing is vouched for.
     */
    async credentialsVersion(): Promise<number | undefined> {
      try {
        const row = await db
          .selectFrom("credential_changes")
          .select("version")
          .where("id", "=", 1)
          .executeTakeFirst();
        return row === undefined ? undefined : Number(row.version);
      } catch {
        return undefined;
      }
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
