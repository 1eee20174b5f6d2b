import fs from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, SqliteDialect, type Transaction } from "kysely";
import type { Config } from "../config.ts";
import type { Database } from "./schema.ts";

export type Db = Kysely<Database>;
/** Either the root handle or an open transaction: every repository method accepts both. */
export type Executor = Kysely<Database> | Transaction<Database>;

export function openDatabase(database: Config["database"]): Db {
  if (database.engine !== "sqlite") {
    throw new Error("PostgreSQL support is not available in this version; use a sqlite: URL");
  }
  if (database.file !== ":memory:") fs.mkdirSync(path.dirname(database.file), { recursive: true });
  const sqlite = new SQLite(database.file);
  // WAL lets readers run beside the single writer; FULL sync keeps every acknowledged commit on disk
  // across power loss, not only across a process crash; the busy timeout lets the CLI and the server
  // share one file.
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = FULL");
  sqlite.pragma("busy_timeout = 5000");
  sqlite.pragma("foreign_keys = ON");
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
}
