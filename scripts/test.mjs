#!/usr/bin/env node
/*
 * `npm test`: the suite in four layers, several processes at once.
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
 * The layers start in order, unit first, and the files of both engines share one pool of
 * EINVOICE_TEST_CONCURRENCY processes (default below), each layer's slowest first as the last run
 * measured them (node_modules/.cache/einvoice-test-times.json). A layer's last processes overlap the
 * next layer's first: no process slot idles at a layer's end. Each layer's wall time is reported,
 * from its first process's start to its last one's end, per engine too. A scenario file has a
 * process of its own: it starts servers, kills workers, or measures time. The files of the other
 * layers run in groups of up to EINVOICE_TEST_GROUP_SIZE per process, one after the other
 * (test/launch.mjs): each process loads the service once, and for most of these files that load costs
 * more than their tests. Each process's output is printed whole when it ends.
 *
 * `npm test -- FILE…` runs those files only (folders: their files), each on its engines. The run
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
      "test/crypto/signer.test.ts",
      "test/docs/",
      "test/http/xml.test.ts",
      "test/inbox/received-checks.test.ts",
      "test/invoices/payments/payment-decision.test.ts",
      "test/documents/pdf/pdf-bounds.test.ts",
      "test/invoices/transitions.test.ts",
      "test/invoices/registration/batch-outcomes.test.ts",
      "test/invoices/registration/preparation.test.ts",
      "test/idempotency/deferred-claim.test.ts",
      "test/documents/validation/rules.test.ts",
      "test/reference/lgas.test.ts",
      "test/reference/currencies.test.ts",
      "test/schema/",
      "test/scripts/",
      "test/threads/",
      "test/transmission/authority/",
      "test/unit/",
    ],
  },
  service: {
    both: [
      "test/db/",
      "test/idempotency/batch-statements.test.ts",
      "test/inbox/hostile-pull.test.ts",
      "test/outbox/",
      "test/reference/product-codes.test.ts",
    ],
    // Checkpoints are SQLite's: on PostgreSQL the file would only skip.
    sqlite: ["test/db/checkpointer.test.ts"],
  },
  api: {
    both: [
      "test/audit-log/",
      "test/businesses/",
      "test/crypto/signatures.test.ts",
      "test/dashboard/dashboard.test.ts",
      "test/dashboard/inbox-pages.test.ts",
      "test/dashboard/long-documents.test.ts",
      "test/dashboard/ubl-downloads.test.ts",
      "test/http/",
      "test/idempotency/claim-with-work.test.ts",
      "test/idempotency/idempotency.test.ts",
      "test/inbox/",
      "test/invoices/bounds.test.ts",
      "test/invoices/lifecycle.test.ts",
      "test/invoices/payments/payments.test.ts",
      "test/invoices/registration/",
      "test/documents/validation/validation.test.ts",
      "test/reference/reference.test.ts",
      "test/security/at-rest.test.ts",
      "test/security/data-key-rotation.test.ts",
      "test/security/limits.test.ts",
      "test/security/rate-limits.test.ts",
      "test/security/tenants.test.ts",
    ],
    sqlite: [
      // What the typed client sends and how it retries, and the tokens, codes and pages of
      // verification: the rows behind them are written and read alike on both engines.
      "test/client/",
      "test/http/json-body.test.ts",
      "test/http/openapi.test.ts",
      "test/documents/validation/",
      // UBL is read and written alike whatever stores the invoice it becomes.
      "test/documents/ubl/",
      // Crafted and mutated UBL over a socket: refused before anything engine-specific is read.
      "test/security/hostile-xml.test.ts",
      "test/qr/qr.test.ts",
      "test/qr/qr-keys.test.ts",
      "test/security/bidi.test.ts",
      "test/verification/",
    ],
    none: ["test/http/answer-schemas.test.ts", "test/simulators/mbs/", "test/transmission/mbs-rules.test.ts"],
  },
  scenario: {
    both: [
      "test/cli/",
      "test/idempotency/store-bounds.test.ts",
      "test/inbox/collect.test.ts",
      "test/outbox/outbox.test.ts",
      "test/outbox/outbox-safety.test.ts",
      "test/outbox/shutdown.test.ts",
      "test/outbox/worker-kill.test.ts",
      // The Postman collection through newman against a sandbox server: it signs and pays invoices.
      "test/postman/",
      "test/qr/qr-fairness.test.ts",
      "test/scale/",
      "test/security/crash.test.ts",
      "test/security/fuzz.test.ts",
      "test/security/hostile.test.ts",
      "test/transmission/",
    ],
    sqlite: [
      // An attack through the pull: refused or set aside before anything engine-specific is written.
      "test/security/hostile-upstream.test.ts",
      "test/dashboard/browser.test.ts",
      // The docs' walk-throughs pasted into bash against a sandbox: what they show is the engine's
      // default, SQLite, as `npm start` makes it.
      "test/docs/walkthroughs.test.ts",
      "test/http/docs.test.ts",
      // Answers before the body over real sockets: about 450 MB through the loopback, and the
      // lingering close's time bounds measured, in a process of its own. No engine changes them.
      "test/http/early-answers.test.ts",
      // A received invoice's PDF: rendered alike from either engine's row.
      "test/inbox/received-pdf.test.ts",
      // The PDF thread's fair queue: the invoices it renders are read alike on both engines.
      "test/invoices/records/pdf-fairness.test.ts",
      "test/invoices/records/pdf-route.test.ts",
      "test/documents/validation/property.test.ts",
      "test/qr/qr-corpus.test.ts",
      "test/qr/qr-hostile-images.test.ts",
      "test/qr/qr-timing.test.ts",
    ],
    none: [
      "test/documents/pdf/pdf.test.ts",
      "test/documents/pdf/pdf-pool.test.ts",
      "test/documents/validation/validation-pool.test.ts",
      "test/documents/ubl/ubl-read-pool.test.ts",
      "test/simulators/mbs/cli.test.ts",
      // The MBS collection through newman against the simulator, a process of its own.
      "test/postman/mbs-postman.test.ts",
    ],
  },
};
const LAYER_NAMES = Object.keys(LAYERS);
/** The layers whose files each have a process of their own. */
const ALONE = new Set(["scenario"]);

