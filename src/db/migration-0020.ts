import { type Kysely, sql } from "kysely";
import { engineOf } from "./database.ts";

/**
 * 0020 (PostgreSQL only): an invoice's row kept whole in its table. By default PostgreSQL starts
 * moving a row's long values out once the row passes about 2 kB: the full sample invoice's row is
 * 3.6 kB, its document 2.5 kB of it, so every sign compressed the document with pglz (6.5% of
 * PostgreSQL's CPU under load, its heaviest function), and the row, still 2.4 kB after that, had its
 * document moved to the TOAST table: a second heap row and index entry written with every sign,
 * and read back with every record. From 3,000 bytes on, a row's document is compressed with lz4
 * (several times pglz's speed, where the server has it: Debian's and the official images do), and
 * the full sample's row stays whole at about 2.5 kB; a document too large for that still moves out
 * as before. The table takes the same room (2.77 kB a row against 2.85 kB, table and TOAST, for the
 * full sample). The price is paid on a row's later updates (status, payments): each writes the row
 * whole again, 2.5 kB where a moved document left 1.2 kB, once or a few times in an invoice's life
 * and off the sign's path. It applies to rows written from now on; rows written before read as
 * they are.
 */
export async function invoiceRows0020(db: Kysely<unknown>): Promise<void> {
  if (engineOf(db) !== "postgres") return;
  await sql`alter table invoices set (toast_tuple_target = 3000)`.execute(db);
  const { rows } = await sql<{ lz4: boolean }>`
    select 'lz4' = any(enumvals) as lz4
    from pg_settings where name = 'default_toast_compression'`.execute(db);
  if (rows[0]?.lz4) await sql`alter table invoices alter column document set compression lz4`.execute(db);
}
