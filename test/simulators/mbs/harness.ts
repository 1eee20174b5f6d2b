import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import path from "node:path";
import type { TestContext } from "node:test";
import { TRY_LATER, VALIDATION_FAILED } from "../../../src/simulators/mbs/envelopes.ts";
import {
  type MbsSimulator,
  type MbsSimulatorOptions,
  type MbsTaxpayer,
  startMbsSimulator,
} from "../../../src/simulators/mbs/server.ts";
import { cleanEnv } from "../../cli/run.ts";
import { type Json, REPO_ROOT, SHARED_DIR } from "../../helpers.ts";

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A simulator of the test's own, closed when the test ends. */
export async function simulator(t: TestContext, options: MbsSimulatorOptions = {}): Promise<MbsSimulator> {
  const sim = await startMbsSimulator(options);
  t.after(() => sim.close());
  return sim;
}

/**
 * `simulate mbs --port 0 …` in a process of its own, once it has printed its line. `stop()` sends
 * SIGTERM and resolves when the process has exited and its output streams are closed.
 */
export async function runningSimulator(t: TestContext, args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ["bin/einvoice.js", "simulate", "mbs", "--port", "0", ...args], {
    cwd: REPO_ROOT,
    env: cleanEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const closed = once(child, "close");
  const out = { stdout: "", stderr: "" };
  child.stderr.on("data", (chunk: Buffer) => {
    out.stderr += chunk.toString("utf8");
  });
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      out.stdout += chunk.toString("utf8");
      if (out.stdout.includes("\n")) resolve(out.stdout.slice(0, out.stdout.indexOf("\n")));
    });
    child.on("exit", (code) => reject(new Error(`exited ${code} before printing: ${out.stderr}`)));
  });
  const stop = async () => {
    child.kill("SIGTERM");
    return (await closed) as [number | null, NodeJS.Signals | null];
  };
  return { line, printed: JSON.parse(line) as Json, out, stop };
}

export type Reply = { status: number; body: Json };

export type CallOptions = {
  body?: unknown;
  /** Sent as is, for malformed bodies. */
  raw?: string;
  headers?: Record<string, string>;
  /** false: no credentials at all. */
  auth?: boolean;
};

/** One real HTTP call with the simulator's credentials; the answer must be JSON. */
export async function call(
  sim: Pick<MbsSimulator, "url" | "api_key" | "api_secret">,
  method: string,
  url: string,
  options: CallOptions = {},
) {
  const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const res = await fetch(`${sim.url}${url}`, {
    method,
    headers: {
      ...(options.auth === false ? {} : { "x-api-key": sim.api_key, "x-api-secret": sim.api_secret }),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...options.headers,
    },
    ...(body === undefined ? {} : { body }),
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Json } satisfies Reply;
}

/** A success envelope `{code, data}` (no `message`, as MBS's successes) with this code; its data. */
export function data(reply: Reply, code = 200): Json {
  assert.equal(reply.status, code, JSON.stringify(reply.body));
  assert.deepEqual(Object.keys(reply.body).sort(), ["code", "data"], JSON.stringify(reply.body));
  assert.equal(reply.body.code, code);
  return reply.body.data as Json;
}

/** An error envelope with this status and public message; its `error` object. */
export function failure(reply: Reply, status: number, publicMessage: string | RegExp): Json {
  assert.equal(reply.status, status, JSON.stringify(reply.body));
  assert.equal(reply.body.code, status);
  assert.equal(reply.body.data, null);
  assert.equal(reply.body.message, "error has occurred");
  const error = reply.body.error as Json;
  assert.match(String(error.id), UUID);
  assert.equal(typeof error.handler, "string");
  if (typeof publicMessage === "string") assert.equal(error.public_message, publicMessage);
  else assert.match(String(error.public_message), publicMessage);
  return error;
}

/** A validation failure whose details contain (or equal, for a string) what is expected. */
export function refused(reply: Reply, details: string | RegExp, handler = "invoice_actions"): Json {
  const error = failure(reply, 400, VALIDATION_FAILED);
  if (typeof details === "string") assert.equal(error.details, details);
  else assert.match(String(error.details), details);
  assert.equal(error.handler, handler);
  return error;
}

/** The answer to a repeated sign (and the `duplicate`/`try_later` faults): indistinguishable by design. */
export function tryLater(reply: Reply): Json {
  return refused(reply, TRY_LATER);
}

/** The shared full invoice as one taxpayer's, under the invoice number given. */
export function invoiceFor(
  taxpayer: Pick<MbsTaxpayer, "business_id" | "service_id">,
  number = "INV0001",
  fixture = "invoice-full",
): Json {
  const doc = JSON.parse(
    fs
      .readFileSync(path.join(SHARED_DIR, "fixtures", `${fixture}.json`), "utf8")
      .replaceAll("{{BUSINESS_ID}}", taxpayer.business_id)
      .replaceAll("{{SERVICE_ID}}", taxpayer.service_id),
  ) as Json;
  doc.irn = `${number}-${taxpayer.service_id}-${String(doc.issue_date).replaceAll("-", "")}`;
  return doc;
}

export function first(sim: MbsSimulator): MbsTaxpayer {
  const taxpayer = sim.taxpayers[0];
  assert.ok(taxpayer);
  return taxpayer;
}

/** Signs an invoice and checks it was registered (200, as MBS's sign succeeds). */
export async function signed(sim: MbsSimulator, doc: Json): Promise<string> {
  const reply = await call(sim, "POST", "/api/v1/invoice/sign", { body: doc });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return String(doc.irn);
}
