#!/usr/bin/env node
/*
 * `npm test`: the suite in four layers, each file in a process of its own, several at once.
 *
 *   unit      pure logic: no database, no HTTP
 *   service   a real database on each engine, driven through the services and repositories
 *   api       the HTTP contract, through `inject` or a socket
 *   scenario  the heavy ones: processes started and killed, browsers, thousands of invoices, fuzzing
 *
 * A file's layer, and the engines it runs on, are written in LAYERS below, by path (a path ending in
 * "/" stands for a whole folder; the longest match wins). The engines:
 *
 *   both    the file stores what it proves something about: it runs on SQLite and, when
 *           EINVOICE_TEST_DATABASE_URL names a PostgreSQL database, again on PostgreSQL
 *   sqlite  it needs an app on a database only to reach logic that no engine changes (validation,
 *           QR and PDF rendering, what a browser shows), or tests SQLite itself: once, on SQLite
 *   none    it opens no database: once, with EINVOICE_TEST_ENGINE=none, under which test/helpers.ts
 *           refuses to make one (so a file listed here by mistake fails instead of passing unseen)
 *
 * A test file missing from LAYERS runs in the service layer on both engines, and is named in the
 * summary so it gets its place.
 *
 * The layers run one after the other, so each has a wall time of its own; within a layer the files
 * of both engines share one pool of EINVOICE_TEST_CONCURRENCY processes (default below), the
 * slowest first (as the last run measured them, kept in node_modules/.cache). Each file's output is
 * printed whole when it ends. `npm test -- FILE…` runs those files only, each on its engines; it
 * exits 1 when any file fails.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const LAYERS = {
  unit: {
    none: [
      "test/config/",
      "test/crypto/canonical.test.ts",
      "test/crypto/irn.test.ts",
      "test/crypto/keyring.test.ts",
      "test/crypto/qr.test.ts",
      "test/crypto/sealer.test.ts",
      "test/http/xml.test.ts",
      "test/invoices/payments/payment-decision.test.ts",
      "test/invoices/transitions.test.ts",
      "test/invoices/validation/rules.test.ts",
      "test/reference/lgas.test.ts",
      "test/schema/",
      "test/scripts/",
      "test/threads/",
      "test/transmission/authority/",
      "test/unit/",
    ],
  },
  service: {
    both: ["test/db/", "test/outbox/settle-policy.test.ts", "test/reference/product-codes.test.ts"],
    // Checkpoints are SQLite's: on PostgreSQL the file would only skip.
    sqlite: ["test/db/checkpointer.test.ts"],
  },
  api: {
    both: [
      "test/audit-log/",
      "test/client/",
      "test/crypto/signatures.test.ts",
      "test/dashboard/dashboard.test.ts",
      "test/http/",
      "test/idempotency/idempotency.test.ts",
      "test/invoices/bounds.test.ts",
      "test/invoices/lifecycle.test.ts",
      "test/invoices/payments/payments.test.ts",
      "test/invoices/registration/",
      "test/invoices/validation/validation.test.ts",
      "test/reference/reference.test.ts",
      "test/security/at-rest.test.ts",
      "test/security/data-key-rotation.test.ts",
      "test/security/limits.test.ts",
      "test/security/rate-limits.test.ts",
      "test/security/tenants.test.ts",
      "test/verification/",
    ],
    sqlite: [
      "test/http/json-body.test.ts",
      "test/http/openapi.test.ts",
      "test/invoices/validation/",
      "test/qr/qr.test.ts",
      "test/qr/qr-keys.test.ts",
      "test/security/bidi.test.ts",
    ],
    none: ["test/http/answer-schemas.test.ts", "test/simulators/mbs/", "test/transmission/mbs-rules.test.ts"],
  },
  scenario: {
    both: [
      "test/cli/",
      "test/idempotency/store-bounds.test.ts",
      "test/invoices/records/pdf-fairness.test.ts",
      "test/qr/qr-fairness.test.ts",
      "test/scale/",
      "test/security/crash.test.ts",
      "test/security/fuzz.test.ts",
      "test/security/hostile.test.ts",
      "test/transmission/",
    ],
    sqlite: [
      "test/dashboard/browser.test.ts",
      "test/http/docs.test.ts",
      "test/invoices/records/pdf-route.test.ts",
      "test/invoices/validation/property.test.ts",
      "test/qr/qr-corpus.test.ts",
      "test/qr/qr-hostile-images.test.ts",
      "test/qr/qr-timing.test.ts",
    ],
    none: [
      "test/invoices/records/pdf.test.ts",
      "test/invoices/records/pdf-pool.test.ts",
      "test/invoices/validation/validation-pool.test.ts",
      "test/simulators/mbs/cli.test.ts",
    ],
  },
};
const LAYER_NAMES = Object.keys(LAYERS);

const POSTGRES = Boolean(process.env.EINVOICE_TEST_DATABASE_URL);
const CORES = os.availableParallelism();
// Most files spend their time waiting (timers, sockets, child processes, PostgreSQL), so more run
// at once than there are cores; past this, timing-sensitive files start to see a busy machine.
const CONCURRENCY = Number(process.env.EINVOICE_TEST_CONCURRENCY) || Math.max(2, CORES * 3);
// A file that never ends (a leaked handle keeps its process alive) is killed and counted failed.
const FILE_TIMEOUT_MS = Number(process.env.EINVOICE_TEST_FILE_TIMEOUT_MS) || 15 * 60_000;
const TIMES_FILE = path.join("node_modules", ".cache", "einvoice-test-times.json");
// Where GNU time is installed, each file's CPU seconds (its child processes included) are reported
// too: on a small machine they, more than the wall times, say what makes a layer slow.
const GNU_TIME = fs.existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;
const CPU_MARK = "einvoice-test-cpu";
// The run's name: test/helpers.ts puts it in the names of its PostgreSQL databases.
const RUN = `${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;

function find(dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const full = path.join(dir, entry.name);
      return entry.isDirectory() ? find(full) : entry.name.endsWith(".test.ts") ? [full] : [];
    })
    .sort();
}

/** The layer and engines of `file`: its longest match in LAYERS. */
function placeOf(file) {
  let best;
  for (const layer of LAYER_NAMES) {
    for (const [engines, entries] of Object.entries(LAYERS[layer])) {
      for (const entry of entries) {
        const matches = entry.endsWith("/") ? file.startsWith(entry) : file === entry;
        if (matches && (!best || entry.length > best.entry.length)) best = { layer, engines, entry };
      }
    }
  }
  return best
    ? { layer: best.layer, engines: best.engines, listed: true }
    : { layer: "service", engines: "both", listed: false };
}

