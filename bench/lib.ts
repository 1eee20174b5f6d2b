/** What the HTTP benchmarks share: a database of their own, a server process, ports, waiting. */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { loadConfig } from "../src/config.ts";
import { createContext } from "../src/main.ts";

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

/**
 * A process's or thread's parent and CPU time so far (user + system, ms) from its `stat` file;
 * undefined when it is gone.
 */
function statOf(file: string): { parent: number; ms: number } | undefined {
  const tick = 1000 / 100; // USER_HZ is 100 on every Linux of note
  try {
    // The command name may hold spaces and parentheses: the fields start after its last ")".
    const text = fs.readFileSync(file, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { parent: Number(fields[1]), ms: (Number(fields[11]) + Number(fields[12])) * tick };
  } catch {
    return undefined; // gone between the listing and the read
  }
}

/** Every process's parent and CPU time so far (user + system, ms), from /proc (Linux). */
function processes(): Map<number, { parent: number; ms: number }> {
  const out = new Map<number, { parent: number; ms: number }>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = statOf(`/proc/${entry}/stat`);
    if (stat) out.set(Number(entry), stat);
  }
  return out;
}

/** `pid` and every descendant of it. */
function tree(pid: number, all = processes()): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) for (const [child, p] of all) if (p.parent === out[i]) out.push(child);
  return out;
}

/**
 * CPU time (ms) a process and its descendants have used so far; undefined off Linux. A server's CPU
 * per request does not depend on what else the machine runs, unlike its requests/s when the load
 * generator shares its cores.
 */
export function cpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined || !fs.existsSync(`/proc/${pid}/stat`)) return undefined;
  const all = processes();
  return tree(pid, all).reduce((sum, id) => sum + (all.get(id)?.ms ?? 0), 0);
}

/**
 * CPU time (ms) PostgreSQL's server processes on this machine have used so far (its backends, WAL
 * writer, checkpointer and the rest, by their command name), those that have ended included (the
 * postmaster's reaped children's time): what a request costs the database, which the API processes'
 * CPU leaves out. Undefined off Linux.
 */
export function postgresCpuMs(): number | undefined {
  if (!fs.existsSync("/proc/self/stat")) return undefined;
  const tick = 1000 / 100; // USER_HZ, as in statOf
  let ticks = 0;
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      if (text.slice(text.indexOf("(") + 1, text.lastIndexOf(")")) !== "postgres") continue;
      // utime, stime, and the time of its children it has waited for (cutime, cstime).
      const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
      for (const at of [11, 12, 13, 14]) ticks += Number(fields[at]);
    } catch {
      // gone between the listing and the read
    }
  }
  return ticks * tick;
}

/**
 * The machine's CPU time so far (all cores, in USER_HZ ticks), and the part of it the hypervisor
 * gave to other guests (steal); undefined off Linux. A run that lost much of its time so is not
 * one to compare with another: on a shared 2-core VM, 20 s runs minutes apart lost from 0.02 s to
 * 11.5 s so (bench/RESULTS.md, 2026-12-04).
 */
export type CpuTicks = { total: number; steal: number } | undefined;

export function cpuTicks(): CpuTicks {
  try {
    const line = fs.readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "";
    // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest is inside user)
    const fields = line.trim().split(/\s+/).slice(1, 9).map(Number);
    if (fields.length < 8 || fields.some((n) => !Number.isFinite(n))) return undefined;
    return { total: fields.reduce((a, b) => a + b, 0), steal: fields[7] as number };
  } catch {
    return undefined;
  }
}

/** The share of the machine's CPU time stolen since a `cpuTicks` reading, as "steal 3.2%". */
export function stealSince(before: CpuTicks): string {
  const after = cpuTicks();
  if (!before || !after || after.total <= before.total) return "steal ?";
  return `steal ${((100 * (after.steal - before.steal)) / (after.total - before.total)).toFixed(1)}%`;
}

/**
 * CPU time (ms) so far of the event loops of a process and its descendants: each process's main
 * thread (its thread id is the process id), without its worker threads, libuv's pool, or V8's
 * helpers. Undefined off Linux.
 */
export function loopCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined || !fs.existsSync(`/proc/${pid}/stat`)) return undefined;
  return tree(pid).reduce((sum, id) => sum + (statOf(`/proc/${id}/task/${id}/stat`)?.ms ?? 0), 0);
}

/**
 * Pins the server's processes (and their threads) to `cpus` ("1", "1-3") and this process, the load
 * generator, to every other core, with util-linux's taskset.
 */
