import fs from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresDialect,
  type SqliteDatabase,
  SqliteDialect,
  SqliteDriver,
  type Transaction,
} from "kysely";
import pg from "pg";
import type { Config } from "../config.ts";
import { SAFETY_WAL_BYTES } from "./checkpointer.ts";
import { preparingPool } from "./postgres-statements.ts";
import type { Database } from "./schema.ts";

export type Db = Kysely<Database>;
/** Either the root handle or an open transaction: every repository method accepts both. */
export type Executor = Kysely<Database> | Transaction<Database>;
export type Engine = "sqlite" | "postgres";

/**
 * Which engine a handle (or a transaction of it) talks to, for the few statements that differ.
 * (COUNT and SUM are bigint in PostgreSQL, which pg returns as text: callers wrap them in Number().)
 */
export function engineOf(db: Pick<Kysely<unknown>, "getExecutor">): Engine {
  return db.getExecutor().adapter instanceof PostgresAdapter ? "postgres" : "sqlite";
}

export function openDatabase(
  database: Config["database"],
  options: Pick<Config, "dbPool"> & { checkpointer?: boolean } = { dbPool: defaultPool },
): Db {
  let db: Db;
  if (database.engine === "postgres") {
    const pool = new pg.Pool({
      connectionString: database.url,
      max: options.dbPool.size,
      statement_timeout: options.dbPool.statementTimeoutMs,
      idle_in_transaction_session_timeout: options.dbPool.statementTimeoutMs * 2,
      // pg's pipeline mode: a query is sent without waiting for the answer to the one before it.
      // Kysely still waits for each; only a transaction's `begin`, and a write whose answer is not
      // read, are not waited for (postgres-statements.ts): each goes with the statement after it.
      pipeline: true,
    });
    // An idle connection the server drops (restart, failover) must not take the process down: the
    // pool discards it and the next query connects afresh.
    pool.on("error", () => {});
    // The same for a connection dropped while checked out but between statements (inside a
    // transaction, say): pg emits that on the client, where no listener means an uncaught error.
    // The statement that follows fails, and the pool discards the connection when it comes back.
    pool.on("connect", (client) => client.on("error", () => {}));
    db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: preparingPool(pool, options.dbPool.preparedKb * 1024) }),
    });
  } else {
    if (database.file !== ":memory:") fs.mkdirSync(path.dirname(database.file), { recursive: true });
    const sqlite = new SQLite(database.file);
    // A new database gets 8 KiB pages instead of SQLite's 4 KiB. An invoice's row (about 3.5 kB for
    // the full sample invoice) fills a 4 KiB page by itself, so every sign split a table page and
    // wrote one of its own to the WAL; an 8 KiB page holds two, and a batch writes half the frames.
    // Measured with `bench:limit` at a steady 2,500 signs/s: 459-463 µs of CPU a sign against
    // 480-491 (16 KiB: 467-468). A database made before keeps its pages: once in WAL mode the size
    // cannot change, and the pragma does nothing.
    sqlite.pragma(`page_size = ${SQLITE_PAGE_BYTES}`);
    // WAL lets readers run beside the single writer; FULL sync keeps every acknowledged commit on
    // disk across power loss, not only across a process crash; the busy timeout lets the CLI, the
    // workers and several API processes share one file.
    sqlite.pragma("journal_mode = WAL");
    sqlite.pragma("synchronous = FULL");
    sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    sqlite.pragma("foreign_keys = ON");
    // SQLite's default cache is 2 MB; past a few hundred thousand invoices the indexes alone are
    // far larger, and every lookup would read its pages again from the file.
    sqlite.pragma(`cache_size = -${options.dbPool.sqliteCacheMb * 1024}`);
    // A server process leaves checkpoints to its checkpointer thread (see checkpointer.ts).
    if (options.checkpointer) {
      const pageSize = Number(sqlite.pragma("page_size", { simple: true }));
      sqlite.pragma(`wal_autocheckpoint = ${Math.ceil(SAFETY_WAL_BYTES / pageSize)}`);
    }
    db = new Kysely<Database>({
      dialect: new ImmediateSqliteDialect({ database: cachingStatements(sqlite) }),
    });
    const version = sqlite.prepare("pragma data_version").pluck();
    const handle = db;
    changeCounters.set(db, () =>
      // Inside a transaction the counter is that of its snapshot: current in a write transaction of
      // writeTransaction's (no other connection can commit while it holds the lock, and the counter
      // was read afresh when it began), stale in any other (a deferred one reads an older snapshot).
      sqlite.inTransaction && !writing.has(handle) ? undefined : (version.get() as number),
    );
  }
  return db;
}