const POSTGRES = Boolean(process.env.EINVOICE_TEST_DATABASE_URL);
const CORES = os.availableParallelism();
// The files wait a good part of their time (timers, sockets, child processes, PostgreSQL). On a
// 2-core machine, both engines: 3 processes at once took 9 min 55 s (15 min 42 s of CPU, the cores
// 79% busy), 4 took 7 min 48 s (13 min 10 s of CPU). When each thread a test's app started still
// cost a second of CPU to load (before src/threads/thread-bundle.ts), 4 had been slower than 3.
// With 6, on a slower machine, the scenarios that answer from their own event loop timed out.
const CONCURRENCY = Number(process.env.EINVOICE_TEST_CONCURRENCY) || Math.max(2, CORES * 2);
// Fewer processes load the service fewer times; more per group leave fewer groups to even out a layer.
const GROUP_SIZE = Number(process.env.EINVOICE_TEST_GROUP_SIZE) || 6;
// A process that never ends (a leaked handle keeps it alive) is killed and its files counted failed.
const PROCESS_TIMEOUT_MS = Number(process.env.EINVOICE_TEST_PROCESS_TIMEOUT_MS) || 15 * 60_000;
const TIMES_FILE = path.join("node_modules", ".cache", "einvoice-test-times.json");
// Where GNU time is installed, each process's CPU seconds (its child processes included) are reported
// too: on a small machine they, more than the wall times, say what makes a layer slow.
const GNU_TIME = fs.existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;
const CPU_MARK = "einvoice-test-cpu";
// The run's name: test/helpers.ts puts it in the names of its PostgreSQL databases.
const RUN = `${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;
// What the run's processes share (test/helpers.ts: the sandbox secrets its apps use), removed at its end.
const SHARED = fs.mkdtempSync(path.join(os.tmpdir(), "einvoice-test-run-"));
process.on("exit", () => fs.rmSync(SHARED, { recursive: true, force: true }));

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

let lastTimes = {};
try {
  lastTimes = JSON.parse(fs.readFileSync(TIMES_FILE, "utf8"));
} catch {
  // No run yet on this checkout: the files start in the order they are found.
}
/**
 * Without a measured time (a fresh checkout, as in CI) these start first, in this order: the slowest
 * files as measured on a 2-core machine, whose end otherwise decides the run's.
 */
const SLOWEST = [
  "test/qr/qr-timing.test.ts",
  "test/transmission/mbs.test.ts",
  "test/cli/cli.test.ts",
  "test/security/fuzz.test.ts",
  "test/transmission/outbox.test.ts",
  "test/transmission/outbox-safety.test.ts",
  "test/inbox/collect.test.ts",
  "test/dashboard/dashboard.test.ts",
  "test/invoices/payments/payments.test.ts",
  "test/security/hostile.test.ts",
  "test/security/crash.test.ts",
  "test/invoices/records/pdf-route.test.ts",
  "test/scale/scale-out.test.ts",
  "test/transmission/worker-kill.test.ts",
  "test/reference/reference.test.ts",
  "test/transmission/mbs-worker-kill.test.ts",
  "test/qr/qr-corpus.test.ts",
  "test/invoices/records/pdf-fairness.test.ts",
  "test/http/docs.test.ts",
  "test/transmission/mbs-verdicts.test.ts",
  "test/idempotency/store-bounds.test.ts",
  "test/security/rate-limits.test.ts",
];
const timeOf = (engine, file) =>
  lastTimes[`${engine} ${file}`] ?? (SLOWEST.includes(file) ? SLOWEST.length - SLOWEST.indexOf(file) : 0);

const args = process.argv.slice(2).map((a) => path.relative(process.cwd(), path.resolve(a)));
const files =
  args.length > 0 ? args.flatMap((a) => (fs.statSync(a).isDirectory() ? find(a) : [a])) : find("test");
const unlisted = [];
/** What runs: the files of each layer on each engine. */
const runs = new Map();
for (const file of files) {
  const place = placeOf(file);
  if (!place.listed) unlisted.push(file);
  const engines = place.engines === "both" ? ["sqlite", ...(POSTGRES ? ["postgres"] : [])] : [place.engines];
  for (const engine of engines) {
    const at = `${place.layer} ${engine} ${place.engines !== "both"}`;
    if (!runs.has(at))
      runs.set(at, { layer: place.layer, engine, once: place.engines !== "both", files: [] });
    runs.get(at).files.push(file);
  }
}

/**
 * The processes of a layer: one per file in the ALONE layers, else groups of up to GROUP_SIZE files
 * of one engine, dealt out slowest first so that the groups come out about even.
 */
function processesOf(layer) {
  const jobs = [];
  for (const { layer: of, engine, once, files: list } of runs.values()) {
    if (of !== layer) continue;
    const sorted = [...list].sort((a, b) => timeOf(engine, b) - timeOf(engine, a));
    const count = ALONE.has(layer) ? sorted.length : Math.ceil(sorted.length / GROUP_SIZE);
    const groups = Array.from({ length: count }, () => []);
    sorted.forEach((file, i) => {
      groups[i % count].push(file);
    });
    for (const group of groups) jobs.push({ layer, engine, once, files: group });
  }
  return jobs;
}

/**
 * Ports 21000–30999, below Linux's default ephemeral range (32768 and up): each of the processes
 * running at once has its share, for test/cli/run.ts's `freePort`.
 */
const portsOf = (slot) => {
  const width = Math.floor(10_000 / CONCURRENCY);
  return `${21_000 + slot * width}-${21_000 + (slot + 1) * width}`;
};

/**
 * The test processes running now. Each leads a process group of its own, so that whatever it starts
 * goes with it; a Ctrl-C reaches only the terminal's group, so the run passes it on to theirs.
 */
const running = new Set();
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, async () => {
    for (const pid of running) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    }
    await dropLeftovers().catch(() => {});
    process.exit(130);
  });
}

/** The PostgreSQL databases of this run that a killed process left (each drops its own at its end). */
async function dropLeftovers() {
  if (!POSTGRES) return;
  const { default: pg } = await import("pg");
  const admin = new pg.Client({ connectionString: process.env.EINVOICE_TEST_DATABASE_URL });
  await admin.connect();
  try {
    const left = await admin.query("select datname from pg_database where starts_with(datname, $1)", [
      `einvoice_test_${RUN}_`,
    ]);
    for (const { datname } of left.rows) await admin.query(`drop database if exists ${datname} with (force)`);
  } finally {
    await admin.end();
  }
}

/** One process, its output kept until it ends; a group's files are told apart by their suites. */
function run(job, slot) {
  return new Promise((resolve) => {
    const started = performance.now();
    // The files run as a script (node:test reports from inside it): no runner process in between,
    // from one bundle of them and the sources (test/launch.mjs).
    const node = [process.execPath, "--test-reporter=spec", "test/launch.mjs", ...job.files];
    const command = GNU_TIME ? [GNU_TIME, "-f", `${CPU_MARK} %U %S`, ...node] : node;
    const child = spawn(command[0], command.slice(1), {
      env: {
        ...process.env,
        EINVOICE_TEST_ENGINE: job.engine,
        EINVOICE_TEST_RUN: RUN,
        EINVOICE_TEST_SHARED: SHARED,
        EINVOICE_TEST_PORTS: portsOf(slot),
        FORCE_COLOR: process.stdout.isTTY ? "1" : "0",
      },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    running.add(child.pid);
    const chunks = [];
    child.stdout.on("data", (c) => chunks.push(c));
    child.stderr.on("data", (c) => chunks.push(c));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      process.kill(-child.pid, "SIGKILL");
    }, PROCESS_TIMEOUT_MS);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      running.delete(child.pid);
      // Whatever the files started and left behind goes with them.
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // The process group is gone already.
      }
      const seconds = (performance.now() - started) / 1000;
      let output = Buffer.concat(chunks).toString("utf8");
      const cpu = new RegExp(`^${CPU_MARK} ([\\d.]+) ([\\d.]+)\\n?`, "m").exec(output);
      if (cpu) output = output.replace(cpu[0], "");
      // Colours (on a terminal) out of what is read back.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape that starts a colour
      const plain = output.replace(/\x1b\[[0-9;]*m/g, "");
      const count = (name) => Number(new RegExp(`^ℹ ${name} (\\d+)$`, "m").exec(plain)?.[1] ?? 0);
      const ok = code === 0 && !timedOut;
      // Each file's own result: its suite's line in a group, the process's alone.
      const perFile = job.files.map((file) => {
        if (job.files.length === 1) return { file, ok, seconds };
        const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        const line = new RegExp(`^(✔|✖) ${escaped} \\(([\\d.]+)ms\\)`, "m").exec(plain);
        return { file, ok: ok || line?.[1] === "✔", seconds: line ? Number(line[2]) / 1000 : seconds };
      });
      resolve({
        ...job,
        perFile,
        seconds,
        cpu: cpu ? Number(cpu[1]) + Number(cpu[2]) : 0,
        started,
        ended: performance.now(),
        ok,
        exit: timedOut ? `killed after ${PROCESS_TIMEOUT_MS / 1000} s` : (signal ?? code),
        tests: count("tests"),
        pass: count("pass"),
        fail: count("fail") + count("cancelled"),
        skipped: count("skipped") + count("todo"),
        output,
      });
    });
  });
}

const label = (job) => (job.engine === "none" ? "no database" : job.engine);

/**
 * Runs `jobs` with at most `limit` at once: layer by layer, each layer's slowest first (as last
 * measured). A process slot that frees up takes the next job even when it is the next layer's, so no
 * slot idles while a layer's last processes finish. Prints each process's output as it ends.
 */
async function pool(jobs, limit) {
  const cost = (job) => job.files.reduce((n, file) => n + timeOf(job.engine, file), 0);
  const rank = (job) => LAYER_NAMES.indexOf(job.layer);
  const queue = [...jobs].sort((a, b) => rank(a) - rank(b) || cost(b) - cost(a));
  const results = [];
  const worker = async (slot) => {
    for (let job = queue.shift(); job; job = queue.shift()) {
      const result = await run(job, slot);
      results.push(result);
      const cpu = GNU_TIME ? `, ${result.cpu.toFixed(1)} s CPU` : "";
      console.log(
        `\n# ${result.ok ? "ok" : "FAILED"} ${job.layer}: ${job.files.join(", ")} [${label(job)}] ${result.seconds.toFixed(1)} s${cpu}`,
      );
      process.stdout.write(result.output.endsWith("\n") ? result.output : `${result.output}\n`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, (_, slot) => worker(slot)));
  return results;
}

