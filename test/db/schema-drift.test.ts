import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { type Kysely, sql } from "kysely";
import ts from "typescript";
import { loadConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/database.ts";
import { migrateToLatest } from "../../src/db/migrations.ts";
import { ENGINE, freshDatabase, REPO_ROOT, tempDir } from "../helpers.ts";

/*
 * src/db/schema.ts is what every query is type-checked against; the migrations are what the database
 * holds. Nothing else ties the two: a column added by a migration and not to schema.ts is invisible to
 * the repositories, one added to schema.ts and not by a migration compiles and fails at run time, and a
 * nullability that differs lets the code skip a null check the database can break. So the interfaces
 * are read with the compiler, and compared with what the migrations build on this engine.
 */

type Column = { nullable: boolean; family: Family };
/** What a column holds as the code sees it: enough to tell a number kept as text from one as integer. */
type Family = "text" | "integer" | "bytes" | "other";
type Tables = Map<string, Map<string, Column>>;

const SCHEMA_TS = path.join(REPO_ROOT, "src", "db", "schema.ts");

/** The `Database` interface of schema.ts: each table, each column, its nullability and family. */
function declaredTables(): Tables {
  const configFile = ts.readConfigFile(path.join(REPO_ROOT, "tsconfig.json"), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, REPO_ROOT);
  const program = ts.createProgram([SCHEMA_TS], { ...options, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(SCHEMA_TS);
  assert.ok(source, "schema.ts is read");
  const database = source.statements.find(
    (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === "Database",
  );
  assert.ok(database, "schema.ts declares the Database interface");

  const tables: Tables = new Map();
  for (const table of checker.getPropertiesOfType(checker.getTypeAtLocation(database))) {
    const columns = new Map<string, Column>();
    for (const column of checker.getPropertiesOfType(checker.getTypeOfSymbol(table))) {
      let type = checker.getTypeOfSymbol(column);
      // Generated<T> and ColumnType<S, I, U>: what a select reads is S, the row as stored.
      const selected = type.getProperty("__select__");
      if (selected) type = checker.getTypeOfSymbol(selected);
      const parts = type.isUnion() ? type.types : [type];
      const nullable = parts.some((p) => (p.flags & ts.TypeFlags.Null) !== 0);
      const kinds = new Set(
        parts
          .filter((p) => (p.flags & ts.TypeFlags.Null) === 0)
          .map((p): Family => {
            if (p.flags & ts.TypeFlags.StringLike) return "text";
            if (p.flags & ts.TypeFlags.NumberLike) return "integer";
            if (p.getSymbol()?.name === "Buffer") return "bytes";
            return "other";
          }),
      );
      // `number | string`: a bigint that PostgreSQL's driver reads as text.
      const family: Family =
        kinds.size === 1 ? ([...kinds][0] as Family) : kinds.has("integer") ? "integer" : "other";
      columns.set(column.name, { nullable, family });
    }
    tables.set(table.name, columns);
  }
  return tables;
}

const FAMILIES: Record<string, Family> = {
  text: "text",
  integer: "integer",
  bigint: "integer",
  int4: "integer",
  int8: "integer",
  blob: "bytes",
  bytea: "bytes",
};

/** The tables the migrations built on this engine, as Kysely's introspection sees them. */
async function migratedTables(db: Kysely<unknown>): Promise<{ tables: Tables; skipped: string[] }> {
  const skipped: string[] = [];
  let schema: string | undefined;
  let notNullKeys = new Set<string>();
  if (ENGINE === "postgres") {
    // The introspection lists every schema of the database: other tests' are there too.
    schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s;
  } else {
    // SQLite's full-text index is a virtual table with shadow tables that hold its structure, not
    // rows the service reads or writes through Kysely: queries reach it in raw SQL.
    const list = await sql<{ name: string; type: string }>`select name, type from pragma_table_list`.execute(
      db,
    );
    skipped.push(...list.rows.filter((r) => r.type === "virtual" || r.type === "shadow").map((r) => r.name));
    // SQLite lets a primary key column other than INTEGER PRIMARY KEY hold NULL, for compatibility
    // with its first versions; the service never writes one there and PostgreSQL refuses it. Such a
    // column is read as NOT NULL, as the PostgreSQL run checks it.
    const keys = await sql<{ t: string; c: string }>`
      select m.name as t, p.name as c from sqlite_master m, pragma_table_info(m.name) p
      where m.type = 'table' and p.pk > 0`.execute(db);
    notNullKeys = new Set(keys.rows.map((r) => `${r.t}.${r.c}`));
  }
  const tables: Tables = new Map();
  for (const table of await db.introspection.getTables()) {
    if (schema !== undefined && table.schema !== schema) continue;
    if (skipped.includes(table.name)) continue;
    const columns = new Map<string, Column>();
    for (const c of table.columns) {
      columns.set(c.name, {
        nullable: c.isNullable && !notNullKeys.has(`${table.name}.${c.name}`),
        family: FAMILIES[c.dataType.toLowerCase()] ?? "other",
      });
    }
    tables.set(table.name, columns);
  }
  return { tables, skipped };
}

const describe = (c: Column) => `${c.family}${c.nullable ? " null" : " not null"}`;

test(`schema.ts describes exactly the tables and columns the migrations build on ${ENGINE}`, async (t) => {
  const dir = tempDir(t);
  const database = await freshDatabase(dir);
  const config = loadConfig({ EINVOICE_DATABASE_URL: database.url, EINVOICE_DATA_DIR: dir });
  const db = openDatabase(config.database, config);
  t.after(async () => {
    await db.destroy();
    await database.drop();
  });
  await migrateToLatest(db);
  const { tables: built, skipped } = await migratedTables(db as unknown as Kysely<unknown>);
  const declared = declaredTables();
  if (ENGINE === "sqlite")
    assert.ok(skipped.includes("product_trigrams"), "the full-text index is told apart");

  // The comparison is a list of differences, so one run names every drift at once.
  const drift: string[] = [];
  for (const [table, columns] of declared) {
    const got = built.get(table);
    if (!got) {
      drift.push(`${table}: in schema.ts, not built by the migrations`);
      continue;
    }
    for (const [name, want] of columns) {
      const have = got.get(name);
      if (!have) drift.push(`${table}.${name}: in schema.ts, not built by the migrations`);
      else if (have.nullable !== want.nullable || have.family !== want.family)
        drift.push(`${table}.${name}: schema.ts says ${describe(want)}, the database has ${describe(have)}`);
    }
    for (const name of got.keys()) {
      if (!columns.has(name)) drift.push(`${table}.${name}: built by the migrations, not in schema.ts`);
    }
  }
  for (const table of built.keys()) {
    if (!declared.has(table)) drift.push(`${table}: built by the migrations, not in schema.ts`);
  }
  assert.deepEqual(drift, [], "src/db/schema.ts and the migrations disagree");

  // The comparison saw the real thing on both sides, not two empty lists.
  assert.ok(declared.size >= 17, `schema.ts has its tables (${declared.size})`);
  assert.deepEqual([...built.keys()].sort(), [...declared.keys()].sort());
  assert.deepEqual(built.get("invoices")?.get("chain_seq"), { nullable: true, family: "integer" });
  assert.deepEqual(declared.get("invoices")?.get("irn"), { nullable: false, family: "text" });
  assert.deepEqual(declared.get("businesses")?.get("chain_head"), { nullable: true, family: "text" });
});