/** SQLite databases whose connection is inside a write transaction of writeTransaction's. */
const writing = new WeakSet<Db>();
const changeCounters = new WeakMap<Db, () => number | undefined>();

/**
 * A number that changes whenever another connection commits to the database (SQLite's
 * `data_version`, about 1 µs), for caches that must never serve what another process changed;
 * undefined when it cannot tell at this moment. This connection's own commits do not change it:
 * the code that makes them tells its caches itself. Undefined for PostgreSQL, which has no such
 * counter.
 */
export function changeCounter(db: Db): (() => number | undefined) | undefined {
  return changeCounters.get(db);
}

/**
 * Kysely's SQLite driver prepares every statement it runs; preparing costs more than running the
 * small statements of this service, and the same few texts repeat on every request. Statements are
 * kept by their text (bounded: the texts come from the code, but IN lists vary in length). A cached
 * statement is only ever run to completion (`all`/`run`), never left mid-iteration, so sharing it
 * is safe; one that is busy anyway is prepared afresh.
 */
function cachingStatements(sqlite: SQLite.Database, limit = 500): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    prepare(sql: string) {
      const cached = statements.get(sql);
      if (cached && !cached.busy) return cached;
      const statement = sqlite.prepare(sql);
      if (!cached) {
        if (statements.size >= limit) statements.delete(statements.keys().next().value as string);
        statements.set(sql, statement);
      }
      return statement;
    },
    close: () => sqlite.close(),
  };
}

// Connection refused or reset, the server shutting down or out of connections, a pool that could
// not connect in time, a statement or lock wait over its time limit, SQLite's lock wait running
// out, a transaction PostgreSQL chose to abort to break a deadlock or keep a snapshot serializable:
// the client's request was fine, and a retry in a moment will likely succeed.
const TRANSIENT_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "57014",
  "55P03",
  "40P01",
  "40001",
  "57P01",
  "57P02",
  "57P03",
  "53300",
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
]);

/** A database failure that says nothing about the request: answer 503 and let the client retry. */
export function isTransientDatabaseError(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === "string" && TRANSIENT_CODES.has(code)) return true;
  return (
    typeof message === "string" &&
    /Connection terminated|timeout exceeded when trying to connect|connection timeout/i.test(message)
  );
}

/** How long a SQLite writer waits for another process's write lock before giving up (503). */
const SQLITE_BUSY_TIMEOUT_MS = 5000;

/**
 * The fixed statements of a write transaction, compiled once: every batch (of signs, of claims, of
 * answers) runs four to six of them, and a template compiled again each time cost the query
 * builder's nodes and a frozen object for each.
 */
const STATEMENTS = {
  unflushed: CompiledQuery.raw("set local synchronous_commit = off"),
  syncNormal: CompiledQuery.raw("pragma synchronous = NORMAL"),
  syncFull: CompiledQuery.raw("pragma synchronous = FULL"),
  noWait: CompiledQuery.raw("pragma busy_timeout = 0"),
  wait: CompiledQuery.raw(`pragma busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`),
  beginImmediate: CompiledQuery.raw("begin immediate"),
  commit: CompiledQuery.raw("commit"),
  rollback: CompiledQuery.raw("rollback"),
};

