/**
 * UBL 2.1 against JSON, the same invoice both ways.
 * 1. HTTP, a real server in a separate process (`serve`, EINVOICE_UBL_SCHEMAS set), one run: sign
 *    and validate of the full sample invoice as JSON and as UBL (written by writeUbl), the same
 *    connections and duration, in alternating order from round to round; signs/s, p50/p99, failures,
 *    the server's CPU per request, and UBL/JSON.
 * 2. In process: parse + schema + mapping (what `ublReader(...).read` does, the business's profile
 *    aside), as written and without whitespace between elements, and writeUbl, for 10, 100 and
 *    1,000 lines; the median and p99 of each, and the median of each step.
 *   npm run bench:ubl -- [--engine sqlite|postgres] [--duration 10] [--connections 32] [--rounds 2]
 *                        [--iterations 2000] [--part http|process|both]
 *                        [--only sign-json,sign-ubl,validate-json,validate-ubl] [--cpu-prof DIR]
 *                        [--server-cpus 1]
 */
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { readUbl } from "../src/documents/ubl/read.ts";
import { loadUblSchemas } from "../src/documents/ubl/schema.ts";
import { ublTree } from "../src/documents/ubl/tree.ts";
import { writeUbl } from "../src/documents/ubl/write.ts";
import { parseXml, withXml, XML_BOUNDS } from "../src/documents/ubl/xml.ts";
import { withLineTotals } from "../test/documents/line-totals.ts";
import { UBL_SCHEMAS } from "../test/documents/ubl/examples.ts";
import { fixture, type Json } from "../test/helpers.ts";
import { benchBusiness, benchDatabase, cpuMs, freePort, machine, pin, start, stop, waitFor } from "./lib.ts";

const { values: args } = parseArgs({
  options: {
    engine: { type: "string", default: "sqlite" },
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "32" },
    // Each round runs every scenario once, JSON and UBL in turn first: drift on a shared machine
    // (and the database growing) then weighs on both alike.
    rounds: { type: "string", default: "2" },
    // Timed runs of the in-process cases for 10 lines; 100 lines take a quarter, 1,000 a twentieth.
    iterations: { type: "string", default: "2000" },
    part: { type: "string", default: "both" },
    only: { type: "string" },
    // A V8 CPU profile of the API process, written into this directory when the server stops.
    "cpu-prof": { type: "string" },
    // Linux: the cores the API server may run on; the load generator takes the others.
    "server-cpus": { type: "string" },
  },
});
const duration = Number(args.duration);
const connections = Number(args.connections);
const rounds = Number(args.rounds);
const iterations = Number(args.iterations);

const load = () => os.loadavg().map((l) => l.toFixed(2));
console.log(`${machine()}, load average ${load().join(" ")}`);

type Doc = Json & { irn: string; issue_date: string; invoice_line: Json[] };

/** The fixture with `count` lines like its second (no line discount); every amount adds up. */
function withLines(base: Doc, count: number): Doc {
  const template = base.invoice_line[1] as Json;
  const lines = Array.from({ length: count }, (_, i) => {
    const quantity = 1 + (i % 7);
    const price = 1000 + i;
    return {
      ...template,
      invoiced_quantity: quantity,
      line_extension_amount: quantity * price,
      price: { ...(template.price as Json), price_amount: price },
    };
  });
  return withLineTotals(base, lines);
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1)).padStart(6);