const fmt = (s) =>
  s >= 60 ? `${Math.floor(s / 60)} min ${(s % 60).toFixed(0).padStart(2, "0")} s` : `${s.toFixed(1)} s`;
const span = (rs) =>
  rs.length === 0 ? 0 : (Math.max(...rs.map((r) => r.ended)) - Math.min(...rs.map((r) => r.started))) / 1000;

const jobs = LAYER_NAMES.flatMap(processesOf);
const fileRuns = jobs.reduce((n, j) => n + j.files.length, 0);
console.log(
  `# ${fileRuns} file runs of ${files.length} files in ${jobs.length} processes, ${CONCURRENCY} at a time, layer by layer: ${LAYER_NAMES.map((layer) => `${layer} ${jobs.filter((j) => j.layer === layer).reduce((n, j) => n + j.files.length, 0)}`).join(", ")}`,
);
const suiteStart = performance.now();
const all = await pool(jobs, CONCURRENCY);
const total = (performance.now() - suiteStart) / 1000;

await dropLeftovers();

const measured = all.flatMap((r) => r.perFile.map((f) => [`${r.engine} ${f.file}`, f.seconds]));
fs.mkdirSync(path.dirname(TIMES_FILE), { recursive: true });
fs.writeFileSync(TIMES_FILE, JSON.stringify({ ...lastTimes, ...Object.fromEntries(measured) }));

