import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import { test } from "node:test";
import { loadConfig } from "../../src/config.ts";
import { createContext } from "../../src/main.ts";
import { cleanEnv, EINVOICE, freePort } from "../cli/run.ts";
import {
  ENGINE,
  eventually,
  freshDatabase,
  freshInvoice,
  type Json,
  REPO_ROOT,
  tempDir,
  tenant,
} from "../helpers.ts";
import { attacks, balancedInvoice } from "./hostile-inputs.ts";

/*
 * Every attack of hostile-inputs.ts, once each, against a server started as operators start it
 * (`einvoice serve`, its own process), while another process probes /healthz every 50 ms: each
 * answer must come within 2 s, /healthz must never wait more than 200 ms, and the server's memory
 * must not grow by 256 MB.
 *
 * The bounds are on the server's work, not on the machine: on a machine busy with other work the
 * server and the probe also wait for a CPU, which Linux counts per thread (schedstat's run delay).
 * An answer's time is counted without what the server's threads spent waiting for a CPU meanwhile,
 * a /healthz wait without what the server's main thread and the probe's did. (An idle machine adds
 * nothing: the bounds are the same.)
 */

const ANSWER_MS = 2000;
const HEALTHZ_MS = 200;
const MEMORY_MB = 256;

/**
 * Probes /healthz one request at a time, every 50 ms, printing each wait as a JSON line with the
 * milliseconds the server's main thread and the probe's spent runnable but waiting for a CPU.
 */
const PROBE = `
const fs = require("node:fs");
const http = require("node:http");
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const runDelayMs = (pid) => {
  try {
    return Number(fs.readFileSync("/proc/" + pid + "/task/" + pid + "/schedstat", "utf8").split(" ")[1]) / 1e6;
  } catch {
    return 0;
  }
};
const queued = () => runDelayMs(process.env.PROBE_PID) + runDelayMs(process.pid);
function probe() {
  const start = Date.now();
  const before = queued();
  const done = (status) => {
    const ms = Date.now() - start;
    process.stdout.write(JSON.stringify({ start, ms, queued: Math.round(queued() - before), status }) + "\\n");
    setTimeout(probe, 50);
  };
  http.get(process.env.PROBE_URL, { agent }, (res) => { res.resume(); res.on("end", () => done(res.statusCode)); })
    .on("error", () => done(0));
}
probe();
`;

type Sample = { start: number; ms: number; queued: number; status: number };

/** Milliseconds the process's threads have spent runnable but waiting for a CPU, all together. */
function runDelayMs(pid: number): number {
  let ns = 0;
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[1]);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return ns / 1e6;
}

function memoryKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
  assert.ok(match, `${field} of process ${pid}`);
  return Number(match[1]);
}

function started(t: test.TestContext, child: ChildProcess) {
  t.after(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    await once(child, "exit");
  });
  return child;
}

