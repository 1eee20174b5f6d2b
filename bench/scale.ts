/**
 * Scale: reads stay flat as the registry grows. Loads signed invoices through the real sign path
 * (validation, signature, hash chain, QR, sealing; many in flight, so group commit batches them),
 * and at each step measures `lookup/{IRN}` and `GET {IRN}` of random stored invoices against a
 * server in a separate process, and the bytes stored per invoice.
 *   npm run bench:scale -- [--engine sqlite|postgres] [--steps 1000,100000,1000000] [--duration 5]
 */
import { randomInt } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { sql } from "kysely";
import { loadConfig } from "../src/config.ts";
import { createContext } from "../src/main.ts";
import { benchDatabase, freePort, machine, shared, start, stop, waitFor } from "./lib.ts";

const { values: args } = parseArgs({
  options: {
    engine: { type: "string", default: "sqlite" },
    steps: { type: "string", default: "1000,100000,1000000" },
    duration: { type: "string", default: "5" },
    // Leaves the loaded database in place (its URL is printed) for further measurements.
    keep: { type: "boolean", default: false },
  },
});
const steps = args.steps.split(",").map(Number);
const duration = Number(args.duration);

const database = await benchDatabase(args.engine);
const ctx = await createContext(loadConfig({ ...database.env, EINVOICE_LOG_LEVEL: "silent" }));
await ctx.reference.importProducts(path.join(shared, "data", "hs2022", "harmonized-system.csv"));

// Sixteen businesses signing side by side: one business's signs are serialized by its chain.
const fixture = fs.readFileSync(path.join(shared, "fixtures", "invoice-full.json"), "utf8");
const signers: Array<{ principal: { businessId: string; apiKey: string }; template: string }> = [];
let headers: Record<string, string> = {};
for (let i = 0; i < 16; i++) {
  const business = await ctx.businesses.add({
    name: `Scale ${i} Ltd`,
    tin: `${String(22345678 + i)}-0001`,
  });
  const key = await ctx.businesses.createKey(business.business_id);
  if (i === 0) headers = { "api-key": key.api_key, "api-secret": key.api_secret };
  signers.push({
    principal: { businessId: business.business_id, apiKey: key.api_key },
    template: fixture
      .replaceAll("{{BUSINESS_ID}}", business.business_id)
      .replaceAll("{{SERVICE_ID}}", business.service_id),
  });
}

// Every stored IRN, to read back at random: reads of a few hot rows would prove nothing.
const irns: string[] = [];
const owners: number[] = [];

async function loadUpTo(count: number): Promise<void> {
  const started = performance.now();
  const from = irns.length;
  let next = from;
  let lastReport = started;
  const inFlight = 256;
  const one = async (): Promise<void> => {
    while (next < count) {
      const n = next++;
      const owner = n % signers.length;
      const signer = signers[owner] as (typeof signers)[number];
      const irn = `S${n}-`;
      const body = JSON.parse(signer.template.replace(/"irn": "INV0001-/, `"irn": "${irn}`));
      await ctx.invoices.sign(signer.principal, body);
      irns.push(body.irn);
      owners.push(owner);
      if (performance.now() - lastReport > 10_000) {
        lastReport = performance.now();
        const rate = (irns.length - from) / ((lastReport - started) / 1000);
        process.stderr.write(
          `  ${irns.length.toLocaleString("en-US")} stored, ${Math.round(rate)} signs/s\n`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, one));
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `loaded ${(count - from).toLocaleString("en-US")} invoices in ${seconds.toFixed(0)} s ` +
      `(${Math.round((count - from) / seconds)} signs/s in process)`,
  );
}

/** Sequential requests on one kept-alive connection: the latency of a read with nothing queued. */
async function latency(api: string, route: (irn: string) => string, samples = 2000, warmup = 500) {
  const times: number[] = [];
  for (let i = -warmup; i < samples; i++) {
    const pick = randomInt(irns.length);
    if (owners[pick] !== 0) {
      i--;
      continue;
    }
    const t0 = performance.now();
    const res = await fetch(`${api}${route(irns[pick] as string)}`, { headers });
    await res.arrayBuffer();
    if (i >= 0) times.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`read answered ${res.status}`);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => (times[Math.floor(q * (times.length - 1))] as number).toFixed(2);
  return { p50: at(0.5), p99: at(0.99) };
}

async function throughput(api: string, route: (irn: string) => string) {
  const result = await autocannon({
    url: api,
    connections: 16,
    duration,
    requests: [
      {
        method: "GET",
        path: "/",
        headers,
        setupRequest: (r) => {
          let pick = randomInt(irns.length);
          while (owners[pick] !== 0) pick = randomInt(irns.length);
          return { ...r, path: route(irns[pick] as string) };
        },
      },
    ],
  });
  return { rate: Math.round(result.requests.average), bad: result.non2xx + result.errors };
}

/** Everything in the main files (SQLite's WAL checkpointed), PostgreSQL's statistics current. */
async function settle(): Promise<void> {
  if (args.engine === "sqlite") await sql`pragma wal_checkpoint(TRUNCATE)`.execute(ctx.db);
  else await sql`vacuum analyze`.execute(ctx.db);
}

const port = await freePort();
const server = start(["bin/einvoice.js", "serve"], {
  ...database.env,
  PORT: String(port),
  HOST: "127.0.0.1",
});
const api = `http://127.0.0.1:${port}`;
try {
  await waitFor(`${api}/healthz`);
  console.log(`${machine()}, engine ${args.engine}; load generator on the same machine`);
  // What an empty registry already holds (schema, businesses, the product catalog) is not per invoice.
  await settle();
  const empty = await database.bytes();
  for (const step of steps) {
    await loadUpTo(step);
    await settle();
    const bytes = await database.bytes();
    const routes = {
      "lookup/{IRN}": (irn: string) => `/api/v1/einvoice/lookup/${irn}`,
      "GET {IRN}": (irn: string) => `/api/v1/einvoice/${irn}`,
    };
    console.log(
      `${irns.length.toLocaleString("en-US")} stored: ${Math.round((bytes - empty) / irns.length).toLocaleString("en-US")} bytes/invoice (${(bytes / 1e6).toFixed(0)} MB in all)`,
    );
    for (const [name, route] of Object.entries(routes)) {
      // The first pass reads pages the server has not touched yet; the second shows the same reads
      // once the pages they need are in memory.
      const first = await latency(api, route);
      const second = await latency(api, route);
      const many = await throughput(api, route);
      console.log(
        `  ${name.padEnd(14)} one at a time p50 ${first.p50} ms, p99 ${first.p99} ms (first pass), ` +
          `p50 ${second.p50} ms, p99 ${second.p99} ms (second);  16 connections ${many.rate} req/s${many.bad ? ` (${many.bad} not 200)` : ""}`,
      );
    }
  }
} finally {
  await stop([server]);
  await ctx.close();
  if (args.keep) console.log(`kept: EINVOICE_DATABASE_URL=${database.url} EINVOICE_DATA_DIR=${database.dir}`);
  else await database.drop();
}
