import assert from "node:assert/strict";
import { type ChildProcess, execFile, fork, spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { TestContext } from "node:test";
import { promisify } from "node:util";
import { loadConfig } from "../../src/config.ts";
import type { Context } from "../../src/main.ts";
import { freshDatabase, type Json, REPO_ROOT } from "../helpers.ts";
import type { HostReply, HostRequest } from "./host.ts";

export const exec = promisify(execFile);
export const TIMEOUT = 60_000;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export type Run = { code: number; stdout: string; stderr: string };
export type ExecFailure = Error & { code?: unknown; stdout?: unknown; stderr?: unknown; killed?: unknown };

/** `node`'s arguments for `einvoice`, as a user runs it. */
export const EINVOICE = ["bin/einvoice.js"];

/** The parent's environment without anything that would change how the CLI is configured. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith("EINVOICE_") || k === "PORT" || k === "HOST" || k === "NODE_TEST_CONTEXT") continue;
    env[k] = v;
  }
  return { ...env, EINVOICE_LOG_LEVEL: "warn", ...extra };
}

/**
 * `einvoice …`; never throws, a non-zero exit is returned as `code`. Commands run in the shared
 * host process (host.ts), which fails the test when a command leaves anything open (a `serve` that
 * started serving, say); with `{ process: true }`, for a test about the process itself, as
 * `node bin/einvoice.js …`. A server to talk to is `startServer`'s, always a process.
 */
export async function cli(
  args: string[],
  env: Record<string, string>,
  options: { process?: boolean } = {},
): Promise<Run> {
  return options.process ? cliProcess(args, env) : hosted(args, env);
}

type Host = { child: ChildProcess; waiting: Map<number, (reply: HostReply | Error) => void>; log: string };
let host: Host | undefined;
let requests = 0;

function startHost(): Host {
  const child = fork(path.join(REPO_ROOT, "test", "cli", "host.ts"), [], {
    cwd: REPO_ROOT,
    env: cleanEnv({}),
    execArgv: ["--import", path.join(REPO_ROOT, "test", "preload.mjs"), "--import", "tsx"],
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  const started: Host = { child, waiting: new Map(), log: "" };
  child.stderr?.on("data", (chunk: Buffer) => {
    started.log = (started.log + chunk.toString("utf8")).slice(-4000);
  });
  child.on("message", (reply: HostReply) => {
    started.waiting.get(reply.id)?.(reply);
    started.waiting.delete(reply.id);
    if (started.waiting.size === 0) child.channel?.unref();
  });
  child.on("exit", (code, signal) => {
    if (host === started) host = undefined;
    for (const done of started.waiting.values()) {
      done(new Error(`the einvoice host exited (${code ?? signal}): ${started.log}`));
    }
  });
  // Idle, it keeps no test process alive; it exits with the test process.
  child.unref();
  child.channel?.unref();
  (child.stderr as (NodeJS.ReadableStream & { unref?: () => void }) | null)?.unref?.();
  return started;
}

function retireHost(): void {
  host?.child.kill("SIGKILL");
  host = undefined;
}

async function hosted(args: string[], env: Record<string, string>): Promise<Run> {
  host ??= startHost();
  const { child, waiting } = host;
  const request: HostRequest = { id: ++requests, args, env: cleanEnv(env) };
  child.channel?.ref();
  const reply = await new Promise<HostReply | Error>((resolve) => {
    const timer = setTimeout(() => resolve(new Error(`einvoice ${args.join(" ")} timed out`)), TIMEOUT);
    waiting.set(request.id, (r) => {
      clearTimeout(timer);
      resolve(r);
    });
    child.send(request);
  });
  if (reply instanceof Error) {
    retireHost();
    assert.fail(reply.message);
  }
  if (reply.leaked.length > 0) {
    // Whatever it left open would outlive the next command too.
    retireHost();
    assert.fail(
      `einvoice ${args.join(" ")} left ${reply.leaked.join(", ")} open: its process would not exit`,
    );
  }
  return { code: reply.code, stdout: reply.stdout, stderr: reply.stderr };
}

/** `node bin/einvoice.js …` in a process of its own. */
async function cliProcess(args: string[], env: Record<string, string>): Promise<Run> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [...EINVOICE, ...args], {
      cwd: REPO_ROOT,
      env: cleanEnv(env),
      timeout: TIMEOUT,
      encoding: "utf8",
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as ExecFailure;
    assert.ok(e.killed !== true, `einvoice ${args.join(" ")} timed out`);
    return {
      code: typeof e.code === "number" ? e.code : -1,
      stdout: typeof e.stdout === "string" ? e.stdout : "",
      stderr: typeof e.stderr === "string" ? e.stderr : "",
    };
  }
}

/** Exit 0 and exactly one line of JSON (an object) on stdout. */
export function oneJson(run: Run): Json {
  assert.equal(run.code, 0, `exit ${run.code}; stderr: ${run.stderr}`);
  assert.match(run.stdout, /^[^\n]+\n$/, `stdout is one line: ${JSON.stringify(run.stdout)}`);
  const value: unknown = JSON.parse(run.stdout);
  assert.ok(value !== null && typeof value === "object" && !Array.isArray(value), run.stdout);
  return value as Json;
}

/** Non-zero exit, nothing on stdout, a message on stderr. */
export function failed(run: Run, pattern?: RegExp): void {
  assert.notEqual(run.code, 0, `expected a failure, got stdout ${run.stdout}`);
  assert.equal(run.stdout, "", "nothing on stdout");
  assert.ok(run.stderr.trim().length > 0, "a message on stderr");
  if (pattern) assert.match(run.stderr, pattern);
}

export type DbEnv = {
  dir: string;
  url: string;
  /** The SQLite file; undefined on PostgreSQL. */
  file: string | undefined;
  /** What a child process needs to open this database and share its sandbox keys. */
  env: { EINVOICE_DATABASE_URL: string; EINVOICE_DATA_DIR: string };
};

/** What must be closed before a test's database goes, per test (see `dbEnv` and `onTeardown`). */
const teardowns = new WeakMap<TestContext, (() => Promise<unknown>)[]>();

/**
 * Runs `fn` when the test ends: before its database is dropped when the test has a `dbEnv`, else as a
 * plain `t.after` hook. (node:test runs `t.after` hooks in the order they were registered, so a drop
 * registered by `dbEnv` would otherwise run before the servers and contexts opened after it close.)
 */
export function onTeardown(t: TestContext, fn: () => Promise<unknown>): void {
  const stack = teardowns.get(t);
  if (stack) stack.push(fn);
  else t.after(fn);
}

/**
 * A fresh database for one test in a temporary folder of its own, on the engine under test: a SQLite
 * file named `name`, or a PostgreSQL schema of its own. Whatever `onTeardown` registered closes first
 * (last registered first), then the database is dropped and the folder removed.
 */
export async function dbEnv(t: TestContext, name = "cli.db"): Promise<DbEnv> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "einvoice-test-"));
  const stack: (() => Promise<unknown>)[] = [];
  let drop = async () => {};
  t.after(async () => {
    try {
      for (const fn of stack.reverse()) await fn();
    } finally {
      try {
        await drop();
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
  });
  teardowns.set(t, stack);
  const database = await freshDatabase(dir);
  drop = database.drop;
  const file = database.file === undefined ? undefined : path.join(dir, name);
  const url = file === undefined ? database.url : `sqlite:${file}`;
  return { dir, url, file, env: { EINVOICE_DATABASE_URL: url, EINVOICE_DATA_DIR: dir } };
}

/** The configuration of an in-process context on the test's database, sharing the CLI's keys. */
export function configOf(db: Pick<DbEnv, "url" | "dir">, extra: Record<string, string> = {}) {
  return loadConfig({
    EINVOICE_DATABASE_URL: db.url,
    EINVOICE_DATA_DIR: db.dir,
    EINVOICE_LOG_LEVEL: "silent",
    ...extra,
  });
}

/** The service on the test's database, loaded when first needed: most CLI tests run none in process. */
async function contextOf(db: Pick<DbEnv, "url" | "dir">): Promise<Context> {
  const { createContext } = await import("../../src/main.ts");
  return createContext(configOf(db));
}

/** The test's database opened in process until the test ends (closed before the database goes). */
export async function openContext(t: TestContext, db: Pick<DbEnv, "url" | "dir">): Promise<Context> {
  const ctx = await contextOf(db);
  onTeardown(t, () => ctx.close());
  return ctx;
}

/** Runs `work` on the test's database opened in process, then closes it. */
export async function withDatabase<T>(
  db: Pick<DbEnv, "url" | "dir">,
  work: (ctx: Context) => Promise<T>,
): Promise<T> {
  const ctx = await contextOf(db);
  try {
    return await work(ctx);
  } finally {
    await ctx.close();
  }
}

/** The number of rows in `table`, on either engine (PostgreSQL's count is a bigint, read as text). */
export async function countRows(
  db: Pick<DbEnv, "url" | "dir">,
  table: "businesses" | "api_keys" | "products" | "services",
): Promise<number> {
  return withDatabase(db, async (ctx) => {
    const row = await ctx.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number | string>().as("n"))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  });
}

