import assert from "node:assert/strict";
import fs from "node:fs";
import { type TestContext, test } from "node:test";
import zlib from "node:zlib";
import { dbEnv, openContext, startServer } from "../cli/run.ts";
import { type Json, tenant } from "../helpers.ts";
import { untilOnePasses } from "../threads/event-loop-wait.ts";
import { pullServer } from "../transmission/mbs.ts";
import { ownMs, schedule } from "./own-time.ts";

/*
 * `einvoice serve` (API and worker in one process) collecting from an MBS that attacks it through
 * the pull: 63 MiB of `[0,0,…]` (and 8 MiB, within a day's bytes, past its entries), a 20 kB gzip
 * that inflates to ten million entries, a document
 * nested 6,000 deep among good ones for two businesses, documents of 500,000 fields, and 150
 * documents of 1,000 lines. Each once cost gigabytes or seconds of a stalled event loop. Here the
 * process's peak memory stays under 512 MB, /healthz answers within 200 ms throughout, every good
 * invoice is stored once and the days after a poisoned one are collected. The times are the
 * server's own: what it and this process waited for a CPU on a loaded machine is taken off (see
 * own-time.ts).
 */

const DAY_MS = 86_400_000;
const dayAgo = (n: number) => new Date(Date.now() - n * DAY_MS).toISOString().slice(0, 10);
const TINS = ["31845560-0001", "31845560-0002"];

const invoice = (irn: string, buyerTin: string, lines = 1): Json => ({
  irn,
  issue_date: dayAgo(0),
  invoice_type_code: "396",
  document_currency_code: "NGN",
  tax_currency_code: "NGN",
  accounting_supplier_party: { party_name: "Supplier Ltd", tin: "20198222-0002" },
  accounting_customer_party: { party_name: "Buyer", tin: buyerTin },
  legal_monetary_total: { payable_amount: 1000 * lines },
  invoice_line: Array.from({ length: lines }, (_, i) => ({
    hsn_code: "8471.30",
    invoiced_quantity: 1,
    line_extension_amount: 1000,
    item: { name: `item ${i}`, description: "a thing" },
    price: { price_amount: 1000, base_quantity: 1, price_unit: "NGN per 1" },
  })),
});

/** What MBS answers for each day of the pull. */
function answers() {
  const irn = (prefix: string, n: number) => `${prefix}${n}-A1B2C3D4-20261124`;
  // 63 MiB, the answer of the attack, and 8 MiB: within the bytes a day may be, past its entries.
  const zeros = Buffer.from(`{"code":200,"data":[${"0,".repeat(31.5 * 2 ** 20)}0]}`);
  const fewerZeros = zeros.subarray(0, 8 * 2 ** 20 - 2);
  const bomb = zlib.gzipSync(`{"code":200,"data":[${"0,".repeat(10_500_000)}0]}`, { level: 9 });
  const good = Array.from({ length: 6 }, (_, i) => JSON.stringify(invoice(irn("G", i), TINS[i % 2] ?? "")));
  const poisoned = `{"irn":"${irn("P", 1)}","accounting_customer_party":{"tin":"${TINS[0]}"},"note":${"[".repeat(6000)}${"]".repeat(6000)}}`;
  const fields = `{"irn":"${irn("F", 0)}","accounting_customer_party":{"tin":"${TINS[0]}"},${Array.from(
    { length: 500_000 },
    (_, i) => `"u${i}":0`,
  ).join(",")}}`;
  const long = Array.from({ length: 150 }, (_, i) =>
    JSON.stringify(invoice(irn("L", i), TINS[i % 2] ?? "", 1000)),
  );
  const list = (entries: string[]) => Buffer.from(`{"code":200,"data":[${entries.join(",")}]}`);
  return new Map<string, { body: Buffer; gzip?: boolean }>([
    [dayAgo(0), { body: list([...good.slice(0, 3), poisoned, ...good.slice(3)]) }],
    [dayAgo(1), { body: zeros }],
    [dayAgo(2), { body: bomb, gzip: true }],
    // Five: 30 MB in all, within the bytes a day may be.
    [dayAgo(3), { body: list(Array.from({ length: 5 }, () => fields)) }],
    [dayAgo(4), { body: list(long) }],
    [dayAgo(5), { body: Buffer.concat([fewerZeros, Buffer.from("0]}")]) }],
  ]);
}

async function hostileMbs(t: TestContext) {
  const byDay = answers();
  return pullServer(t, (day) => {
    const answer = byDay.get(day);
    if (!answer) return { body: `{"code":200,"data":[]}` };
    if (!answer.gzip) return { body: answer.body };
    return {
      body: answer.body,
      headers: { "content-encoding": "gzip", "content-length": answer.body.length },
    };
  });
}

/** The process's peak resident memory so far, in MB (Linux). */
function peakMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

/**
 * One collection from the hostile MBS, every invoice and failure checked; answers the slowest
 * /healthz of it, of the server's own time, for the caller to judge.
 */