const args = process.argv.slice(2).map((a) => path.relative(process.cwd(), path.resolve(a)));
const files =
  args.length > 0 ? args.flatMap((a) => (fs.statSync(a).isDirectory() ? find(a) : [a])) : find("test");
const unlisted = [];
const jobs = [];
for (const file of files) {
  const place = placeOf(file);
  if (!place.listed) unlisted.push(file);
  const engines = place.engines === "both" ? ["sqlite", ...(POSTGRES ? ["postgres"] : [])] : [place.engines];
  for (const engine of engines)
    jobs.push({ file, layer: place.layer, engine, once: place.engines !== "both" });
}

let lastTimes = {};
try {
  lastTimes = JSON.parse(fs.readFileSync(TIMES_FILE, "utf8"));
} catch {
  // No run yet on this checkout: the files start in the order they are found.
}
const key = (job) => `${job.engine} ${job.file}`;

/** One file in a process of its own, its output kept until it ends. */
function run(job) {
  return new Promise((resolve) => {
    const started = performance.now();
    // The file runs as a script (node:test reports from inside it): no runner process in between.
    const node = [
      process.execPath,
      "--import",
      "./test/preload.mjs",
      "--import",
      "tsx",
      "--test-reporter=spec",
      job.file,
    ];
    const command = GNU_TIME ? [GNU_TIME, "-f", `${CPU_MARK} %U %S`, ...node] : node;
    const child = spawn(command[0], command.slice(1), {
      env: {
        ...process.env,
        EINVOICE_TEST_ENGINE: job.engine,
        EINVOICE_TEST_RUN: RUN,
        FORCE_COLOR: process.stdout.isTTY ? "1" : "0",
      },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const chunks = [];
    child.stdout.on("data", (c) => chunks.push(c));
    child.stderr.on("data", (c) => chunks.push(c));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      process.kill(-child.pid, "SIGKILL");
    }, FILE_TIMEOUT_MS);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      // Whatever the file started and left behind goes with it.
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group is gone already.
      }
      let output = Buffer.concat(chunks).toString("utf8");
      const cpu = new RegExp(`^${CPU_MARK} ([\\d.]+) ([\\d.]+)\\n?`, "m").exec(output);
      if (cpu) output = output.replace(cpu[0], "");
      const count = (name) => Number(new RegExp(`^ℹ ${name} (\\d+)$`, "m").exec(output)?.[1] ?? 0);
      resolve({
        ...job,
        seconds: (performance.now() - started) / 1000,
        cpu: cpu ? Number(cpu[1]) + Number(cpu[2]) : 0,
        started,
        ended: performance.now(),
        ok: code === 0 && !timedOut,
        exit: timedOut ? `killed after ${FILE_TIMEOUT_MS / 1000} s` : (signal ?? code),
        tests: count("tests"),
        pass: count("pass"),
        fail: count("fail") + count("cancelled"),
        skipped: count("skipped") + count("todo"),
        output,
      });
    });
  });
}

