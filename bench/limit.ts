/**
 * A sign at the limit of its own work: this service's `POST /sign` beside the bare durable sign
 * (bench/bare-sign.ts, what a sign cannot skip, done bare), and `validate` beside the echo ceiling
 * (bench/ceiling.ts), the same body (the full sample invoice, a fresh IRN per sign), the same
 * connections and duration, in one run, each round in the other order. Prints requests/s, p50/p99,
 * failures and the server's CPU per request (in all, and on its event loops), then sign/bare (target
 * ≥ 0.70, with this service's p99 ≤ 15 ms) and validate/echo (target ≥ 0.35).
 * With `--rate N` every scenario is offered N requests/s instead of as many as it can answer: its
 * CPU per request is then measured at the same load for every variant of the code, the steadiest
 * figure to decide a change by on a noisy machine (no ratio is printed then).
 *   npm run bench:limit -- [--engine sqlite|postgres] [--duration 10] [--connections 50] [--rounds 2]
 *                          [--processes 1] [--only bare,sign,echo,validate] [--cpu-prof DIR] [--rate N]
 */
import path from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import {
  benchBusiness,
  benchDatabase,
  cpuMs,
  cpuTicks,
  freePort,
  loopCpuMs,
  machine,
  signingBody,
  start,
  stealSince,
  stop,
  waitFor,
} from "./lib.ts";

const { values: args } = parseArgs({
  options: {
    engine: { type: "string", default: "sqlite" },
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "50" },
    rounds: { type: "string", default: "2" },
    // The service's API processes: it may use both cores, where the bare sign and the echo use one
    // thread. On SQLite a second process contends for the write lock (see RESULTS.md).
    processes: { type: "string", default: "1" },
    only: { type: "string" },
    "cpu-prof": { type: "string" },
    rate: { type: "string" },
  },
});
const duration = Number(args.duration);
const connections = Number(args.connections);
const rounds = Number(args.rounds);
const rate = args.rate === undefined ? undefined : Number(args.rate);
if (rate !== undefined && !(rate > 0)) throw new Error("--rate is a number of requests per second");
console.log(`${machine()}`);

const database = await benchDatabase(args.engine);
const tin = "12345678-0001";
const { business, key } = await benchBusiness(database.env, "Bench Limit Ltd", tin);
const { body, fresh } = signingBody(business, tin, "L");
const headers = { "api-key": key.api_key, "api-secret": key.api_secret, "content-type": "application/json" };

const profiling = args["cpu-prof"] ? ["--cpu-prof", "--cpu-prof-dir", path.resolve(args["cpu-prof"])] : [];
const [apiPort, barePort, echoPort] = [await freePort(), await freePort(), await freePort()];
const tsx = "node_modules/tsx/dist/cli.mjs";
const api = start([...profiling, "bin/einvoice.js", "serve", "--processes", args.processes], {
  ...database.env,
  PORT: String(apiPort),
  HOST: "127.0.0.1",
});
const bare = start([tsx, "bench/bare-sign.ts"], {
  PORT: String(barePort),
  EINVOICE_BARE_DB: path.join(database.dir, "bare.db"),
});
const echo = start([tsx, "bench/ceiling.ts"], { PORT: String(echoPort) });
const children = [api, bare, echo];

type Scenario = {
  key: string;
  name: string;
  url: string;
  pid: number | undefined;
  request: autocannon.Request;
};
const post = (route: string, withHeaders: Record<string, string>) => ({
  method: "POST" as const,
  path: route,
  headers: withHeaders,
});
const scenarios: Scenario[] = [
  {
    key: "bare",
    name: "bare durable sign",
    url: `http://127.0.0.1:${barePort}`,
    pid: bare.pid,
    request: {
      ...post("/sign", { "content-type": "application/json" }),
      setupRequest: (r) => ({ ...r, body: fresh() }),
    },
  },
  {
    key: "sign",
    name: "this service's sign",
    url: `http://127.0.0.1:${apiPort}`,
    pid: api.pid,
    request: { ...post("/api/v1/einvoice/sign", headers), setupRequest: (r) => ({ ...r, body: fresh() }) },
  },
  {
    key: "echo",
    name: "echo (bare Fastify)",
    url: `http://127.0.0.1:${echoPort}`,
    pid: echo.pid,
    request: { ...post("/echo", { "content-type": "application/json" }), body },
  },
  {
    key: "validate",
    name: "this service's validate",
    url: `http://127.0.0.1:${apiPort}`,
    pid: api.pid,
    request: { ...post("/api/v1/einvoice/validate", headers), body },
  },
];
const only = args.only?.split(",").map((word) => word.trim());
const chosen = scenarios.filter((s) => !only || only.includes(s.key));
const run = (s: Scenario, seconds: number) =>
  autocannon({
    url: s.url,
    connections,
    duration: seconds,
    requests: [s.request],
    ...(rate === undefined ? {} : { overallRate: rate }),
  });