test(`hostile requests to a real server on ${ENGINE}: bounded answers, /healthz responsive, memory bounded`, {
  timeout: 900_000,
}, async (t) => {
  const dir = tempDir(t);
  const database = await freshDatabase(dir);
  t.after(() => database.drop());
  const env = {
    EINVOICE_DATABASE_URL: database.url,
    EINVOICE_DATA_DIR: dir,
    EINVOICE_LOG_LEVEL: "warn",
    // Limits are not what is tested here: every attack must reach the work it attacks.
    EINVOICE_RATE_LIMIT_PER_MIN: "10000000",
    EINVOICE_PUBLIC_RATE_LIMIT_PER_MIN: "10000000",
    EINVOICE_AUTH_FAILURES_PER_MIN: "10000000",
  };
  const setup = await createContext(loadConfig(env));
  const who = await tenant(setup);
  const certificate = (await setup.businesses.find(who.business_id))?.certificate ?? "";
  await setup.close();

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let serverErr = "";
  const server = started(
    t,
    spawn(process.execPath, [...EINVOICE, "serve"], {
      cwd: REPO_ROOT,
      env: cleanEnv({ ...env, PORT: String(port), HOST: "127.0.0.1" }),
      stdio: ["ignore", "ignore", "pipe"],
    }),
  );
  server.stderr?.on("data", (c: Buffer) => {
    serverErr += c.toString();
  });
  await eventually(
    async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.status === 200,
    60_000,
    "the server",
  );
  const send = (path: string, body: string, headers: Record<string, string> = {}, method = "POST") =>
    fetch(`${base}${path}`, {
      method,
      headers: {
        ...who.headers,
        ...(method === "POST" ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      ...(method === "POST" ? { body } : {}),
    });
  // Warm: the first sign starts the preparation thread, the first image the decoding thread.
  for (let i = 0; i < 20; i++) {
    const res = await send("/api/v1/einvoice/sign", JSON.stringify(freshInvoice(who)));
    assert.equal(res.status, 200, await res.text());
  }
  // And the first large document starts the validation thread.
  const large = await send("/api/v1/einvoice/validate", JSON.stringify(balancedInvoice(who, 500)));
  assert.equal(large.status, 200, await large.text());
  const pid = server.pid as number;
  const baselineKb = memoryKb(pid, "VmRSS");

  const samples: Sample[] = [];
  const probe = started(
    t,
    spawn(process.execPath, ["-e", PROBE], {
      env: { ...process.env, PROBE_URL: `${base}/healthz`, PROBE_PID: String(pid) },
    }),
  );
  let pending = "";
  probe.stdout?.on("data", (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) if (line) samples.push(JSON.parse(line) as Sample);
  });
  await eventually(async () => samples.length >= 5, 10_000, "the /healthz probe");

  const failures: string[] = [];
  const windows: { name: string; from: number; to: number }[] = [];
  const sent = attacks(who, certificate);
  for (const attack of sent) {
    const body = attack.body();
    const queuedBefore = runDelayMs(pid);
    const from = Date.now();
    let status = 0;
    let answer: Json = {};
    try {
      const res = await send(attack.path, body, attack.headers, attack.method);
      status = res.status;
      const text = await res.text();
      answer = text ? (JSON.parse(text) as Json) : {};
    } catch (err) {
      failures.push(`${attack.name}: no answer (${String(err)})`);
      continue;
    }
    const to = Date.now();
    const queued = Math.round(runDelayMs(pid) - queuedBefore);
    windows.push({ name: attack.name, from, to });
    if (!attack.statuses.includes(status)) {
      failures.push(
        `${attack.name}: ${status} (expected ${attack.statuses.join(" or ")}) ${JSON.stringify(answer).slice(0, 300)}`,
      );
    }
    if (to - from - queued > ANSWER_MS) {
      failures.push(`${attack.name}: answered in ${to - from} ms (${queued} ms of it waiting for a CPU)`);
    }
    if (status >= 400) {
      // The spec's envelope, whatever the attack.
      if (
        answer.status !== false ||
        answer.code !== status ||
        answer.data !== null ||
        typeof answer.message !== "string"
      ) {
        failures.push(`${attack.name}: not the error envelope: ${JSON.stringify(answer).slice(0, 300)}`);
      }
    }
    const problem = attack.statuses.includes(status) ? attack.check?.(answer) : undefined;
    if (problem) failures.push(`${attack.name}: ${problem}`);
    // A probe that was waiting during this attack reports after it: give it time to land.
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  const slow = (sample: Sample) => sample.ms - sample.queued > HEALTHZ_MS;
  const windowOf = (sample: Sample, among: typeof windows) =>
    among.find((w) => sample.start + sample.ms >= w.from && sample.start <= w.to);
  // A probe held up during an attack counts when the attack holds it up again. The host of a VM
  // can take a CPU away for half a second (seen: 434 ms and 1,020 ms in runs of the same tree, then
  // none in the next nine), which no figure inside the machine shows; an attack that stalls the
  // event loop does so each time it is sent. Only the probes are looked at on the second try: a
  // sign sent again answers that its IRN exists.
  const stalled = new Set(samples.filter(slow).map((sample) => windowOf(sample, windows)?.name));
  const again: typeof windows = [];
  for (const attack of sent) {
    if (!stalled.has(attack.name)) continue;
    const from = Date.now();
    await send(attack.path, attack.body(), attack.headers, attack.method)
      .then((res) => res.text())
      .catch(() => "");
    again.push({ name: attack.name, from, to: Date.now() });
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  await new Promise((resolve) => setTimeout(resolve, again.length > 0 ? 300 : 0));
  probe.kill("SIGTERM");
  const stalledAgain = new Set(samples.filter(slow).map((sample) => windowOf(sample, again)?.name));

  const peakKb = memoryKb(pid, "VmHWM");
  for (const sample of samples) {
    if (sample.status !== 200) failures.push(`/healthz answered ${sample.status} at ${sample.start}`);
    const [during, retried] = [windowOf(sample, windows), windowOf(sample, again)];
    if (!slow(sample) || (during && !stalledAgain.has(during.name))) continue;
    const what = during
      ? ` during '${during.name}', and again when it was sent a second time`
      : retried
        ? ` during '${retried.name}', sent a second time`
        : "";
    failures.push(`/healthz waited ${sample.ms} ms (${sample.queued} ms of it for a CPU)${what}`);
  }
  const grownMb = (peakKb - baselineKb) / 1024;
  if (grownMb >= MEMORY_MB) failures.push(`the server's memory grew by ${grownMb.toFixed(0)} MB`);

  // Still up, and still signing.
  const after = await send("/api/v1/einvoice/sign", JSON.stringify(freshInvoice(who)));
  assert.equal(after.status, 200, await after.text());
  assert.equal(server.exitCode, null, serverErr);
  assert.ok(samples.length > windows.length, "the probe ran throughout");
  t.diagnostic(
    `${windows.length} attacks (${again.length} sent again); /healthz max ${Math.max(...samples.map((s) => s.ms))} ms, ${Math.max(...samples.map((s) => s.ms - s.queued))} ms without waits for a CPU, over ${samples.length} probes; memory +${grownMb.toFixed(0)} MB`,
  );
  assert.deepEqual(failures, []);
});