async function collectFromHostileMbs(t: TestContext): Promise<number> {
  const mbs = await hostileMbs(t);
  const db = await dbEnv(t);
  const ctx = await openContext(t, db);
  for (const tin of TINS) await tenant(ctx, { tin });
  const server = await startServer(t, {
    ...db.env,
    EINVOICE_AUTHORITY: "mbs",
    EINVOICE_MBS_URL: mbs.url,
    EINVOICE_MBS_API_KEY: "mbs-key-0f3a9c",
    EINVOICE_MBS_API_SECRET: "mbs-secret-7d21e4",
    EINVOICE_MBS_CALL_TIMEOUT_MS: "20000",
    EINVOICE_DELIVERY_TIMEOUT_MS: "40000",
    EINVOICE_INBOX_PULL_MS: "1000",
    EINVOICE_INBOX_LOOKBACK_DAYS: "5",
    EINVOICE_MAX_ATTEMPTS: "2",
    EINVOICE_RETRY_BASE_MS: "500",
    EINVOICE_LOG_LEVEL: "warn",
  });
  const pid = server.child.pid;
  assert.ok(pid);

  let slowest = 0;
  let slowestRaw = 0;
  let probes = 0;
  const stored = async () =>
    Number(
      (
        await ctx.db
          .selectFrom("received_invoices")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const pullJobs = () =>
    ctx.db
      .selectFrom("outbox_jobs")
      .select(["state", "payload", "last_error"])
      .where("kind", "=", "pull")
      .execute();
  const deadline = Date.now() + 180_000;
  for (;;) {
    const [serving, asking] = [schedule(pid), schedule()];
    const res = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    slowestRaw = Math.max(slowestRaw, performance.now() - serving.at);
    // The server's own time, less what this process waited for a CPU to ask and read the answer.
    slowest = Math.max(slowest, ownMs(serving) - (schedule().waited - asking.waited));
    probes++;
    const jobs = await pullJobs();
    // Each day pulled to its end at least once (today's is queued again every second).
    const ended = new Set(jobs.filter((job) => job.state !== "pending").map((job) => job.payload));
    const settled = [0, 1, 2, 3, 4, 5].every((n) =>
      ended.has(JSON.stringify({ source: "mbs", day: dayAgo(n) })),
    );
    if (settled && (await stored()) >= 156) break;
    if (Date.now() > deadline)
      assert.fail(`not settled: ${JSON.stringify(jobs).slice(0, 2000)}; ${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const peak = peakMb(pid);
  t.diagnostic(
    `peak ${peak.toFixed(0)} MB, slowest /healthz ${slowest.toFixed(0)} ms of ${probes} (${slowestRaw.toFixed(0)} ms with the waits for a CPU)`,
  );
  assert.ok(peak < 512, `serve peaked at ${peak.toFixed(0)} MB`);

  // The good ones, each once: 6 of the poisoned day, 150 of the long documents.
  const rows = await ctx.db.selectFrom("received_invoices").select("irn").execute();
  const irns = rows.map((row) => row.irn);
  assert.equal(irns.length, 156);
  assert.equal(new Set(irns).size, 156);
  assert.equal(irns.filter((i) => i.startsWith("G")).length, 6);
  assert.equal(irns.filter((i) => i.startsWith("L")).length, 150);
  // The three days whose answers break a bound failed for good, each with its reason; the others are done.
  const jobs = await pullJobs();
  const failed = jobs.filter((job) => job.state === "failed").map((job) => job.last_error ?? "");
  assert.equal(failed.length, 3, JSON.stringify(jobs).slice(0, 2000));
  assert.ok(
    failed.some((e) => /over 33554432 bytes/.test(e)),
    failed.join(" | "),
  );
  assert.ok(
    failed.some((e) => /more than 50000 entries/.test(e)),
    failed.join(" | "),
  );
  assert.ok(
    failed.some((e) => /inflated past 200 times/.test(e)),
    failed.join(" | "),
  );
  const state = await ctx.collector.state();
  const last = JSON.parse(state?.last_outcome ?? "{}") as Json;
  assert.ok(last.day, JSON.stringify(state));
  return slowest;
}

test("serve collecting from a hostile MBS: under 512 MB, /healthz within 200 ms, every good invoice stored once", {
  timeout: 600_000,
  skip: process.platform !== "linux" ? "reads the peak memory from /proc" : false,
}, async (t) => {
  // A stall counts when every collection, from the same hostile answers, stalls: up to three. The
  // host of a VM can take a CPU away for half a second (seen: 547 ms, 1,954 ms and 446 ms in runs of
  // an unchanged tree, none in the next ones; a probe pinned to each CPU saw gaps of 124 and 154 ms
  // that no wait for a CPU explains, seconds apart), which no figure inside the machine shows, and
  // such pauses come in bursts (seen: 311 ms, then 391 ms in the second collection, on a tree whose
  // other runs stalled at most 42 ms); an answer that stalls the event loop does so each time it is read.
  const slowest = await untilOnePasses(
    () => collectFromHostileMbs(t),
    (ms) => ms < 200,
  );
  assert.ok(
    slowest.some((ms) => ms < 200),
    `/healthz took ${slowest.map((ms) => ms.toFixed(0)).join(", ")} ms in three collections, waits for a CPU taken off`,
  );
});