async function http(): Promise<void> {
  const database = await benchDatabase(args.engine);
  const env = { ...database.env, EINVOICE_UBL_SCHEMAS: UBL_SCHEMAS };
  const tin = "12345678-0001";
  const { business, key } = await benchBusiness(env, "Bench UBL Ltd", tin);

  const doc = fixture("invoice-full", business) as Doc;
  // The supplier is the business that signs: its invoices raise no supplier_tin_mismatch warning.
  (doc.accounting_supplier_party as Json).tin = tin;
  const auth = { "api-key": key.api_key, "api-secret": key.api_secret };
  const jsonHeaders = { ...auth, "content-type": "application/json" };
  const xmlHeaders = { ...auth, "content-type": "application/xml" };

  const json = JSON.stringify(doc);
  if (!json.includes(`"irn":"INV0001-`)) throw new Error("the fixture's IRN is not where it was");
  let jsonCounter = 0;
  // A fresh IRN each, as bench/http.ts makes them: the invoice number alone changes.
  const freshJson = () => json.replace(/"irn":"INV0001-/, `"irn":"B${process.pid}N${++jsonCounter}-`);

  // The UBL reader makes the IRN of cbc:ID (its letters and digits), the service id and the issue
  // date, unless cbc:ID is an IRN of the business already, as writeUbl writes it: the fixed body
  // keeps that IRN (validate), the signed ones get a new invoice number each.
  const xml = writeUbl({ irn: doc.irn, document: doc });
  const idElement = `<cbc:ID>${doc.irn}</cbc:ID>`;
  const idAt = xml.indexOf(idElement);
  if (idAt < 0) throw new Error("writeUbl wrote no cbc:ID with the IRN");
  const [xmlHead, xmlTail] = [xml.slice(0, idAt), xml.slice(idAt + idElement.length)];
  let xmlCounter = 0;
  const freshXml = () => `${xmlHead}<cbc:ID>U${process.pid}/${++xmlCounter}</cbc:ID>${xmlTail}`;
  console.log(`bodies: JSON ${json.length} bytes, UBL ${xml.length} bytes (2 lines)`);

  const profiling = args["cpu-prof"] ? ["--cpu-prof", "--cpu-prof-dir", path.resolve(args["cpu-prof"])] : [];
  const port = await freePort();
  const server = start([...profiling, "bin/einvoice.js", "serve", "--processes", "1"], {
    ...env,
    PORT: String(port),
    HOST: "127.0.0.1",
  });
  const api = `http://127.0.0.1:${port}`;
  try {
    await waitFor(`${api}/healthz`);
    if (args["server-cpus"]) pin(args["server-cpus"], [server]);

    // Each body is what the server accepts, and the UBL one signs under the IRN it is meant to.
    const post = (route: string, headers: Record<string, string>, body: string) =>
      fetch(`${api}/api/v1/einvoice/${route}`, { method: "POST", headers, body });
    for (const [route, headers, body] of [
      ["validate", jsonHeaders, json],
      ["validate", xmlHeaders, xml],
      ["sign", jsonHeaders, freshJson()],
      ["sign", xmlHeaders, freshXml()],
    ] as const) {
      const res = await post(route, headers, body);
      if (res.status !== 200) throw new Error(`${route} refused: ${res.status} ${await res.text()}`);
    }
    const expected = `U${process.pid}${xmlCounter}-${business.service_id}-${doc.issue_date.replaceAll("-", "")}`;
    const found = await fetch(`${api}/api/v1/einvoice/lookup/${expected}`, { headers: auth });
    if (found.status !== 200) throw new Error(`the UBL sign stored no ${expected}: ${found.status}`);

    type Scenario = { key: string; name: string; request: autocannon.Request };
    const scenarios: Scenario[] = [
      {
        key: "validate-json",
        name: "validate, JSON",
        request: { method: "POST", path: "/api/v1/einvoice/validate", headers: jsonHeaders, body: json },
      },
      {
        key: "validate-ubl",
        name: "validate, UBL",
        request: { method: "POST", path: "/api/v1/einvoice/validate", headers: xmlHeaders, body: xml },
      },
      {
        key: "sign-json",
        name: "sign, JSON (fresh IRN)",
        request: {
          method: "POST",
          path: "/api/v1/einvoice/sign",
          headers: jsonHeaders,
          setupRequest: (r) => ({ ...r, body: freshJson() }),
        },
      },
      {
        key: "sign-ubl",
        name: "sign, UBL (fresh cbc:ID)",
        request: {
          method: "POST",
          path: "/api/v1/einvoice/sign",
          headers: xmlHeaders,
          setupRequest: (r) => ({ ...r, body: freshXml() }),
        },
      },
    ];
    const only = args.only?.split(",").map((word) => word.trim().toLowerCase());
    const chosen = scenarios.filter((s) => !only || only.includes(s.key));
    const run = (s: Scenario, seconds: number) =>
      autocannon({ url: api, connections, duration: seconds, requests: [s.request] });

    // Unmeasured: the server's code paths for both kinds of body compiled before the first round.
    for (const s of chosen) await run(s, 2);

    console.log(
      `engine ${args.engine}, 1 API process, ${connections} connections, ${duration} s each, ${rounds} round(s); ` +
        "load generator on the same machine",
    );
    const totals = new Map<string, { requests: number; seconds: number; cpuMs: number; bad: number }>();
    for (let round = 0; round < rounds; round++) {
      // JSON first in even rounds, UBL first in odd ones.
      const order = round % 2 === 0 ? chosen : [...chosen].sort((a, b) => b.key.localeCompare(a.key));
      for (const s of order) {
        const before = cpuMs(server.pid);
        const result = await run(s, duration);
        const after = cpuMs(server.pid);
        const bad = result.non2xx + result.errors + result.timeouts;
        const spent = before !== undefined && after !== undefined ? after - before : Number.NaN;
        const total = totals.get(s.key) ?? { requests: 0, seconds: 0, cpuMs: 0, bad: 0 };
        totals.set(s.key, {
          requests: total.requests + result.requests.total,
          seconds: total.seconds + duration,
          cpuMs: total.cpuMs + spent,
          bad: total.bad + bad,
        });
        const cpu = Number.isNaN(spent)
          ? ""
          : `   cpu ${Math.round((spent * 1000) / result.requests.total)} µs/req`;
        console.log(
          `${s.name.padEnd(26)} ${Math.round(result.requests.average).toString().padStart(6)} req/s   p50 ${String(result.latency.p50).padStart(3)} ms   p99 ${String(result.latency.p99).padStart(3)} ms   failures ${bad}${cpu}`,
        );
      }
    }
    const rate = (key: string) => {
      const t = totals.get(key);
      return t ? t.requests / t.seconds : Number.NaN;
    };
    const cpuPer = (key: string) => {
      const t = totals.get(key);
      return t ? (t.cpuMs * 1000) / t.requests : Number.NaN;
    };
    for (const what of ["sign", "validate"]) {
      const [j, u] = [rate(`${what}-json`), rate(`${what}-ubl`)];
      if (Number.isNaN(j) || Number.isNaN(u)) continue;
      console.log(
        `${what}: JSON ${Math.round(j)}/s, UBL ${Math.round(u)}/s, UBL/JSON ${(u / j).toFixed(2)}` +
          `${what === "sign" ? ` (target ≥ 0.5: ${u / j >= 0.5 ? "met" : "missed"})` : ""}` +
          `; server CPU ${Math.round(cpuPer(`${what}-json`))} vs ${Math.round(cpuPer(`${what}-ubl`))} µs/req`,
      );
    }
  } finally {
    await stop([server]);
    await database.drop();
  }
}

function inProcess(): void {
  const base = fixture("invoice-full", { business_id: "bench", service_id: "AB12CD34" }) as Doc;
  const schemas = loadUblSchemas(UBL_SCHEMAS);
  console.log(`UBL 2.1 schemas compiled in ${Math.round(schemas.compileMs)} ms; one thread, in process`);
  const signer = { businessId: "bench", serviceId: "AB12CD34" };

  /** Wall times of `runs` calls of `fn` after `warmUp` untimed ones, sorted. */
  const time = (runs: number, warmUp: number, fn: () => void) => {
    for (let i = 0; i < warmUp; i++) fn();
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      fn();
      times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b);
  };

  for (const lines of [10, 100, 1000]) {
    const runs = Math.max(
      1,
      Math.round(lines <= 10 ? iterations : lines <= 100 ? iterations / 4 : iterations / 20),
    );
    const doc = withLines(base, lines);
    const written = writeUbl({ irn: doc.irn, document: doc });
    // As many ERPs send it: no whitespace between elements.
    const compact = written.replace(/>\s+</g, "><");
    for (const [form, xml] of [
      ["as written", written],
      ["compact", compact],
    ] as const) {
      const label = `read ${lines} lines, ${form}`.padEnd(28);
      const bytes = Buffer.byteLength(xml);
      if (bytes > XML_BOUNDS.bytes) {
        console.log(
          `${label} ${bytes} bytes: beyond the ${XML_BOUNDS.bytes / 1024} KiB bound, refused unparsed`,
        );
        continue;
      }
      const steps = {
        parse: [] as number[],
        schema: [] as number[],
        copy: [] as number[],
        map: [] as number[],
      };
      const read = () => {
        const t0 = performance.now();
        const parsed = parseXml(xml);
        if (!parsed.ok) throw new Error(parsed.refusal.message);
        const t1 = performance.now();
        let t2 = t1;
        withXml(parsed.doc, (d) => {
          const findings = schemas.check(d, parsed.root.kind);
          if (findings.length > 0) throw new Error(findings[0]?.message);
          t2 = performance.now();
        });
        const tree = ublTree(xml);
        const t3 = performance.now();
        const out = readUbl(tree, signer);
        if (out.refusals.length > 0) throw new Error(out.refusals[0]?.message);
        const t4 = performance.now();
        steps.parse.push(t1 - t0);
        steps.schema.push(t2 - t1);
        steps.copy.push(t3 - t2);
        steps.map.push(t4 - t3);
      };
      const warmUp = Math.max(20, Math.round(runs / 10));
      const times = time(runs, warmUp, read);
      const median = (list: number[]) =>
        quantile(
          list.slice(warmUp).sort((a, b) => a - b),
          0.5,
        );
      console.log(
        `${label} median ${ms(quantile(times, 0.5))} ms   p99 ${ms(quantile(times, 0.99))} ms   ` +
          `(medians: parse ${median(steps.parse).toFixed(2)}, schema ${median(steps.schema).toFixed(2)}, ` +
          `tree ${median(steps.copy).toFixed(2)}, readUbl ${median(steps.map).toFixed(2)} ms; ` +
          `${runs} runs, ${Math.round(bytes / 1024)} KiB)`,
      );
    }
    const writes = time(runs, Math.max(20, Math.round(runs / 10)), () =>
      writeUbl({ irn: doc.irn, document: doc }),
    );
    console.log(
      `${`writeUbl ${lines} lines`.padEnd(28)} median ${ms(quantile(writes, 0.5))} ms   p99 ${ms(quantile(writes, 0.99))} ms   (${runs} runs, ${Math.round(Buffer.byteLength(written) / 1024)} KiB written)`,
    );
  }
  schemas.dispose();
}

if (args.part !== "process") await http();
if (args.part !== "http") inProcess();
console.log(`load average ${load().join(" ")}`);
