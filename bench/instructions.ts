/**
 * Instructions a sign, counted: this service's `POST /sign` and the bare durable sign
 * (bench/bare-sign.ts) each run under valgrind's callgrind, which counts the instructions every
 * thread executes, not the time it takes. The count does not move with what else the machine is
 * doing, where a rate on these 2-core VMs moves by a fifth between runs minutes apart (RESULTS.md):
 * it is the figure to decide a change of the sign's own work by. It leaves out what the kernel does
 * (system calls, the fsync, thread switches) and any wait, which only a rate shows.
 *
 * Each server gets `--warm` signs with counting off (callgrind's instrumentation off: JIT compiled,
 * caches full), then `--signs` counted, from `--connections` connections; the count is dumped per
 * thread. Then the same time again with no request is counted: the server's timers run by the clock,
 * and under valgrind's slowness the signs' window holds about fifty times their share of a sign at
 * full speed; the figure less that idle window's ("net") is the sign's own work. The event loop is
 * thread 1; each line names a thread's heaviest kinds of work.
 *   npm run bench:instructions -- [--signs 1000] [--warm 5000] [--connections 16] [--only sign,bare,keyed]
 *                                 [--keep DIR] [--engine sqlite|postgres]
 * `keyed` (only when named) is this service's sign with a new Idempotency-Key on every request.
 * `--keep DIR` keeps the counted dumps there (DIR/<server>.<thread>, the idle window's
 * DIR/<server>-idle.<thread>), for callgrind_annotate to name
 * the C++ functions that took them (JIT-compiled JavaScript has no names there: a CPU profile has).
 * `--engine postgres` counts both on PostgreSQL (EINVOICE_BENCH_DATABASE_URL, a schema of their own):
 * this service with one API process, and the bare durable sign of PostgreSQL (bench/bare-sign-pg.ts)
 * in one process. The database's own work is not counted in instructions (it runs outside valgrind):
 * its CPU a sign over the counted window is printed instead, with the transactions that stored the
 * signs (a batch's commit each).
 * Needs valgrind (Debian's package `valgrind`); about 3 minutes for both servers on a 2-core VM.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { benchBusiness, benchDatabase, freePort, machine, postgresCpuMs, root, signingBody } from "./lib.ts";

const { values: args } = parseArgs({
  options: {
    signs: { type: "string", default: "1000" },
    warm: { type: "string", default: "5000" },
    connections: { type: "string", default: "16" },
    only: { type: "string", default: "sign,bare" },
    keep: { type: "string" },
    engine: { type: "string", default: "sqlite" },
  },
});
const [signs, warm, connections] = [Number(args.signs), Number(args.warm), Number(args.connections)];
try {
  execFileSync("valgrind", ["--version"], { stdio: "ignore" });
} catch {
  throw new Error("bench:instructions needs valgrind (Debian: apt-get install valgrind)");
}
// vgdb, which turns the counting on and off, names its pipes after these: the same in both processes.
const vgdbEnv = { USER: os.userInfo().username, LOGNAME: os.userInfo().username, HOST: "127.0.0.1" };

const postgres = args.engine === "postgres";
const database = await benchDatabase(args.engine);
const tin = "12345678-0001";
const { business, key } = await benchBusiness(database.env, "Bench Instructions Ltd", tin);
const { fresh } = signingBody(business, tin, "I");

type Target = {
  key: string;
  name: string;
  route: string;
  argv: string[];
  headers: Record<string, string>;
  /** A new Idempotency-Key on every request. */
  keyed?: boolean;
  /** The table its signs are stored in, on PostgreSQL. */
  table: string;
};
const json = { "content-type": "application/json" };
const targets: Target[] = [
  {
    key: "sign",
    name: "this service's sign",
    route: "/api/v1/einvoice/sign",
    argv: ["bin/einvoice.js", "serve"],
    headers: { ...json, "api-key": key.api_key, "api-secret": key.api_secret },
    table: "invoices",
  },
  {
    key: "keyed",
    name: "this service's sign with an Idempotency-Key",
    route: "/api/v1/einvoice/sign",
    argv: ["bin/einvoice.js", "serve"],
    headers: { ...json, "api-key": key.api_key, "api-secret": key.api_secret },
    keyed: true,
    table: "invoices",
  },
  // In this process (tsx's loader), not tsx's CLI, whose script runs in a child valgrind would not follow.
  {
    key: "bare",
    name: "bare durable sign",
    route: "/sign",
    argv: ["--import", "tsx", postgres ? "bench/bare-sign-pg.ts" : "bench/bare-sign.ts"],
    headers: json,
    table: "bare_invoices",
  },
];

