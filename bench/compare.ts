/**
 * The request path of this checkout against another one (a worktree of an earlier commit), in one
 * process, in alternating slices: both apps see the same machine at the same moments, so a few per
 * cent show even where requests/s over sockets drift by 20% from one run to the next on a shared
 * machine. Requests go through `app.inject` (routing, parsing, hooks, handler, serialization; no
 * socket), so a difference reads larger here than over HTTP, where the socket's cost is the same.
 *   npm run bench:compare -- --against ../before [--only validate,sign] [--rounds 40] [--slice 200]
 * Both checkouts need their dependencies installed; SQLite in a temporary folder each.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { machine, root, shared } from "./lib.ts";

const { values: args } = parseArgs({
  options: {
    against: { type: "string" },
    only: { type: "string", default: "validate,sign" },
    rounds: { type: "string", default: "40" },
    slice: { type: "string", default: "200" },
  },
});
if (!args.against) throw new Error("--against DIR: the checkout to compare with");
const rounds = Number(args.rounds);
const slice = Number(args.slice);

type Inject = (options: {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload: string;
}) => Promise<{ statusCode: number; body: string }>;

/** One checkout's app on its own SQLite database, with a business and its credentials. */
async function load(dir: string) {
  const from = (file: string) => import(pathToFileURL(path.join(dir, "src", file)).href);
  const { loadConfig } = await from("config.ts");
  const { createContext, createServer } = await from("main.ts");
  const data = fs.mkdtempSync(path.join(os.tmpdir(), "einvoice-compare-"));
  const config = loadConfig({
    EINVOICE_DATABASE_URL: `sqlite:${path.join(data, "einvoice.db")}`,
    EINVOICE_DATA_DIR: data,
    EINVOICE_LOG_LEVEL: "silent",
  });
  const ctx = await createContext(config);
  const { default: pino } = await import(
    pathToFileURL(path.join(dir, "node_modules", "pino", "pino.js")).href
  );
  const app = await createServer(ctx, pino({ level: "silent" }));
  await app.ready();
  const tin = "12345678-0001";
  const business = await ctx.businesses.add({ name: "Compare Ltd", tin });
  const key = await ctx.businesses.createKey(business.business_id);
  const template = fs
    .readFileSync(path.join(shared, "fixtures", "invoice-full.json"), "utf8")
    .replaceAll("{{BUSINESS_ID}}", business.business_id)
    .replaceAll("{{SERVICE_ID}}", business.service_id)
    .replace('"tin": "20198222-0002"', `"tin": "${tin}"`);
  const headers = {
    "api-key": key.api_key,
    "api-secret": key.api_secret,
    "content-type": "application/json",
  };
  const close = async () => {
    await app.close();
    await ctx.close();
    fs.rmSync(data, { recursive: true, force: true });
  };
  return { inject: app.inject.bind(app) as Inject, headers, template, close };
}

const checkouts = [
  { name: "this checkout", dir: root },
  { name: path.basename(path.resolve(args.against)), dir: path.resolve(args.against) },
];
type App = Awaited<ReturnType<typeof load>>;
const apps: App[] = [];
for (const c of checkouts) apps.push(await load(c.dir));

let counter = 0;
const scenarios: Record<string, (app: App) => Promise<void>> = {
  validate: async (app) => {
    const res = await app.inject({
      method: "POST",
      url: "/api/v1/einvoice/validate",
      headers: app.headers,
      payload: app.template,
    });
    if (res.statusCode !== 200) throw new Error(`validate: ${res.statusCode} ${res.body}`);
  },
  sign: async (app) => {
    const payload = app.template.replace(/"irn": "INV0001-/, `"irn": "C${process.pid}N${++counter}-`);
    const res = await app.inject({
      method: "POST",
      url: "/api/v1/einvoice/sign",
      headers: app.headers,
      payload,
    });
    if (res.statusCode !== 200) throw new Error(`sign: ${res.statusCode} ${res.body}`);
  },
};

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

console.log(`${machine()}; ${rounds} rounds of ${slice} requests each, alternating, after a warm-up`);
for (const name of (args.only ?? "").split(",").map((s) => s.trim())) {
  const run = scenarios[name];
  if (!run) throw new Error(`unknown scenario ${name}: ${Object.keys(scenarios).join(", ")}`);
  // Sequential on purpose: concurrency would measure the scheduler, not the path.
  const slot = async (app: App) => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < slice; i++) await run(app);
    return Number(process.hrtime.bigint() - started) / 1000 / slice;
  };
  for (const app of apps) await slot(app);
  const times: number[][] = apps.map(() => []);
  const ratios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    // Which goes first alternates too, so neither always runs right after a collection.
    const order = r % 2 === 0 ? [0, 1] : [1, 0];
    const round: number[] = [];
    for (const i of order) round[i] = await slot(apps[i] as App);
    times[0]?.push(round[0] as number);
    times[1]?.push(round[1] as number);
    ratios.push((round[0] as number) / (round[1] as number));
  }
  const sortedRatios = [...ratios].sort((a, b) => a - b);
  const quartile = (q: number) => sortedRatios[Math.floor(q * (sortedRatios.length - 1))] as number;
  const pct = (x: number) => `${x >= 1 ? "+" : ""}${((x - 1) * 100).toFixed(1)}%`;
  console.log(
    `${name.padEnd(9)} ${checkouts[0]?.name}: ${median(times[0] as number[]).toFixed(0)} µs/req   ` +
      `${checkouts[1]?.name}: ${median(times[1] as number[]).toFixed(0)} µs/req   ` +
      `difference (median of the rounds' ratios) ${pct(median(ratios))}, quartiles ${pct(quartile(0.25))} … ${pct(quartile(0.75))}`,
  );
}
for (const app of apps) await app.close();