/**
 * The ports `freePort` hands out: scripts/test.mjs gives each process it runs at a time a range of
 * its own, below the kernel's ephemeral range. A port found free is only taken later (by a server
 * starting, an instance listening after its peer was configured): from the ephemeral range, another
 * test process's `listen(0)` could take it meanwhile; in a range of its own, nothing else does.
 */
const PORTS = /^(\d+)-(\d+)$/.exec(process.env.EINVOICE_TEST_PORTS ?? "");
// From a random place in the range: two runs at once on one machine (their ranges are the same)
// then seldom try the same ports in the same order.
let nextPort = PORTS
  ? Number(PORTS[1]) + Math.floor(Math.random() * (Number(PORTS[2]) - Number(PORTS[1])))
  : 0;

/** A port that is free now, on 127.0.0.1: one of this process's range, else any the kernel picks. */
export async function freePort(): Promise<number> {
  for (let tries = 0; ; tries++) {
    let candidate = 0;
    if (PORTS) {
      candidate = nextPort;
      nextPort = nextPort + 1 >= Number(PORTS[2]) ? Number(PORTS[1]) : nextPort + 1;
    }
    const server = net.createServer();
    const outcome = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
      server.once("listening", () => resolve(undefined));
      server.once("error", resolve);
      server.listen(candidate, "127.0.0.1");
    });
    if (outcome) {
      // Taken by something outside the tests: the next one.
      assert.ok(outcome.code === "EADDRINUSE" && PORTS && tries < 1000, String(outcome));
      continue;
    }
    const address = server.address();
    assert.ok(address !== null && typeof address === "object");
    const { port } = address;
    server.close();
    await once(server, "close");
    return port;
  }
}

