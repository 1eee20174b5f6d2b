/**
 * One business's small PDFs while another floods the PDF thread, against a real server (`serve`)
 * in a separate process. Business A keeps `--concurrency` requests in flight for its invoices of
 * `--lines` lines, each PDF asked for until it is served (again `--a-pause-ms` after a 503: A
 * ignores Retry-After), then the next of its `--a-invoices` invoices, so that every PDF it gets is a
 * rendering, none from the cache. Business B fetches its small invoices (the full sample, 2 lines)
 * one after the other, `--b-pause-ms` apart, each for the first time. B's latency is measured
 * alone, then during A's flood.
 *   npm run bench:pdf-fairness [-- --engine sqlite|postgres --seconds 20 --concurrency 40
 *                               --lines 300 --a-invoices 300 --server-root ../before]
 * `--server-root` serves from another checkout (the tree before a change) against the same database.
 */
import { spawn } from "node:child_process";
import http from "node:http";
import path from "node:path";
import { parseArgs } from "node:util";
import pino from "pino";
import { loadConfig } from "../src/config.ts";
import { createContext, createServer } from "../src/main.ts";
import { type Tenant, tenant } from "../test/helpers.ts";
import { signInvoices } from "../test/invoices/records/pdf-load.ts";
import { benchDatabase, cpuMs, freePort, machine, start, stop, waitFor } from "./lib.ts";

const { values: args } = parseArgs({
  options: {
    engine: { type: "string", default: "sqlite" },
    seconds: { type: "string", default: "20" },
    concurrency: { type: "string", default: "40" },
    lines: { type: "string", default: "300" },
    "a-invoices": { type: "string", default: "300" },
    // 40 requests in flight, each again 400 ms after a 503: about 100 requests/s, the production
    // rate limit of a credential (6,000 a minute), past which A's requests would be 429s instead.
    "a-pause-ms": { type: "string", default: "400" },
    "b-invoices": { type: "string", default: "400" },
    "b-pause-ms": { type: "string", default: "100" },
    // Another checkout's server against the same database (e.g. the tree before a change), for comparison.
    "server-root": { type: "string" },
  },
});
const seconds = Number(args.seconds);
const concurrency = Number(args.concurrency);

const database = await benchDatabase(args.engine);
const setup = await createContext(loadConfig({ ...database.env, EINVOICE_LOG_LEVEL: "silent" }));
const app = await createServer(setup, pino({ level: "silent" }));
const a = await tenant(setup, { tin: "20198222-0002" });
const b = await tenant(setup, { tin: "20198222-0002" });
let started = performance.now();
const heavy = await signInvoices(app, a, Number(args["a-invoices"]), Number(args.lines));
const small = await signInvoices(app, b, Number(args["b-invoices"]), 0);
console.log(
  `${machine()}, ${args.engine}; signed ${heavy.length} invoices of ${args.lines} lines for A and ${small.length} small ones for B in ${((performance.now() - started) / 1000).toFixed(0)} s`,
);
await app.close();
await setup.close();

const port = await freePort();
const serverEnv = { ...database.env, PORT: String(port), EINVOICE_WORKER: "off" };
const otherRoot = args["server-root"] && path.resolve(args["server-root"]);
const server = otherRoot
  ? spawn(process.execPath, ["bin/einvoice.js", "serve"], {
      cwd: otherRoot,
      env: { ...process.env, ...serverEnv },
      stdio: ["ignore", "ignore", "inherit"],
    })
  : start(["bin/einvoice.js", "serve"], serverEnv);
if (otherRoot) console.log(`server: ${otherRoot}`);
const base = `http://127.0.0.1:${port}`;
await waitFor(`${base}/healthz`);

type Answer = { status: number; ms: number; bytes: number };
function get(agent: http.Agent, who: Tenant, irn: string): Promise<Answer> {
  const since = performance.now();
  return new Promise((resolve) => {
    const req = http.get(`${base}/api/v1/einvoice/${irn}.pdf`, { agent, headers: who.headers }, (res) => {
      let bytes = 0;
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - since, bytes }));
    });
    req.on("error", () => resolve({ status: 0, ms: performance.now() - since, bytes: 0 }));
  });
}
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

let nextSmall = 0;
/** B: one small PDF after another for `ms`; each answer's status and latency. */
async function smallPdfs(ms: number): Promise<Answer[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const answers: Answer[] = [];
  const until = performance.now() + ms;
  while (performance.now() < until) {
    if (nextSmall === small.length) console.log("(B's invoices ran out: its next PDFs come from the cache)");
    answers.push(await get(agent, b, small[nextSmall++ % small.length] as string));
    await pause(Number(args["b-pause-ms"]));
  }
  agent.destroy();
  return answers;
}

function report(label: string, answers: Answer[]): void {
  const ok = answers.filter((x) => x.status === 200);
  const ms = ok.map((x) => x.ms).sort((x, y) => x - y);
  const others = answers.length - ok.length;
  console.log(
    `${label.padEnd(26)} ${String(ok.length).padStart(4)} × 200, ${others} other; median ${quantile(ms, 0.5).toFixed(0)} ms, p95 ${quantile(ms, 0.95).toFixed(0)} ms, max ${(ms.at(-1) ?? 0).toFixed(0)} ms`,
  );
}

// Warm-up: the rendering thread starts, the fonts are parsed.
await get(new http.Agent(), b, small[nextSmall++] as string);

const cpuBefore = cpuMs(server.pid);
report("B alone", await smallPdfs(seconds * 1000));

// A's flood: `concurrency` requests in flight, each for its next invoice in turn.
const flood = { on: true, ok: 0, refused: 0, other: 0, okMs: [] as number[] };
const agentA = new http.Agent({ keepAlive: true, maxSockets: concurrency });
let nextHeavy = 0;
async function attacker(): Promise<void> {
  let irn = heavy[nextHeavy++ % heavy.length] as string;
  while (flood.on) {
    const answer = await get(agentA, a, irn);
    if (answer.status === 200) {
      flood.ok++;
      flood.okMs.push(answer.ms);
      irn = heavy[nextHeavy++ % heavy.length] as string;
    } else if (answer.status === 503) {
      // Refused: the same PDF again shortly.
      flood.refused++;
      await pause(Number(args["a-pause-ms"]));
    } else flood.other++;
  }
}
const attackers = Array.from({ length: concurrency }, attacker);
await pause(2000); // A's backlog fills
started = performance.now();
const okBefore = flood.ok;
const during = await smallPdfs(seconds * 1000);
const floodSeconds = (performance.now() - started) / 1000;
// What A got in the window: its requests still waiting when it closes are answered after it.
const okInWindow = flood.ok - okBefore;
flood.on = false;
await Promise.all(attackers);
agentA.destroy();
report(`B while A floods (${concurrency})`, during);
if (nextHeavy > heavy.length) console.log("(A's invoices ran out: some of its PDFs came from the cache)");
const aMs = flood.okMs.sort((x, y) => x - y);
console.log(
  `A: ${okInWindow} × 200 in B's ${floodSeconds.toFixed(0)} s (${(okInWindow / floodSeconds).toFixed(1)} PDFs/s), ${flood.ok} in all (median ${quantile(aMs, 0.5).toFixed(0)} ms), ${flood.refused} × 503, ${flood.other} other`,
);
const cpuAfter = cpuMs(server.pid);
if (cpuBefore !== undefined && cpuAfter !== undefined) {
  console.log(`server CPU over both phases: ${((cpuAfter - cpuBefore) / 1000).toFixed(1)} s`);
}
await stop([server]);
await database.drop();