/**
 * A write transaction that waits for SQLite's write lock without blocking the event loop.
 * better-sqlite3 is synchronous: a `begin immediate` that finds another process writing sleeps in
 * SQLite's busy handler, and the whole process (every request it is serving) sleeps with it. Here
 * the lock is tried without waiting; when another process holds it, the connection is released and
 * the attempt repeated a moment later, so the process goes on reading, validating and preparing
 * the next batch meanwhile. PostgreSQL transactions wait on the server, which blocks nothing here.
 * This is the one way services write in a transaction (Kysely's `db.transaction()` would wait in
 * the busy handler, up to 5 s with the event loop stopped); repositories never open one: they write
 * in the `tx` they are given.
 *
 * With `flush: false` the commit does not wait for the disk (SQLite `synchronous = NORMAL`,
 * PostgreSQL `synchronous_commit = off`): for writes that may be lost in a power cut as long as
 * nothing durable depends on them. The next flushed commit flushes them too: the log is written,
 * and flushed, in order.
 */
export async function writeTransaction<T>(
  db: Db,
  work: (tx: Executor) => Promise<T>,
  options: { flush?: boolean } = {},
): Promise<T> {
  const flush = options.flush ?? true;
  if (engineOf(db) === "postgres") {
    return db.transaction().execute(async (tx) => {
      if (!flush) await tx.executeQuery(STATEMENTS.unflushed);
      return work(tx);
    });
  }
  const deadline = Date.now() + SQLITE_BUSY_TIMEOUT_MS;
  for (let pause = 1; ; pause = Math.min(pause * 2, 16)) {
    const outcome = await db.connection().execute(async (connection) => {
      // The level can only change between transactions; this connection is ours until we give it back.
      if (!flush) await connection.executeQuery(STATEMENTS.syncNormal);
      try {
        if (!(await tryBeginImmediate(connection))) return undefined;
        writing.add(db);
        try {
          const value = await work(connection);
          await connection.executeQuery(STATEMENTS.commit);
          return { value };
        } catch (err) {
          // The work's own error is the one to report, whatever the rollback says.
          await connection.executeQuery(STATEMENTS.rollback).catch(() => {});
          throw err;
        } finally {
          writing.delete(db);
        }
      } finally {
        if (!flush) await connection.executeQuery(STATEMENTS.syncFull);
      }
    });
    if (outcome) return outcome.value;
    if (Date.now() >= deadline) {
      throw Object.assign(new Error("the database is locked by another writer"), { code: "SQLITE_BUSY" });
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/**
 * Work that is a single statement on PostgreSQL (one multi-row statement, or several joined by
 * `executeTogether`) run there on its own: a statement is a transaction by itself, so `begin` and
 * `commit` would be two round trips that every request of the batch waits for, and nothing more. On
 * SQLite, where the same work is several statements, in a write transaction (`options` as there);
 * PostgreSQL commits it durably.
 */
export function alone<T>(
  db: Db,
  work: (tx: Executor) => Promise<T>,
  options: { flush?: boolean } = {},
): Promise<T> {
  return engineOf(db) === "postgres" ? work(db) : writeTransaction(db, work, options);
}

async function tryBeginImmediate(connection: Executor): Promise<boolean> {
  await connection.executeQuery(STATEMENTS.noWait);
  try {
    await connection.executeQuery(STATEMENTS.beginImmediate);
    return true;
  } catch (err) {
    if ((err as { code?: unknown }).code === "SQLITE_BUSY") return false;
    throw err;
  } finally {
    await connection.executeQuery(STATEMENTS.wait);
  }
}

/** The page size of a new SQLite database (see openDatabase). */
const SQLITE_PAGE_BYTES = 8192;

const defaultPool = { size: 10, statementTimeoutMs: 30_000, sqliteCacheMb: 256, preparedKb: 128 };

/**
 * SQLite transactions that take the write lock when they begin. A deferred transaction that reads
 * and then writes fails at once (SQLITE_BUSY, no waiting) when another process wrote in between;
 * taking the lock up front makes it wait its turn under busy_timeout instead, which is what several
 * API processes, workers and the CLI sharing one file need.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(STATEMENTS.beginImmediate);
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: ConstructorParameters<typeof SqliteDialect>[0];
  constructor(config: ConstructorParameters<typeof SqliteDialect>[0]) {
    super(config);
    this.#config = config;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }
}
