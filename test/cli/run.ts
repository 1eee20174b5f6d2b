import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import net from "node:net";
import path from "node:path";
import type { TestContext } from "node:test";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { type Json, REPO_ROOT, tempDir } from "../helpers.ts";

export const exec = promisify(execFile);
export const TIMEOUT = 60_000;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export type Run = { code: number; stdout: string; stderr: string };
export type ExecFailure = Error & { code?: unknown; stdout?: unknown; stderr?: unknown; killed?: unknown };

/** The parent's environment without anything that would change how the CLI is configured. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith("EINVOICE_") || k === "PORT" || k === "HOST" || k === "NODE_TEST_CONTEXT") continue;
    env[k] = v;
  }
  return { ...env, EINVOICE_LOG_LEVEL: "warn", ...extra };
}

/** `node bin/einvoice.js …`; never throws, a non-zero exit is returned as `code`. */
export async function cli(args: string[], env: Record<string, string>): Promise<Run> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ["bin/einvoice.js", ...args], {
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

export function dbEnv(t: TestContext, name = "cli.db") {
  const dir = tempDir(t);
  const file = path.join(dir, name);
  return { dir, file, env: { EINVOICE_DATABASE_URL: `sqlite:${file}` } };
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  assert.ok(address !== null && typeof address === "object");
  const { port } = address;
  server.close();
  await once(server, "close");
  return port;
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
  const child = spawn(process.execPath, ["bin/einvoice.js", "serve"], {
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
  t.after(stop);
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

export function readRows(file: string, sql: string): Record<string, unknown>[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}
