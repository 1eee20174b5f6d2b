import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import SQLite from "better-sqlite3";
import { sql } from "kysely";
import pg from "pg";
import pino from "pino";
import { loadConfig } from "../src/config.ts";
import type { Context } from "../src/main.ts";
import type { Worker } from "../src/outbox/worker.ts";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The shared fixtures and catalogs live beside the repository, not in it. */
export const SHARED_DIR = path.resolve(
  process.env.EINVOICE_SHARED_DIR ?? path.join(REPO_ROOT, "..", "shared"),
);
if (!fs.existsSync(path.join(SHARED_DIR, "fixtures"))) {
  throw new Error(
    `shared fixtures not found in ${SHARED_DIR}: set EINVOICE_SHARED_DIR to the folder holding fixtures/ and data/`,
  );
}
export const HS_CSV = path.join(SHARED_DIR, "data", "hs2022", "harmonized-system.csv");
export const ISIC_JSON = path.join(SHARED_DIR, "data", "isic4", "isic4-en.json");

/** Test folders something still wrote in when their test ended: removed once the process's tests are done. */
const leftoverDirs: string[] = [];

export function tempDir(t: TestContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "einvoice-test-"));
  // A test's hooks run in the order they were added, so this one runs before those that close what
  // the test opened in the folder after making it (an app's SQLite connection, its checkpointer
  // thread, a server process): they may still write their journal files in it (ENOTEMPTY). Retrying
  // here would not help: the hooks that stop them wait for this one. Such a folder goes at the end.
  t.after(() => {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      leftoverDirs.push(dir);
    }
  });
  return dir;
}

/**
 * The engine a test process runs on: SQLite unless EINVOICE_TEST_ENGINE=postgres (npm test runs the
 * engine-dependent files once on each when EINVOICE_TEST_DATABASE_URL is set). With
 * EINVOICE_TEST_ENGINE=none, for the files listed as opening no database, `freshDatabase` refuses.
 */
export const ENGINE: "sqlite" | "postgres" =
  process.env.EINVOICE_TEST_ENGINE === "postgres" ? "postgres" : "sqlite";
const PG_URL = process.env.EINVOICE_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/**
 * Each test process keeps its schemas in a PostgreSQL database of its own, dropped when its tests
 * are done. Test processes run side by side, and in one database a schema dropped by one of them
 * fails another's catalog queries that are reading it (Kysely's introspection, which the migrator
 * runs, lists the tables of every schema): "schema t_… does not exist". scripts/test.mjs names its
 * run in EINVOICE_TEST_RUN, so it can drop what a killed process left.
 */
let processDatabase: Promise<URL> | undefined;
const databaseOfProcess = () => {
  processDatabase ??= (async () => {
    const run = (process.env.EINVOICE_TEST_RUN ?? "x").replace(/[^a-z0-9]/g, "");
    const name = `einvoice_test_${run}_${process.pid}_${randomBytes(3).toString("hex")}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      await admin.query(`create database ${name}`);
    } finally {
      await admin.end();
    }
    const url = new URL(PG_URL);
    url.pathname = `/${name}`;
    return url;
  })();
  return processDatabase;
};
/** How long a test process may live on once its tests have ended. */
const LINGER_MS = 20_000;

// Registered at import, so on the root (test/launch.mjs imports this file before the test files it
// runs): it runs once every test of the process has ended.
after(async () => {
  // Whatever a test left running (an interval, a socket, a child's pipe) would keep the process
  // alive until the runner's own limit, many minutes on. Unref'd: a process with nothing left ends
  // at once; one that lingers is ended here, failed, naming what held it.
  setTimeout(() => {
    process.stderr.write(
      `this test process still held ${process.getActiveResourcesInfo().join(", ")} ${LINGER_MS / 1000} s after its tests ended: a test left them open\n`,
    );
    process.exit(1);
  }, LINGER_MS).unref();
  for (const dir of leftoverDirs)
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  if (!processDatabase) return;
  const name = (await processDatabase).pathname.slice(1);
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    // A child process a test failed to stop may still be connected: the database goes all the same.
    await admin.query(`drop database if exists ${name} with (force)`);
  } finally {
    await admin.end();
  }
});

/**
 * A fresh, empty database for one test: a SQLite file in a temporary folder, or a PostgreSQL schema
 * of its own (selected through the connection's search_path, in the process's database) that `drop`
 * removes. `dir` is the data folder of the app about to start on it, in process or as a child
 * process: it is given the sandbox secrets of the run (`seedSecrets`), where they are known.
 */
export async function freshDatabase(
  dir: string,
): Promise<{ url: string; file: string | undefined; drop: () => Promise<void> }> {
  if (process.env.EINVOICE_TEST_ENGINE === "none") {
    // scripts/test.mjs runs the files it lists as opening no database once, on neither engine.
    throw new Error(
      "this file asked for a database, but scripts/test.mjs lists it as opening none: list it under `both` or `sqlite`",
    );
  }
  seedSecrets(dir);
  if (ENGINE === "sqlite") {
    const file = path.join(dir, "einvoice.db");
    // The file goes with its temporary folder.
    return { url: `sqlite:${file}`, file, drop: async () => {} };
  }
  const schema = `t_${process.pid}_${randomBytes(6).toString("hex")}`;
  const database = await databaseOfProcess();
  const admin = new pg.Client({ connectionString: database.toString() });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const drop = async () => {
    const cleanup = new pg.Client({ connectionString: database.toString() });
    await cleanup.connect();
    await cleanup.query(`drop schema if exists ${schema} cascade`);
    await cleanup.end();
  };
  const url = new URL(database);
  url.searchParams.set("options", `-c search_path=${schema}`);
  // Names the test's connections, so a test can cut exactly them.
  url.searchParams.set("application_name", schema);
  return { url: url.toString(), file: undefined, drop };
}

/**
 * Everything the database holds, as stored: the SQLite files byte for byte (after a checkpoint, so
 * the main file holds the rows too), or, on PostgreSQL, every row of every table of the current schema
 * as text.
 */
export async function rawStorage(ctx: Pick<Context, "db">, dbFile: string | undefined): Promise<Buffer> {
  if (dbFile) {
    const raw = new SQLite(dbFile);
    raw.pragma("wal_checkpoint(FULL)");
    raw.close();
    return Buffer.concat(
      [dbFile, `${dbFile}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f)),
    );
  }
  const tables = await sql<{
    name: string;
  }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(
    ctx.db,
  );
  const dumps: string[] = [];
  for (const { name } of tables.rows) {
    const rows = await sql<{ row: string }>`select t::text as row from ${sql.table(name)} t`.execute(ctx.db);
    dumps.push(...rows.rows.map((r) => r.row));
  }
  return Buffer.from(dumps.join("\n"));
}

