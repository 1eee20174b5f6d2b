import { type Kysely, sql } from "kysely";
import { engineOf } from "./database.ts";

/**
 * 0019: a counter that moves, in the same transaction, with every change to `api_keys`, so a
 * process that keeps credentials in memory can tell by reading one row that none changed since it
 * last looked (active-keys.ts). Triggers move it, so it moves for every writer: this service, its
 * CLI, and an operator's own SQL. On PostgreSQL it is what lets credentials be kept at all (SQLite
 * has `data_version`, which moves with any commit); there, one read every 50 ms per process
 * replaces a read on every request, half of a sign's statements. On PostgreSQL a statement-level
 * trigger (a change of many keys moves it once); on SQLite one a row. A transaction that changes a
 * key holds the counter's row until it commits, so writers of api_keys take turns.
 */
export async function credentialChanges0019(db: Kysely<unknown>): Promise<void> {
  const postgres = engineOf(db) === "postgres";
  await db.schema
    .createTable("credential_changes")
    .addColumn("id", "integer", (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn("version", postgres ? "bigint" : "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`insert into credential_changes (id, version) values (1, 0)`.execute(db);
  if (postgres) {
    // The counter is the one beside the table that changed (`tg_table_schema`), whatever search
    // path, role or schema name the writer has: a search path kept as text ("$user", public) would
    // resolve per role and could move another install's counter. It runs as its owner, so a role
    // that may write api_keys need not be granted the counter too.
    await sql`
      create function credential_changed() returns trigger language plpgsql
      security definer set search_path = pg_catalog as $$
      begin
        execute format('update %I.credential_changes set version = version + 1 where id = 1', tg_table_schema);
        return null;
      end $$`.execute(db);
    await sql`
      create trigger api_keys_changed after insert or update or delete or truncate on api_keys
      for each statement execute function credential_changed()`.execute(db);
    return;
  }
  // SQLite reads data_version instead (free, and it moves with any commit elsewhere); the same
  // table and triggers there keep the two schemas alike and the counter true on either engine.
  for (const event of ["insert", "update", "delete"]) {
    await sql`
      create trigger ${sql.raw(`api_keys_${event}d`)} after ${sql.raw(event)} on api_keys
      begin
        update credential_changes set version = version + 1 where id = 1;
      end`.execute(db);
  }
}
