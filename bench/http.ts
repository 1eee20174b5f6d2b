/**
 * HTTP benchmark against a real server in a separate process, with the ceiling measured in the same
 * run. Prints requests/s and p50/p99 latency per scenario, and sign/ceiling and validate/ceiling.
 *   npm run bench:http -- [--engine sqlite|postgres] [--processes 1|2] [--duration 10] [--warm 5] [--connections 32]
 *                         [--only sign,validate] [--cpu-prof DIR] [--steady-rate 1000]
 *                         [--steady-client lean|node]
 * `--only bare` (PostgreSQL) adds the bare durable sign (bench/bare-sign-pg.ts) on the same database
 * and as many processes, at the three sign loads: `--only sign,bare` measures both in one run.
 * PostgreSQL uses EINVOICE_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) in
 * a schema of its own, dropped afterwards.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { loadConfig } from "../src/config.ts";
import { createContext } from "../src/main.ts";
import {
  benchDatabase,
  type CpuTicks,
  cpuMs,
  cpuTicks,
  freePort,
  loopCpuMs,
  machine,
  pin,
  postgresCpuMs,
  type SteadyClient,
  type SteadyRequest,
  shared,
  start,
  steadyRate,
  stealSince,
  stop,
  waitFor,
} from "./lib.ts";

const { values: args } = parseArgs({
  options: {
    engine: { type: "string", default: "sqlite" },
    processes: { type: "string", default: "1" },
    duration: { type: "string", default: "10" },
    // Seconds of each scenario's own load, unmeasured, before it is measured: without it the first
    // scenario of a kind is measured while V8 still compiles its code (on PostgreSQL, 2 processes,
    // the first sign scenario's API processes spent 0.29 of a core in V8's compiler threads).
    warm: { type: "string", default: "5" },
    connections: { type: "string", default: "32" },
    // The open-loop scenario's rate, requests/s: the target is set at 1,000; lower rates show what a
    // sign costs when its batches hold one request.
    "steady-rate": { type: "string", default: "1000" },
    // The open-loop scenario's HTTP client: `lean` (bench/lib.ts's own, the default) or `node`
    // (Node's http module, as measured before 2026-12-07's section on another VM type).
    "steady-client": { type: "string", default: "lean" },
    // Comma-separated words picking scenarios by name: validate, sign, lookup, get, states, products.
    only: { type: "string" },
    // Writes a V8 CPU profile of each API process into this directory when the server stops.
    "cpu-prof": { type: "string" },
    // Linux: the cores the API server may run on (e.g. "1"); the load generator takes the others, so
    // the two do not take turns on the same cores and requests/s measure the server alone.
    "server-cpus": { type: "string" },
  },
});
const duration = Number(args.duration);
const warm = Number(args.warm);
const connections = Number(args.connections);
const steadyPerSecond = Number(args["steady-rate"]);
const steadyClient = args["steady-client"];
if (steadyClient !== "lean" && steadyClient !== "node") throw new Error("--steady-client is lean or node");

const database = await benchDatabase(args.engine);
const env = database.env;

// A business, its credentials and the product catalog, prepared before the server starts.
const setup = await createContext(loadConfig({ ...env, EINVOICE_LOG_LEVEL: "silent" }));
// Many businesses too: one business's signs are serialized by its hash chain, a country's are not.
const fixture = fs.readFileSync(path.join(shared, "fixtures", "invoice-full.json"), "utf8");
const signers: Array<{ headers: Record<string, string>; template: string }> = [];
for (let i = 0; i < 64; i++) {
  const tin = `${String(12345678 + i).padStart(8, "0")}-0001`;
  const business = await setup.businesses.add({ name: `Bench ${i} Ltd`, tin });
  const key = await setup.businesses.createKey(business.business_id);
  signers.push({
    headers: { "api-key": key.api_key, "api-secret": key.api_secret, "content-type": "application/json" },
    template: fixture
      .replaceAll("{{BUSINESS_ID}}", business.business_id)
      .replaceAll("{{SERVICE_ID}}", business.service_id)
      // The supplier is the business that signs: its invoices raise no supplier_tin_mismatch warning.
      .replace('"tin": "20198222-0002"', `"tin": "${tin}"`),
  });
}
await setup.reference.importProducts(path.join(shared, "data", "hs2022", "harmonized-system.csv"));
await setup.close();
const { headers, template } = signers[0] as (typeof signers)[number];

const fixed = template;
let counter = 0;
const fresh = (from = template) => from.replace(/"irn": "INV0001-/, `"irn": "B${process.pid}N${++counter}-`);
let keyed = 0;
let turn = 0;
const nextSigner = () => signers[turn++ % signers.length] as (typeof signers)[number];

const only = args.only?.split(",").map((name) => name.trim().toLowerCase());
// The bare durable sign on PostgreSQL (bench/bare-sign-pg.ts), run only when asked for (`--only
// bare`, or `--only sign,bare` beside the service's signs): what the machine allows a sign on the
// same database with the same processes, the yardstick for the service's PostgreSQL figures.
const withBare = only?.includes("bare") === true;
if (withBare && args.engine !== "postgres") throw new Error("--only bare needs --engine postgres");

const profiling = args["cpu-prof"] ? ["--cpu-prof", "--cpu-prof-dir", path.resolve(args["cpu-prof"])] : [];
const ceilingPort = await freePort();
const apiPort = await freePort();
const barePort = await freePort();
const children = [
  start(["node_modules/tsx/dist/cli.mjs", "bench/ceiling.ts"], { PORT: String(ceilingPort) }),
  start([...profiling, "bin/einvoice.js", "serve", "--processes", String(args.processes)], {
    ...env,
    PORT: String(apiPort),
    HOST: "127.0.0.1",
  }),
];
const bareServer = withBare
  ? start(["node_modules/tsx/dist/cli.mjs", "bench/bare-sign-pg.ts"], {
      PORT: String(barePort),
      EINVOICE_BARE_DATABASE_URL: env.EINVOICE_DATABASE_URL,
      EINVOICE_BARE_PROCESSES: String(args.processes),
    })
  : undefined;
if (bareServer) children.push(bareServer);
const echo = `http://127.0.0.1:${ceilingPort}`;
const api = `http://127.0.0.1:${apiPort}`;
const bare = `http://127.0.0.1:${barePort}`;
try {
  await waitFor(`${echo}/`);
  await waitFor(`${api}/healthz`);
  if (withBare) await waitFor(`${bare}/`);
  if (args["server-cpus"]) pin(args["server-cpus"], children);

  // Invoices to read back: lookup and GET {IRN} rotate through them.
  const irns: string[] = [];
  for (let i = 0; i < 200; i++) {
    const body = fresh();
    const res = await fetch(`${api}/api/v1/einvoice/sign`, { method: "POST", headers, body });
    if (res.status !== 200) throw new Error(`seeding failed: ${res.status} ${await res.text()}`);
    irns.push((JSON.parse(body) as { irn: string }).irn);
  }
  let read = 0;
  const json = { "content-type": "application/json" };
  const nextIrn = () => irns[read++ % irns.length] as string;

  /** `steady`: an open-loop rate (requests/s) instead of autocannon, for latency at a given load. */
  type Scenario = {
    name: string;
    url: string;
    request?: autocannon.Request;
    steady?: { rate: number; client: SteadyClient; request: () => SteadyRequest };
    /** Invoices carried by each request, when more than one. */
    invoicesPerRequest?: number;
  };
  const scenarios: Scenario[] = [
    {
      name: "ceiling (bare Fastify, same body)",
      url: echo,
      request: { method: "POST", path: "/echo", headers, body: fixed },
    },
    {
      name: "validate",
      url: api,
      request: { method: "POST", path: "/api/v1/einvoice/validate", headers, body: fixed },
    },
    {
      name: "sign (fresh IRNs, durable commit)",
      url: api,
      request: {
        method: "POST",
        path: "/api/v1/einvoice/sign",
        headers,
        setupRequest: (r) => ({ ...r, body: fresh() }),
      },
    },
    {
      name: "sign with an Idempotency-Key (a new key each)",
      url: api,
      request: {
        method: "POST",
        path: "/api/v1/einvoice/sign",
        setupRequest: (r) => ({
          ...r,
          headers: { ...headers, "idempotency-key": `K${process.pid}-${++keyed}` },
          body: fresh(),
        }),
      },
    },
    {
      name: "sign, 64 businesses in turn",
      url: api,
      request: {
        method: "POST",
        path: "/api/v1/einvoice/sign",
        setupRequest: (r) => {
          const signer = nextSigner();
          // A copy: autocannon adds the body's length to the headers it is given.
          return { ...r, headers: { ...signer.headers }, body: fresh(signer.template) };
        },
      },
    },
    {
      name: `sign at a steady ${steadyPerSecond.toLocaleString("en")}/s`,
      url: api,
      steady: {
        rate: steadyPerSecond,
        client: steadyClient,
        request: () => ({ method: "POST", path: "/api/v1/einvoice/sign", headers, body: fresh() }),
      },
    },
    // The bare durable sign, the same bodies and loads as the three scenarios above: a chain is a
    // body's business.
    {
      name: "bare durable sign, one chain",
      url: bare,
      request: {
        method: "POST",
        path: "/sign",
        headers: json,
        setupRequest: (r) => ({ ...r, body: fresh() }),
      },
    },
    {
      name: "bare durable sign, 64 chains in turn",
      url: bare,
      request: {
        method: "POST",
        path: "/sign",
        headers: json,
        setupRequest: (r) => ({ ...r, body: fresh(nextSigner().template) }),
      },
    },
    {
      name: `bare durable sign at a steady ${steadyPerSecond.toLocaleString("en")}/s`,
      url: bare,
      steady: {
        rate: steadyPerSecond,
        client: steadyClient,
        request: () => ({ method: "POST", path: "/sign", headers: json, body: fresh() }),
      },
    },
    {
      name: "batch/sign, 100 invoices a request",
      url: api,
      invoicesPerRequest: 100,
      request: {
        method: "POST",
        path: "/api/v1/einvoice/batch/sign",
        headers,
        setupRequest: (r) => ({
          ...r,
          body: `{"invoices":[${Array.from({ length: 100 }, () => fresh()).join(",")}]}`,
        }),
      },
    },
    {
      name: "lookup/{IRN}",
      url: api,
      request: {
        method: "GET",
        path: "/",
        headers,
        setupRequest: (r) => ({ ...r, path: `/api/v1/einvoice/lookup/${nextIrn()}` }),
      },
    },
    {
      name: "GET {IRN} (full record)",
      url: api,
      request: {
        method: "GET",
        path: "/",
        headers,
        setupRequest: (r) => ({ ...r, path: `/api/v1/einvoice/${nextIrn()}` }),
      },
    },
    {
      name: "resources/states",
      url: api,
      request: { method: "GET", path: "/api/v1/einvoice/resources/states", headers },
    },
    {
      name: "resources/products?search=cement",
      url: api,
      request: { method: "GET", path: "/api/v1/einvoice/resources/products?search=cement", headers },
    },
  ];

  console.log(
    `${machine()}, engine ${args.engine}, ` +
      `${args.processes} API process(es), ${connections} connections, ${duration} s each after ${warm} s of the same load unmeasured (a steady rate's ${2 * warm} s, rising to it over the first half); load generator on the same machine`,
  );
  const rates = new Map<string, number>();
  const p99s = new Map<string, number>();
  const chosen = (s: Scenario) =>
    s.url === bare
      ? withBare
      : s.name.startsWith("ceiling") || !only || only.some((word) => s.name.toLowerCase().includes(word));
  // The server's CPU per request: steadier than requests/s on a machine shared with the load
  // generator, and what a change to the request path costs.
  const serverPid = (s: Scenario) =>
    s.url === api ? children[1]?.pid : s.url === bare ? bareServer?.pid : children[0]?.pid;
  // On PostgreSQL, the database server's CPU per request too (`db`): a keyed sign's statements cost
  // it more than they cost the API processes.
  const databaseCpu = () => (args.engine === "postgres" ? postgresCpuMs() : undefined);
  const perRequest = (
    s: Scenario,
    before: { api: number | undefined; loop: number | undefined; db: number | undefined },
    requests: number,
    ticks: CpuTicks,
  ) => {
    const [after, loopAfter] = [cpuMs(serverPid(s)), loopCpuMs(serverPid(s))];
    const stolen = `   ${stealSince(ticks)}`;
    if (before.api === undefined || after === undefined || requests === 0) return stolen;
    const db = databaseCpu();
    const database =
      s.url !== echo && before.db !== undefined && db !== undefined
        ? `   db ${Math.round(((db - before.db) * 1000) / requests)} µs/req`
        : "";
    // The event loops' share apart: what a sign costs them against what it costs its other threads
    // (the preparation thread, V8's collector) differs with the load (RESULTS.md, 2026-12-07).
    const loops =
      before.loop !== undefined && loopAfter !== undefined
        ? ` (event loops ${Math.round(((loopAfter - before.loop) * 1000) / requests)})`
        : "";
    return `   cpu ${Math.round(((after - before.api) * 1000) / requests)} µs/req${loops}${database}${stolen}`;
  };
  for (const s of scenarios.filter(chosen)) {
    // A steady rate's warm-up lasts twice `--warm` and rises to its rate over the first half. For
    // its first 5-8 s of signing a process promoted 1.2-1.9 MB a scavenge even with few signs in
    // flight, then 0.1-0.3 MB; and at the full rate at once a server not yet warmed (`--only
    // steady`) fell behind, 200-350 signs waiting in each process. Warmed 5 s at the full rate, the
    // measured run began in that state (RESULTS.md, 2026-12-07, family 26).
    if (warm > 0 && s.steady) await steadyRate({ url: s.url, durationS: 2 * warm, rampS: warm, ...s.steady });
    else if (warm > 0)
      await autocannon({
        url: s.url,
        connections,
        duration: warm,
        requests: [s.request as autocannon.Request],
      });
    const cpuBefore = { api: cpuMs(serverPid(s)), loop: loopCpuMs(serverPid(s)), db: databaseCpu() };
    const ticks = cpuTicks();
    if (s.steady) {
      const result = await steadyRate({ url: s.url, durationS: duration, ...s.steady });
      rates.set(s.name, result.ok / duration);
      p99s.set(s.name, result.p99);
      console.log(
        `${s.name.padEnd(38)} ${String(result.ok).padStart(7)} done     p50 ${String(result.p50).padStart(4)} ms   p99 ${String(result.p99).padStart(4)} ms   max ${result.max} ms${result.bad ? `   (${result.bad} not 2xx)` : ""}${perRequest(s, cpuBefore, result.ok + result.bad, ticks)}`,
      );
      continue;
    }
    const result = await autocannon({
      url: s.url,
      connections,
      duration,
      requests: [s.request as autocannon.Request],
    });
    const bad = result.non2xx + result.errors + result.timeouts;
    rates.set(s.name, result.requests.average);
    const invoices = s.invoicesPerRequest
      ? `   (${Math.round(result.requests.average * s.invoicesPerRequest)} invoices/s)`
      : "";
    console.log(
      `${s.name.padEnd(38)} ${Math.round(result.requests.average).toString().padStart(7)} req/s   p50 ${String(result.latency.p50).padStart(4)} ms   p99 ${String(result.latency.p99).padStart(4)} ms${invoices}${bad ? `   (${bad} not 2xx)` : ""}${perRequest(s, cpuBefore, result.requests.total, ticks)}`,
    );
  }
  const ceiling = rates.get("ceiling (bare Fastify, same body)") ?? 1;
  const ratio = (name: string) => `${(((rates.get(name) ?? 0) / ceiling) * 100).toFixed(1)}%`;
  console.log(
    `sign / ceiling ${ratio("sign (fresh IRNs, durable commit)")}   validate / ceiling ${ratio("validate")}`,
  );
  if (withBare) {
    // Each of the service's sign loads against the bare sign's at the same load, where both ran.
    const against = (label: string, service: string, bareName: string) => {
      const [mine, theirs] = [rates.get(service), rates.get(bareName)];
      return mine && theirs
        ? `${label} ${(mine / theirs).toFixed(2)} (${Math.round(mine)} against ${Math.round(theirs)}/s)`
        : undefined;
    };
    const steady = `sign at a steady ${steadyPerSecond.toLocaleString("en")}/s`;
    const [mine, theirs] = [p99s.get(steady), p99s.get(`bare durable ${steady}`)];
    const parts = [
      against("one business", "sign (fresh IRNs, durable commit)", "bare durable sign, one chain"),
      against("64 businesses", "sign, 64 businesses in turn", "bare durable sign, 64 chains in turn"),
      mine !== undefined && theirs !== undefined ? `steady p99 ${mine} ms against ${theirs} ms` : undefined,
    ].filter((part) => part !== undefined);
    if (parts.length > 0) console.log(`sign / bare durable sign: ${parts.join(";   ")}`);
  }
} finally {
  await stop(children);
  await database.drop();
}