try {
  await waitFor(`http://127.0.0.1:${apiPort}/healthz`);
  await waitFor(`http://127.0.0.1:${barePort}/`);
  await waitFor(`http://127.0.0.1:${echoPort}/`);
  for (const s of chosen) {
    const res = await fetch(`${s.url}${s.request.path}`, {
      method: "POST",
      headers: s.request.headers as Record<string, string>,
      body: s.request.body ? String(s.request.body) : fresh(),
    });
    if (res.status !== 200) throw new Error(`${s.name} refused: ${res.status} ${await res.text()}`);
  }
  // Unmeasured: every path compiled before the first round.
  for (const s of chosen) await run(s, 2);
  console.log(
    `engine ${args.engine}, ${args.processes} API process(es), ${connections} connections, ${duration} s each, ${rounds} round(s)` +
      (rate === undefined ? "" : `, ${rate} requests/s offered`),
  );
  type Total = { requests: number; seconds: number; cpuMs: number; bad: number; p99: number[] };
  const totals = new Map<string, Total>();
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? chosen : [...chosen].reverse();
    for (const s of order) {
      const [before, loopBefore, ticks] = [cpuMs(s.pid), loopCpuMs(s.pid), cpuTicks()];
      const result = await run(s, duration);
      const [after, loopAfter] = [cpuMs(s.pid), loopCpuMs(s.pid)];
      const spent = before !== undefined && after !== undefined ? after - before : Number.NaN;
      const onLoop =
        loopBefore !== undefined && loopAfter !== undefined ? loopAfter - loopBefore : Number.NaN;
      const bad = result.non2xx + result.errors + result.timeouts;
      const t = totals.get(s.key) ?? { requests: 0, seconds: 0, cpuMs: 0, bad: 0, p99: [] };
      totals.set(s.key, {
        requests: t.requests + result.requests.total,
        // The run's own length (it ends when the last answer is in), not the nominal one.
        seconds: t.seconds + result.duration,
        cpuMs: t.cpuMs + spent,
        bad: t.bad + bad,
        p99: [...t.p99, result.latency.p99],
      });
      console.log(
        `${s.name.padEnd(24)} ${Math.round(result.requests.average).toString().padStart(6)} req/s   p50 ${String(result.latency.p50).padStart(3)} ms   p99 ${String(result.latency.p99).padStart(3)} ms   failures ${bad}   cpu ${Math.round((spent * 1000) / result.requests.total)} µs/req (event loop ${Math.round((onLoop * 1000) / result.requests.total)})   ${stealSince(ticks)}`,
      );
    }
  }
  const served = (k: string) => {
    const t = totals.get(k);
    return t ? t.requests / t.seconds : Number.NaN;
  };
  const sign = totals.get("sign");
  if (rate !== undefined) console.log("at a fixed rate no ratio is printed: compare the CPU per request");
  else if (totals.has("bare") && sign) {
    const ratio = served("sign") / served("bare");
    const p99 = Math.max(...sign.p99);
    const met = ratio >= 0.7 && p99 <= 15 && sign.bad === 0;
    console.log(
      `sign: ${Math.round(served("sign"))}/s against the bare durable sign's ${Math.round(served("bare"))}/s = ${ratio.toFixed(2)}; ` +
        `p99 at most ${p99} ms; failures ${sign.bad} (target ≥ 0.70, p99 ≤ 15 ms, none failed: ${met ? "met" : "missed"})`,
    );
  }
  if (rate === undefined && totals.has("echo") && totals.has("validate")) {
    const ratio = served("validate") / served("echo");
    console.log(
      `validate: ${Math.round(served("validate"))}/s against the echo's ${Math.round(served("echo"))}/s = ${ratio.toFixed(2)} (target ≥ 0.35: ${ratio >= 0.35 ? "met" : "missed"})`,
    );
  }
} finally {
  await stop(children);
  await database.drop();
}