/** Runs `list` with at most `limit` at once, the slowest (last time) first; prints each as it ends. */
async function pool(list, limit) {
  const queue = [...list].sort((a, b) => (lastTimes[key(b)] ?? 0) - (lastTimes[key(a)] ?? 0));
  const results = [];
  const worker = async () => {
    for (let job = queue.shift(); job; job = queue.shift()) {
      const result = await run(job);
      results.push(result);
      const label = job.once && job.engine === "none" ? "no database" : job.engine;
      const cpu = GNU_TIME ? `, ${result.cpu.toFixed(1)} s CPU` : "";
      console.log(
        `\n# ${result.ok ? "ok" : "FAILED"} ${job.file} [${label}] ${result.seconds.toFixed(1)} s${cpu}`,
      );
      process.stdout.write(result.output.endsWith("\n") ? result.output : `${result.output}\n`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, list.length) }, worker));
  return results;
}

const fmt = (s) =>
  s >= 60 ? `${Math.floor(s / 60)} min ${(s % 60).toFixed(0).padStart(2, "0")} s` : `${s.toFixed(1)} s`;
const span = (rs) =>
  rs.length === 0 ? 0 : (Math.max(...rs.map((r) => r.ended)) - Math.min(...rs.map((r) => r.started))) / 1000;

console.log(
  `# ${jobs.length} file runs of ${files.length} files, ${CONCURRENCY} at a time, layer by layer: ${LAYER_NAMES.join(", ")}`,
);
const suiteStart = performance.now();
const all = [];
for (const layer of LAYER_NAMES) {
  const list = jobs.filter((j) => j.layer === layer);
  if (list.length === 0) continue;
  console.log(`\n# layer ${layer}: ${list.length} file runs`);
  all.push(...(await pool(list, CONCURRENCY)));
}
const total = (performance.now() - suiteStart) / 1000;

if (POSTGRES) {
  // What a killed file's process could not drop (test/helpers.ts drops its own database at its end).
  const { default: pg } = await import("pg");
  const admin = new pg.Client({ connectionString: process.env.EINVOICE_TEST_DATABASE_URL });
  await admin.connect();
  const left = await admin.query("select datname from pg_database where datname like $1", [
    `einvoice_test_${RUN}_%`,
  ]);
  for (const { datname } of left.rows) await admin.query(`drop database if exists ${datname} with (force)`);
  await admin.end();
}

fs.mkdirSync(path.dirname(TIMES_FILE), { recursive: true });
fs.writeFileSync(
  TIMES_FILE,
  JSON.stringify({ ...lastTimes, ...Object.fromEntries(all.map((r) => [key(r), r.seconds])) }),
);

const sum = (rs, field) => rs.reduce((n, r) => n + r[field], 0);
const row = (cells) =>
  `# ${cells.map((c, i) => (i < 2 ? String(c).padEnd(10) : String(c).padStart(7))).join(" ")}`;
console.log(`\n# summary (wall times; within a layer both engines ran at once, so their times overlap)`);
const cpuOf = (rs) => (GNU_TIME ? [fmt(sum(rs, "cpu"))] : []);
console.log(
  row(["layer", "engine", "files", "tests", "pass", "fail", "skipped", "wall", ...(GNU_TIME ? ["cpu"] : [])]),
);
for (const layer of LAYER_NAMES) {
  const inLayer = all.filter((r) => r.layer === layer);
  if (inLayer.length === 0) continue;
  const groups = [
    ["sqlite", inLayer.filter((r) => r.engine === "sqlite" && !r.once)],
    ["postgres", inLayer.filter((r) => r.engine === "postgres")],
    ["once", inLayer.filter((r) => r.once)],
  ].filter(([, rs]) => rs.length > 0);
  if (groups.length > 1) groups.push(["all", inLayer]);
  for (const [engine, rs] of groups) {
    console.log(
      row([
        layer,
        engine,
        rs.length,
        sum(rs, "tests"),
        sum(rs, "pass"),
        sum(rs, "fail"),
        sum(rs, "skipped"),
        fmt(span(rs)),
        ...cpuOf(rs),
      ]),
    );
  }
}
console.log(
  row([
    "total",
    "",
    all.length,
    sum(all, "tests"),
    sum(all, "pass"),
    sum(all, "fail"),
    sum(all, "skipped"),
    fmt(total),
    ...cpuOf(all),
  ]),
);
const once = all.filter((r) => r.once);
console.log(
  `# ${once.length} files ran once (${once.filter((r) => r.engine === "none").length} with no database, ${once.filter((r) => r.engine === "sqlite").length} on SQLite only), ${all.length - once.length} file runs on ${POSTGRES ? "both engines" : "SQLite"}`,
);
console.log(
  `# slowest: ${[...all]
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, 8)
    .map((r) => `${r.file} [${r.engine}] ${r.seconds.toFixed(0)} s`)
    .join(", ")}`,
);
if (unlisted.length > 0) {
  console.log(
    `# not in scripts/test.mjs's LAYERS, so run as service on both engines: ${unlisted.join(", ")}`,
  );
}
if (!POSTGRES) {
  console.log(
    "# PostgreSQL skipped: set EINVOICE_TEST_DATABASE_URL=postgres://… to run the engine-dependent files on it too",
  );
}
const failed = all.filter((r) => !r.ok);
for (const r of failed) console.log(`# FAILED ${r.file} [${r.engine}] (exit ${r.exit})`);
process.exit(failed.length > 0 ? 1 : 0);