export type Server = {
  child: ChildProcess;
  port: number;
  url: string;
  output: () => string;
  stop: () => Promise<number | null>;
};

/** `einvoice serve` as a child process, answering on `url`; killed when the test ends. */
export async function startServer(t: TestContext, env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, [...EINVOICE, "serve"], {
    cwd: REPO_ROOT,
    env: cleanEnv({ ...env, PORT: String(port), HOST: "127.0.0.1" }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  const exited = once(child, "exit");
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    return child.exitCode;
  };
  onTeardown(t, stop);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 45_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      assert.fail(`serve exited early (${child.exitCode ?? child.signalCode}): ${output}`);
    }
    try {
      const res = await fetch(`${url}/`);
      await res.arrayBuffer();
      break; // Any answer, 401 included, means the server is up.
    } catch {
      if (Date.now() > deadline) assert.fail(`serve did not answer on ${url}: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  return { child, port, url, output: () => output, stop };
}

export async function health(url: string, apiKey: string, apiSecret: string) {
  const res = await fetch(`${url}/`, { headers: { "API-KEY": apiKey, "API-SECRET": apiSecret } });
  return { status: res.status, body: (await res.json()) as unknown };
}

/** `einvoice worker` in a process of its own, killed when the test ends if it is still running. */
export function spawnWorker(t: TestContext, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [...EINVOICE, "worker"], {
    cwd: REPO_ROOT,
    env: cleanEnv(env),
    stdio: ["ignore", "ignore", "pipe"],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return child;
}
