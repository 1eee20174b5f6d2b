import { type Kysely, sql } from "kysely";
import type { Database } from "../db/schema.ts";
import type { SharedCounts } from "./rate-counter.ts";

/**
 * The rate-limit counts of every API process on one PostgreSQL database (table rate_limit_hits).
 * Two statements per exchange whatever the number of keys: the keys travel as arrays.
 */
export function rateLimitStore(db: Kysely<Database>): SharedCounts {
  return {
    async exchange(added, keys, from) {
      if (added.length > 0) {
        // One order for every process, so two concurrent upserts never wait on each other's rows
        // in opposite orders (a deadlock).
        const rows = [...added].sort((a, b) =>
          a.key < b.key ? -1 : a.key > b.key ? 1 : a.bucket - b.bucket,
        );
        await sql`insert into rate_limit_hits (key, bucket, hits)
          select * from unnest(${rows.map((r) => r.key)}::text[], ${rows.map((r) => r.bucket)}::bigint[],
            ${rows.map((r) => r.hits)}::bigint[])
          on conflict (key, bucket) do update set hits = rate_limit_hits.hits + excluded.hits`.execute(db);
      }
      const totals = await sql<{ key: string; bucket: string; hits: string }>`
        select key, bucket, hits from rate_limit_hits
        where key = any(${[...keys]}::text[]) and bucket >= ${from}`.execute(db);
      // bigint arrives as text from pg.
      return totals.rows.map((r) => ({ key: r.key, bucket: Number(r.bucket), hits: Number(r.hits) }));
    },
    async prune(before) {
      await db.deleteFrom("rate_limit_hits").where("bucket", "<", before).execute();
    },
  };
}