/** What kind of work a function is, by its name in callgrind's listing. */
const KINDS: Array<[string, RegExp]> = [
  ["Ed25519", /fe_mul|fe_sq|cmov|ge_|sha512|table_select|ed25519/],
  ["RSA", /bn_|BN_|rsa_|RSA_/],
  ["SHA-256", /sha256/],
  ["AES-GCM", /aes|gcm|ghash/i],
  ["SQLite", /better_sqlite3/],
  ["JSON parse", /JsonParser/],
  ["JSON stringify", /JsonStringifier/],
  ["V8's compiler", /compiler::/],
  ["GC", /Scaveng|Heap::|Marking|Sweep|Evacuat|MemoryChunk/],
  ["messages between threads", /ValueSerializer|ValueDeserializer/],
  ["JIT-compiled JavaScript", /^\?\?\?:0x[0-9a-f]+/],
  ["V8's builtins", /Builtins_/],
  ["V8's runtime", /v8::/],
  ["libc", /libc\.so/],
];

/** A thread's instructions, in all and by kind, from one callgrind dump. */
function countsOf(file: string): { total: number; kinds: Map<string, number> } {
  const listing = execFileSync("callgrind_annotate", ["--inclusive=no", "--threshold=100", file], {
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  const kinds = new Map<string, number>();
  let total = 0;
  for (const line of listing.split("\n")) {
    const match = /^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$/.exec(line);
    if (!match || match[2]?.includes("PROGRAM TOTALS")) continue;
    const count = Number(match[1]?.replaceAll(",", ""));
    const name = match[2] ?? "";
    const kind = KINDS.find(([, pattern]) => pattern.test(name))?.[0] ?? "other";
    kinds.set(kind, (kinds.get(kind) ?? 0) + count);
    total += count;
  }
  return { total, kinds };
}

/**
 * The fsyncs a thread made in one dump: each group commit makes one on the event loop (WAL,
 * `synchronous = FULL`), so the signs a commit. Under valgrind a batch holds fewer signs than at
 * full speed, and a batch's own work (its reads, its statements' building, its commit) is shared by
 * fewer: the count a sign moves with it from run to run.
 */
function fsyncsIn(file: string): number {
  const text = fs.readFileSync(file, "utf8");
  const ids = new Set<string>();
  for (const match of text.matchAll(/^c?fn=\((\d+)\) f(?:data)?sync$/gm)) ids.add(match[1] as string);
  let calls = 0;
  for (const match of text.matchAll(/^cfn=\((\d+)\).*\ncalls=(\d+)/gm))
    if (ids.has(match[1] as string)) calls += Number(match[2]);
  return calls;
}

/**
 * On PostgreSQL: the signs stored in `table` so far, and the transactions that stored them (a row's
 * `xmin` is the transaction that inserted it, and a sign's row is not updated here: a batch's
 * commit each).
 */
async function stored(table: string): Promise<{ signs: number; transactions: number }> {
  const { rows } = await database.query(
    `select count(*)::int as signs, count(distinct xmin::text)::int as transactions from ${table}`,
  );
  return rows[0] as { signs: number; transactions: number };
}

async function serving(url: string, server: ChildProcess): Promise<void> {
  for (let i = 0; i < 2400; i++) {
    if (server.exitCode !== null) throw new Error(`the server stopped (exit code ${server.exitCode})`);
    if (
      await fetch(url).then(
        (r) => r.status < 500,
        () => false,
      )
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${url} did not come up under valgrind`);
}

async function count(target: Target): Promise<{ gross: number; net: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "einvoice-callgrind-"));
  const port = await freePort();
  const server = spawn(
    "valgrind",
    [
      "--tool=callgrind",
      "--instr-atstart=no",
      "--separate-threads=yes",
      `--callgrind-out-file=${dir}/callgrind.%p`,
      process.execPath,
      ...target.argv,
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        ...database.env,
        ...vgdbEnv,
        EINVOICE_BARE_DB: path.join(database.dir, "bare.db"),
        EINVOICE_BARE_DATABASE_URL: database.url,
        EINVOICE_BARE_PROCESSES: "0",
        PORT: String(port),
      },
      stdio: ["ignore", "ignore", "ignore"],
    },
  );
  const control = (...command: string[]) =>
    execFileSync("callgrind_control", [...command, String(server.pid)], {
      env: { ...process.env, ...vgdbEnv },
      stdio: "ignore",
    });
  const url = `http://127.0.0.1:${port}`;
  const load = (amount: number) =>
    autocannon({
      url,
      connections,
      amount,
      timeout: 120,
      requests: [
        {
          method: "POST",
          path: target.route,
          headers: target.headers,
          setupRequest: (r) => ({
            ...r,
            body: fresh(),
            ...(target.keyed ? { headers: { ...r.headers, "idempotency-key": randomUUID() } } : {}),
          }),
        },
      ],
    });
  let onDatabase: string | undefined;
  try {
    await serving(`${url}/`, server);
    const warmed = await load(warm);
    const before = postgres ? { cpu: postgresCpuMs() ?? 0, ...(await stored(target.table)) } : undefined;
    control("--instr=on");
    const started = Date.now();
    const counted = await load(signs);
    const took = Date.now() - started;
    control("--dump");
    // The database's CPU read before `stored` adds its own read to it.
    const after = before && { cpu: postgresCpuMs() ?? 0, ...(await stored(target.table)) };
    // The same time again with no request: what the server's timers do meanwhile (the product
    // codes' reload every 5 s, the outbox's polls) is counted in the signs' window too, where
    // valgrind's slowness gives it about fifty times its share of a sign at full speed.
    await new Promise((resolve) => setTimeout(resolve, took));
    control("--dump");
    if (before && after) {
      // The database's CPU in the idle window is what the server's timers cost it (the outbox's
      // polls, a look at the credentials' counter every 50 ms), and the read of `stored` after the
      // signs.
      const idle = (postgresCpuMs() ?? 0) - after.cpu;
      const [signed, transactions] = [after.signs - before.signs, after.transactions - before.transactions];
      const each = (ms: number) => Math.round((ms * 1000) / signed);
      onDatabase =
        `  PostgreSQL: ${each(after.cpu - before.cpu)} µs of CPU a sign (the same time idle ${each(idle)}: ` +
        `${each(after.cpu - before.cpu - idle)} net); ${transactions} transactions stored the ${signed} signs, ` +
        `${(signed / transactions).toFixed(1)} a transaction`;
    }
    control("--instr=off");
    const failed = warmed.non2xx + warmed.errors + counted.non2xx + counted.errors;
    if (failed > 0) throw new Error(`${target.name}: ${failed} requests failed`);
  } finally {
    server.kill("SIGTERM");
    await new Promise((resolve) => server.once("exit", resolve));
  }
  // The dumps made while counting: callgrind.<pid>.1-<thread> with the signs, .2-<thread> the idle
  // window after them; the files written at exit hold nothing counted.
  const dumps = (window: number) =>
    fs
      .readdirSync(dir)
      .filter((f) => f.includes(`.${window}-`))
      .sort();
  // A dump's thread, as callgrind numbers it at the end of the file's name.
  const threadOf = (file: string) => file.split("-").at(-1) as string;
  const idle = new Map(
    dumps(2).map((file) => [Number(threadOf(file)), countsOf(path.join(dir, file)).total]),
  );
  let all = 0;
  let compiling = 0;
  let timers = 0;
  let fsyncs = 0;
  const k = (n: number) => `${Math.round(n / signs / 1000).toLocaleString("en-US")}k`;
  const lines: string[] = [];
  for (const file of dumps(1)) {
    const { total, kinds } = countsOf(path.join(dir, file));
    if (total === 0) continue;
    all += total;
    const thread = Number(threadOf(file));
    // The event loop's: the checkpointer's thread makes fsyncs of its own.
    if (thread === 1) fsyncs += fsyncsIn(path.join(dir, file));
    const idleTotal = idle.get(thread) ?? 0;
    const sorted = [...kinds].sort((a, b) => b[1] - a[1]);
    if (sorted[0]?.[0] === "V8's compiler") compiling += total;
    else timers += idleTotal;
    const heaviest = sorted
      .slice(0, 4)
      .map(([kind, n]) => `${kind} ${k(n)}`)
      .join(", ");
    const name = `thread ${String(thread).padStart(2)}${thread === 1 ? " (event loop)" : ""}`;
    lines.push(`  ${name.padEnd(24)} ${k(total).padStart(7)} (idle ${k(idleTotal)})   ${heaviest}`);
  }
  if (args.keep) {
    fs.mkdirSync(args.keep, { recursive: true });
    for (const [window, name] of [
      [1, target.key],
      [2, `${target.key}-idle`],
    ] as const)
      for (const file of dumps(window))
        fs.copyFileSync(path.join(dir, file), path.join(args.keep, `${name}.${threadOf(file)}`));
  }
  fs.rmSync(dir, { recursive: true, force: true });
  // V8's optimizing compiler runs on threads of its own, more under valgrind's slowness than without
  // it and by an amount that moves from run to run: the figure without those threads is the steadier,
  // and without the idle window's count too (`net`), the sign's own.
  const net = all - compiling - timers;
  console.log(
    `${target.name}: ${k(all)} instructions a sign; ${k(all - compiling)} without V8's compiler threads, ` +
      `of which ${k(timers)} the same time idle: ${k(net)} net`,
  );
  for (const line of lines) console.log(line);
  if (fsyncs > 0)
    console.log(`  ${fsyncs} commits (fsyncs) counted: ${(signs / fsyncs).toFixed(1)} signs a commit`);
  if (onDatabase) console.log(onDatabase);
  return { gross: all - compiling, net };
}

console.log(`${machine()}; ${warm} signs uncounted, then ${signs} counted, ${connections} connections`);
const only = args.only.split(",").map((word) => word.trim());
const totals = new Map<string, { gross: number; net: number }>();
try {
  for (const target of targets.filter((t) => only.includes(t.key)))
    totals.set(target.key, await count(target));
} finally {
  await database.drop();
}
const [service, bare] = [totals.get("sign"), totals.get("bare")];
if (service !== undefined && bare !== undefined) {
  console.log(
    `bare / sign in instructions, without V8's compiler threads: ${(bare.gross / service.gross).toFixed(2)}; ` +
      `net of the idle windows: ${(bare.net / service.net).toFixed(2)}`,
  );
}
const keyed = totals.get("keyed");
if (service !== undefined && keyed !== undefined) {
  console.log(
    `sign / keyed sign in instructions, without V8's compiler threads: ${(service.gross / keyed.gross).toFixed(2)}; ` +
      `net of the idle windows: ${(service.net / keyed.net).toFixed(2)}`,
  );
}