/**
 * The sandbox secrets the first app of this process generated (secrets.json in its data folder),
 * given to the next ones: generating them (an RSA key above all, 0.2–0.4 s of CPU, up to 0.8 s on a
 * busy machine) for each of the hundreds of apps the suite starts, in its processes and in the
 * servers, workers and CLI commands they start, was a good part of its time. Each app still has a
 * folder and a database of its own, and its own copy of the file (a test that rotates a key
 * rotates its own); sharing the keys changes nothing a test looks at. Under scripts/test.mjs the
 * run shares them too, through a folder of its own that it removes at its end
 * (EINVOICE_TEST_SHARED): the first processes generate them, the later ones read them.
 */
const RUN_SECRETS = process.env.EINVOICE_TEST_SHARED
  ? path.join(process.env.EINVOICE_TEST_SHARED, "secrets.json")
  : undefined;
let processSecrets: string | undefined;

function readSecrets(file: string | undefined): string | undefined {
  try {
    return file ? fs.readFileSync(file, "utf8") : undefined;
  } catch {
    return undefined;
  }
}

/** Gives the data folder `dir` a copy of the known sandbox secrets, unless it has its own. */
function seedSecrets(dir: string): void {
  const file = path.join(dir, "secrets.json");
  // Read when first needed: another process of the run may have shared them since this one started.
  processSecrets ??= readSecrets(RUN_SECRETS);
  if (processSecrets === undefined || fs.existsSync(file)) return;
  fs.writeFileSync(file, processSecrets, { mode: 0o600 });
}

