/** What the HTTP benchmarks share: a database of their own, a server process, ports, waiting. */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const shared = path.resolve(process.env.EINVOICE_SHARED_DIR ?? path.join(root, "..", "shared"));

export function machine(): string {
  return `node ${process.version}, ${os.cpus()[0]?.model ?? "cpu"} × ${os.cpus().length}`;
}

export async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const ok = await fetch(url).then(
      (r) => r.status < 500,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not come up`);
}

export function start(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
}

/** Stops the processes and waits for their exits (a profiled one writes its profile on the way). */
export async function stop(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve(undefined);
          child.once("exit", resolve);
          child.kill("SIGTERM");
        }),
    ),
  );
}

/**
 * A database for one run: a SQLite file in a temporary folder, or a fresh PostgreSQL schema in
 * EINVOICE_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test). `drop` removes it.
 */
export async function benchDatabase(engine: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "einvoice-bench-"));
  const file = path.join(dir, "bench.db");
  let url = `sqlite:${file}`;
  let schema: string | undefined;
  const base = process.env.EINVOICE_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    try {
      return await client.query(statement);
    } finally {
      await client.end();
    }
  };
  if (engine === "postgres") {
    schema = `bench_${randomBytes(4).toString("hex")}`;
    await admin(`create schema ${schema}`);
    const withSchema = new URL(base);
    withSchema.searchParams.set("options", `-c search_path=${schema}`);
    url = withSchema.toString();
  } else if (engine !== "sqlite") {
    throw new Error(`--engine must be sqlite or postgres, not ${engine}`);
  }
  return {
    dir,
    url,
    env: { EINVOICE_DATABASE_URL: url, EINVOICE_DATA_DIR: dir, EINVOICE_LOG_LEVEL: "warn" },
    /** Bytes on disk: the SQLite file and its WAL, or the schema's tables with their indexes. */
    async bytes(): Promise<number> {
      if (!schema) {
        return [file, `${file}-wal`].reduce((n, f) => n + (fs.existsSync(f) ? fs.statSync(f).size : 0), 0);
      }
      const result = await admin(
        `select coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint as n from pg_class c
           join pg_namespace s on s.oid = c.relnamespace where s.nspname = '${schema}' and c.relkind = 'r'`,
      );
      return Number(result.rows[0].n);
    },
    async drop(): Promise<void> {
      if (schema) await admin(`drop schema ${schema} cascade`);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