export function pin(cpus: string, servers: ChildProcess[]): void {
  const run = (...argv: string[]) => {
    const done = spawnSync("taskset", argv, { encoding: "utf8" });
    if (done.status !== 0) throw new Error(`taskset ${argv.join(" ")}: ${done.stderr || done.error}`);
  };
  const chosen = new Set<number>();
  for (const part of cpus.split(",")) {
    const [from, to = from] = part.split("-").map(Number);
    for (let c = from as number; c <= (to as number); c++) chosen.add(c);
  }
  const others = os
    .cpus()
    .map((_, i) => i)
    .filter((i) => !chosen.has(i));
  if (others.length === 0) throw new Error(`--server-cpus ${cpus} leaves no core for the load generator`);
  for (const server of servers)
    for (const pid of tree(server.pid as number)) run("-a", "-p", "-c", cpus, String(pid));
  run("-a", "-p", "-c", others.join(","), String(process.pid));
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
  const on = (connectionString: string) => async (statement: string) => {
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      return await client.query(statement);
    } finally {
      await client.end();
    }
  };
  const admin = on(base);
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
    /** On PostgreSQL, a statement run on a connection of its own in the run's schema. */
    query: on(url),
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

export type SteadyRequest = { method: string; path: string; headers: Record<string, string>; body?: string };

/** How `steadyRate` sends its requests: its own lean HTTP/1.1 client, or Node's `http` module. */
export type SteadyClient = "lean" | "node";

/**
 * Open-loop load at a steady rate: a request goes out every 1/rate s whatever the answers do, and
 * each latency counts from the moment its request was due, so a stall of the server shows as
 * latency instead of as fewer requests (no coordinated omission). autocannon's rate option sends
 * each connection's quota for the second in a burst and then waits, which measures bursts.
 * The load generator shares the server's cores. Node's `http` client took about 150 µs of CPU a
 * request at 1,000/s (15% of a core, RESULTS.md, 2026-12-07, on another VM type), so by default
 * the requests go out through `leanClient`, written for this; `client: "node"` keeps the old way,
 * to compare with the figures measured with it.
 */
export async function steadyRate(options: {
  url: string;
  rate: number;
  durationS: number;
  request: () => SteadyRequest;
  client?: SteadyClient;
  /** Seconds over which the rate rises from nothing to `rate` at the start (a warm-up's); 0 by default. */
  rampS?: number;
}): Promise<{ sent: number; ok: number; bad: number; p50: number; p99: number; max: number }> {
  const target = new URL(options.url);
  const send = options.client === "node" ? nodeClient(target) : leanClient(target);
  const perMs = options.rate / 1000;
  const rampMs = (options.rampS ?? 0) * 1000;
  // Requests due `ms` after the start, the rate rising linearly over the ramp, and when the n-th is due.
  const dueBy = (ms: number) => (ms < rampMs ? (perMs * ms * ms) / (2 * rampMs) : perMs * (ms - rampMs / 2));
  const dueAt = (n: number) =>
    n < (perMs * rampMs) / 2 ? Math.sqrt((2 * n * rampMs) / perMs) : n / perMs + rampMs / 2;
  const total = Math.round(dueBy(options.durationS * 1000));
  const latencies: number[] = [];
  let sent = 0;
  let ok = 0;
  let bad = 0;
  await new Promise<void>((resolve) => {
    const settle = (dueTime: number, status: number) => {
      latencies.push(performance.now() - dueTime);
      if (status >= 200 && status < 300) ok++;
      else bad++;
      if (ok + bad === total) resolve();
    };
    const start = performance.now();
    const tick = () => {
      const due = Math.min(total, Math.floor(dueBy(performance.now() - start)) + 1);
      while (sent < due) {
        const dueTime = start + dueAt(sent++);
        send.request(options.request(), (status) => settle(dueTime, status));
      }
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  send.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0) * 10) / 10;
  return { sent, ok, bad, p50: at(0.5), p99: at(0.99), max: at(1) };
}

/** Sends a request and calls back with its answer's status (0: no answer, the connection failed). */
type Sender = {
  request(request: SteadyRequest, done: (status: number) => void): void;
  close(): void;
};

/** Node's HTTP client, a keep-alive agent. */
function nodeClient(target: URL): Sender {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
  return {
    request({ method, path: requestPath, headers, body }, done) {
      const length = body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) };
      const request = http.request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          method,
          path: requestPath,
          headers: { ...headers, ...length },
        },
        (response) => {
          response.resume();
          response.on("end", () => done(response.statusCode ?? 0));
        },
      );
      request.on("error", () => done(0));
      request.end(body);
    },
    close: () => agent.destroy(),
  };
}