/** Once an app in `dir` has generated its secrets: this process's, and the run's if it has none yet. */
function learnSecrets(dir: string): void {
  if (processSecrets !== undefined) return;
  processSecrets = readSecrets(path.join(dir, "secrets.json"));
  if (processSecrets === undefined || !RUN_SECRETS || fs.existsSync(RUN_SECRETS)) return;
  // Written whole, then renamed into place: a process reading it at the same time sees all or nothing.
  const tmp = `${RUN_SECRETS}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, processSecrets, { mode: 0o600 });
  fs.renameSync(tmp, RUN_SECRETS);
}

/** A real app on a fresh database, closed and removed when the test ends. */
export async function build(t: TestContext, env: Record<string, string> = {}) {
  const dir = tempDir(t);
  const database = await freshDatabase(dir);
  const config = loadConfig({
    EINVOICE_DATABASE_URL: database.url,
    EINVOICE_DATA_DIR: dir,
    EINVOICE_LOG_LEVEL: "silent",
    ...env,
  });
  // The service is loaded on the first build, not on import: the files that use these helpers only
  // for fixtures and folders start a second or two sooner.
  const [{ createContext, createServer }, { createWorker }] = await Promise.all([
    import("../src/main.ts"),
    import("../src/outbox/worker.ts"),
  ]);
  const ctx = await createContext(config);
  learnSecrets(dir);
  const logger = pino({ level: "silent" });
  const app = await createServer(ctx, logger);
  const workers: Worker[] = [];
  t.after(async () => {
    // Workers first: they need the database to give their jobs back.
    await Promise.all(workers.map((w) => w.stop()));
    await app.close();
    await ctx.close();
    await database.drop();
  });
  /** An in-process outbox worker on this instance, stopped when the test ends. */
  const startWorker = (concurrency = 8) => {
    const worker = createWorker({ transmission: ctx.transmission, concurrency, pollMs: 20, logger });
    workers.push(worker);
    worker.start();
    return worker;
  };
  return { app, ctx, dir, config, databaseUrl: database.url, dbFile: database.file, startWorker };
}

/** `build` plus a real socket on 127.0.0.1, for tests where one instance calls another. */
export async function listen(t: TestContext, env: Record<string, string> = {}) {
  const built = await build(t, env);
  const address = await built.app.listen({ port: 0, host: "127.0.0.1" });
  return { ...built, url: address };
}

/**
 * Another instance of the service on `config`'s database, listening on 127.0.0.1, as a second
 * process of the cluster would be: nothing in memory is shared with the first. Closed when the test
 * ends; its address is returned.
 */
export async function secondInstance(t: TestContext, config: Awaited<ReturnType<typeof build>>["config"]) {
  const { createContext, createServer } = await import("../src/main.ts");
  const other = await createContext(config);
  const app = await createServer(other, pino({ level: "silent" }));
  const url = await app.listen({ port: 0, host: "127.0.0.1" });
  t.after(async () => {
    await app.close();
    await other.close();
  });
  return url;
}

/** Polls `probe` until it returns true, failing the test after `timeoutMs`. */
export async function eventually(
  probe: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export type Tenant = {
  business_id: string;
  service_id: string;
  tin: string;
  api_key: string;
  api_secret: string;
  headers: Record<string, string>;
};

let tenants = 0;

/** A fresh business with its own credentials: no test shares mutable state with another. */
export async function tenant(
  ctx: Context,
  opts: { serviceId?: string; tin?: string; id?: string } = {},
): Promise<Tenant> {
  tenants += 1;
  const tin = opts.tin ?? "20198222-0002";
  const business = await ctx.businesses.add({
    name: `Test Business ${tenants}`,
    tin,
    serviceId: opts.serviceId,
    id: opts.id,
  });
  const key = await ctx.businesses.createKey(business.business_id);
  return {
    business_id: business.business_id,
    service_id: business.service_id,
    tin,
    api_key: key.api_key,
    api_secret: key.api_secret,
    headers: { "api-key": key.api_key, "api-secret": key.api_secret },
  };
}

export type Json = Record<string, unknown>;

/** A fixture from the shared folder with the tenant's ids in place of the placeholders. */
export function fixture(
  name: "invoice-full" | "invoice-minimal" | "report-fiscalization",
  who: Pick<Tenant, "business_id" | "service_id">,
): Json {
  const text = fs
    .readFileSync(path.join(SHARED_DIR, "fixtures", `${name}.json`), "utf8")
    .replaceAll("{{BUSINESS_ID}}", who.business_id)
    .replaceAll("{{SERVICE_ID}}", who.service_id);
  return JSON.parse(text) as Json;
}

let sequence = 0;

/** The full fixture under a fresh IRN (same issue date), for tests that sign many invoices. */
export function freshInvoice(
  who: Pick<Tenant, "business_id" | "service_id">,
  base: "invoice-full" | "invoice-minimal" = "invoice-full",
): Json {
  const doc = fixture(base, who);
  sequence += 1;
  const date = String(doc.issue_date).replaceAll("-", "");
  doc.irn = `T${process.pid}N${sequence}-${who.service_id}-${date}`;
  return doc;
}

export const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The IRNs a business has stored, sorted. */
export async function storedIrns(ctx: Pick<Context, "db">, businessId: string): Promise<string[]> {
  const rows = await ctx.db
    .selectFrom("invoices")
    .select("irn")
    .where("business_id", "=", businessId)
    .execute();
  return rows.map((row) => row.irn).sort();
}

/**
 * Another process's writer holding what the write needs: on SQLite the database's write lock (a
 * second connection to the file in `begin immediate`), on PostgreSQL an EXCLUSIVE lock on the
 * table the write changes (reads still pass, as they do beside a SQLite writer). The function it
 * returns releases it.
 */
export async function holdWriteLock(dbFile: string | undefined, databaseUrl: string, table: string) {
  if (ENGINE === "sqlite") {
    const other = new SQLite(dbFile as string);
    other.exec("begin immediate");
    return async () => {
      other.exec("commit");
      other.close();
    };
  }
  const other = new pg.Client({ connectionString: databaseUrl });
  await other.connect();
  await other.query("begin");
  await other.query(`lock table ${table} in exclusive mode`);
  return async () => {
    await other.query("commit");
    await other.end();
  };
}