const sum = (rs, field) => rs.reduce((n, r) => n + r[field], 0);
const filesIn = (rs) => rs.reduce((n, r) => n + r.files.length, 0);
const row = (cells) =>
  `# ${cells.map((c, i) => (i < 2 ? String(c).padEnd(10) : String(c).padStart(7))).join(" ")}`;
const cpuOf = (rs) => (GNU_TIME ? [fmt(sum(rs, "cpu"))] : []);
const line = (layer, engine, rs, wall) =>
  row([
    layer,
    engine,
    filesIn(rs),
    rs.length,
    sum(rs, "tests"),
    sum(rs, "pass"),
    sum(rs, "fail"),
    sum(rs, "skipped"),
    fmt(wall),
    ...cpuOf(rs),
  ]);
console.log(
  "\n# summary (wall times: from a layer's first process to its last; the engines within a layer, and a layer's end and the next one's start, ran at once)",
);
console.log(
  row([
    "layer",
    "engine",
    "files",
    "procs",
    "tests",
    "pass",
    "fail",
    "skipped",
    "wall",
    ...(GNU_TIME ? ["cpu"] : []),
  ]),
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
  for (const [engine, rs] of groups) console.log(line(layer, engine, rs, span(rs)));
}
console.log(line("total", "", all, total));
const byEngine = (engine, once) =>
  all.filter((r) => r.engine === engine && r.once === once).reduce((n, r) => n + r.files.length, 0);
console.log(
  `# ${byEngine("none", true) + byEngine("sqlite", true)} files ran once (${byEngine("none", true)} with no database, ${byEngine("sqlite", true)} on SQLite only), ${byEngine("sqlite", false) + byEngine("postgres", false)} file runs on ${POSTGRES ? "both engines" : "SQLite"}`,
);
console.log(
  `# slowest: ${all
    .flatMap((r) => r.perFile.map((f) => ({ ...f, engine: r.engine })))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, 8)
    .map((f) => `${f.file} [${f.engine}] ${f.seconds.toFixed(0)} s`)
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
for (const r of failed) {
  for (const f of r.perFile.filter((f) => !f.ok || r.perFile.length === 1)) {
    console.log(`# FAILED ${f.file} [${label(r)}]`);
  }
  if (r.perFile.every((f) => f.ok)) {
    console.log(`# FAILED the process of ${r.files.join(", ")} [${label(r)}] (exit ${r.exit})`);
  }
}
process.exit(failed.length > 0 ? 1 : 0);
