import type { ColumnDefinitionBuilder, Kysely } from "kysely";
import { engineOf } from "./database.ts";

/** An integer key the database assigns: identity on PostgreSQL, rowid alias on SQLite. */
export function generatedId(db: Kysely<unknown>) {
  return (column: ColumnDefinitionBuilder) =>
    engineOf(db) === "postgres"
      ? column.primaryKey().generatedByDefaultAsIdentity()
      : column.primaryKey().autoIncrement();
}
