/**
 * HTTP benchmark against a real server in a separate process, with the ceiling measured in the same
 * run. Prints requests/s and p50/p99 latency per scenario, and sign/ceiling and validate/ceiling.
 *   npm run bench:http -- [--engine sqlite|postgres] [--processes 1|2] [--duration 10] [--connections 32]
 * PostgreSQL uses EINVOICE_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) in
 * a schema of its own, dropped afterwards.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import pg from "pg";
import { loadConfig } from "../src/config.ts";
import { createContext } from "../src/main.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const shared = path.resolve(process.env.EINVOICE_SHARED_DIR ?? path.join(root, "..", "shared"));
const { values: args } = parseArgs({
  options: {
    engine: { type: "string", default: "sqlite" },
    processes: { type: "string", default: "1" },
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "32" },
  },
});
const duration = Number(args.duration);
const connections = Number(args.connections);

async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitFor(url: string, headers: Record<string, string> = {}): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const ok = await fetch(url, { headers }).then(
      (r) => r.status < 500,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not come up`);
}

function start(args_: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, args_, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
}

// The database: a SQLite file, or a fresh PostgreSQL schema.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "einvoice-bench-"));
let databaseUrl = `sqlite:${path.join(dir, "bench.db")}`;
let dropSchema = async () => {};
if (args.engine === "postgres") {
  const base = process.env.EINVOICE_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const schema = `bench_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(base);
  url.searchParams.set("options", `-c search_path=${schema}`);
  databaseUrl = url.toString();
  dropSchema = async () => {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    await c.query(`drop schema ${schema} cascade`);
    await c.end();
  };
}
const env = { EINVOICE_DATABASE_URL: databaseUrl, EINVOICE_DATA_DIR: dir, EINVOICE_LOG_LEVEL: "warn" };

// A business, its credentials and the product catalog, prepared before the server starts.
const setup = await createContext(loadConfig({ ...env, EINVOICE_LOG_LEVEL: "silent" }));
const business = await setup.businesses.add({ name: "Bench Ltd", tin: "12345678-0001" });
const key = await setup.businesses.createKey(business.business_id);
await setup.reference.importProducts(path.join(shared, "data", "hs2022", "harmonized-system.csv"));
await setup.close();
const headers = { "api-key": key.api_key, "api-secret": key.api_secret, "content-type": "application/json" };

const template = fs
  .readFileSync(path.join(shared, "fixtures", "invoice-full.json"), "utf8")
  .replaceAll("{{BUSINESS_ID}}", business.business_id)
  .replaceAll("{{SERVICE_ID}}", business.service_id);
const fixed = template;
let counter = 0;
const fresh = () => template.replace(/"irn": "INV0001-/, `"irn": "B${process.pid}N${++counter}-`);

const ceilingPort = await freePort();
const apiPort = await freePort();
const children = [
  start(["node_modules/tsx/dist/cli.mjs", "bench/ceiling.ts"], { PORT: String(ceilingPort) }),
  start(["bin/einvoice.js", "serve", "--processes", String(args.processes)], {
    ...env,
    PORT: String(apiPort),
    HOST: "127.0.0.1",
  }),
];
const api = `http://127.0.0.1:${apiPort}`;
try {
  await waitFor(`http://127.0.0.1:${ceilingPort}/`);
  await waitFor(`${api}/healthz`);

  // Invoices to read back: lookup and GET {IRN} rotate through them.
  const irns: string[] = [];
  for (let i = 0; i < 200; i++) {
    const body = fresh();
    const res = await fetch(`${api}/api/v1/einvoice/sign`, { method: "POST", headers, body });
    if (res.status !== 200) throw new Error(`seeding failed: ${res.status} ${await res.text()}`);
    irns.push((JSON.parse(body) as { irn: string }).irn);
  }
  let read = 0;
  const nextIrn = () => irns[read++ % irns.length] as string;

  type Scenario = { name: string; url: string; request: autocannon.Request };
  const scenarios: Scenario[] = [
    {
      name: "ceiling (bare Fastify, same body)",
      url: `http://127.0.0.1:${ceilingPort}`,
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
    `node ${process.version}, ${os.cpus()[0]?.model ?? "cpu"} × ${os.cpus().length}, engine ${args.engine}, ` +
      `${args.processes} API process(es), ${connections} connections, ${duration} s each; load generator on the same machine`,
  );
  const rates = new Map<string, number>();
  for (const s of scenarios) {
    const result = await autocannon({ url: s.url, connections, duration, requests: [s.request] });
    const bad = result.non2xx + result.errors + result.timeouts;
    rates.set(s.name, result.requests.average);
    console.log(
      `${s.name.padEnd(38)} ${Math.round(result.requests.average).toString().padStart(7)} req/s   p50 ${String(result.latency.p50).padStart(4)} ms   p99 ${String(result.latency.p99).padStart(4)} ms${bad ? `   (${bad} not 2xx)` : ""}`,
    );
  }
  const ceiling = rates.get("ceiling (bare Fastify, same body)") ?? 1;
  const ratio = (name: string) => `${(((rates.get(name) ?? 0) / ceiling) * 100).toFixed(1)}%`;
  console.log(
    `sign / ceiling ${ratio("sign (fresh IRNs, durable commit)")}   validate / ceiling ${ratio("validate")}`,
  );
} finally {
  for (const child of children) child.kill("SIGTERM");
  await new Promise((resolve) => setTimeout(resolve, 500));
  await dropSchema();
  fs.rmSync(dir, { recursive: true, force: true });
}