/**
 * A lean HTTP/1.1 client for the load generator: keep-alive connections, one request at a time on
 * each (as Node's agent), opened when none is free; a request written in one piece; an answer read
 * as far as its status line, its `content-length` and that many bytes of body. Only what a
 * benchmark's server sends is understood: an answer without `content-length` (chunked, say) fails
 * its request, and its connection is closed.
 */
function leanClient(target: URL): Sender {
  const host = `${target.hostname}:${target.port}`;
  type Connection = { socket: net.Socket; waiting: ((status: number) => void) | undefined };
  const idle: Connection[] = [];
  const open = new Set<Connection>();

  function connect(): Connection {
    const socket = net.connect({ host: target.hostname, port: Number(target.port), noDelay: true });
    const connection: Connection = { socket, waiting: undefined };
    open.add(connection);
    let buffer: Buffer = Buffer.alloc(0);
    const answer = (status: number) => {
      const done = connection.waiting;
      connection.waiting = undefined;
      done?.(status);
    };
    const gone = () => {
      open.delete(connection);
      const at = idle.indexOf(connection);
      if (at >= 0) idle.splice(at, 1);
      answer(0);
    };
    socket.on("error", gone);
    socket.on("close", gone);
    socket.on("data", (chunk: Buffer) => {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = buffer.toString("latin1", 0, end);
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      if (!length) return void socket.destroy();
      const size = end + 4 + Number(length[1]);
      if (buffer.length < size) return;
      buffer = buffer.subarray(size);
      if (/\r\nconnection: *close/i.test(head)) socket.destroy();
      else idle.push(connection);
      answer(Number(head.slice(9, 12)));
    });
    return connection;
  }

  return {
    request({ method, path: requestPath, headers, body }, done) {
      // Its own `host` and `content-length` only: a caller's headers object may hold another's (autocannon
      // adds `content-length` to the objects it is given), and two lengths make a request the server refuses.
      let headerLines = "";
      for (const name in headers)
        if (!/^(host|content-length)$/i.test(name)) headerLines += `${name}: ${headers[name]}\r\n`;
      const length = body === undefined ? "" : `content-length: ${Buffer.byteLength(body)}\r\n`;
      const connection = idle.pop() ?? connect();
      connection.waiting = done;
      connection.socket.write(
        `${method} ${requestPath} HTTP/1.1\r\nhost: ${host}\r\n${headerLines}${length}\r\n${body ?? ""}`,
      );
    },
    close() {
      for (const { socket } of open) socket.destroy();
    },
  };
}

/**
 * The full sample invoice as `business` signs it: its ids, and its TIN as the supplier's, so its
 * invoices raise no supplier_tin_mismatch warning; and `fresh`, the same body under a new IRN for
 * each sign (`prefix`, the process id and a counter).
 */
export function signingBody(
  business: { business_id: string; service_id: string },
  tin: string,
  prefix: string,
) {
  const body = fs
    .readFileSync(path.join(shared, "fixtures", "invoice-full.json"), "utf8")
    .replaceAll("{{BUSINESS_ID}}", business.business_id)
    .replaceAll("{{SERVICE_ID}}", business.service_id)
    .replace('"tin": "20198222-0002"', `"tin": "${tin}"`);
  if (!body.includes('"irn": "INV0001-')) throw new Error("the fixture's IRN is not where it was");
  let counter = 0;
  const fresh = () => body.replace(/"irn": "INV0001-/, `"irn": "${prefix}${process.pid}N${++counter}-`);
  return { body, fresh };
}

/**
 * One business with an API key, and the HS catalog, in the database of `env` before a server
 * starts on it: what a benchmark of one business's requests signs with.
 */
export async function benchBusiness(env: Record<string, string>, name: string, tin: string) {
  const setup = await createContext(loadConfig({ ...env, EINVOICE_LOG_LEVEL: "silent" }));
  try {
    const business = await setup.businesses.add({ name, tin });
    const key = await setup.businesses.createKey(business.business_id);
    await setup.reference.importProducts(path.join(shared, "data", "hs2022", "harmonized-system.csv"));
    return { business, key };
  } finally {
    await setup.close();
  }
}
