import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";
import { cleanEnv, dbEnv, freePort, openContext } from "../cli/run.ts";
import { build, eventually, freshInvoice, REPO_ROOT, tenant } from "../helpers.ts";
import { proxy, slow } from "./proxy.ts";

const API = "/api/v1/einvoice";

test("SIGTERM drains in-flight requests: the slow transmit still answers 200, then the process exits 0", {
  timeout: 120_000,
}, async (t) => {
  const authority = await build(t);
  const authorityPort = await freePort();
  await authority.app.listen({ port: authorityPort, host: "127.0.0.1" });
  const proxyPort = await freePort();
  await proxy(t, proxyPort, authorityPort, slow(1500));
  const upstream = await tenant(authority.ctx);

  const db = await dbEnv(t);
  const env = {
    ...db.env,
    EINVOICE_AUTHORITY: "http",
    EINVOICE_AUTHORITY_URL: `http://127.0.0.1:${proxyPort}`,
    EINVOICE_AUTHORITY_API_KEY: upstream.api_key,
    EINVOICE_AUTHORITY_API_SECRET: upstream.api_secret,
    EINVOICE_TRANSMIT_WAIT_MS: "10000",
    EINVOICE_LOG_LEVEL: "warn",
  };
  const setup = await openContext(t, db);
  const local = await tenant(setup, { id: upstream.business_id, serviceId: upstream.service_id });

  const port = await freePort();
  const child = spawn(process.execPath, ["bin/einvoice.js", "serve"], {
    cwd: REPO_ROOT,
    env: cleanEnv({ ...env, PORT: String(port), HOST: "127.0.0.1" }),
    stdio: ["ignore", "ignore", "pipe"],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const base = `http://127.0.0.1:${port}`;
  await eventually(
    async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.status === 200,
    30_000,
    "the server",
  );

  const invoice = freshInvoice(local, "invoice-minimal");
  const signed = await fetch(`${base}${API}/sign`, {
    method: "POST",
    headers: { ...local.headers, "content-type": "application/json" },
    body: JSON.stringify(invoice),
  });
  assert.equal(signed.status, 200);
  const started = Date.now();
  const inFlight = fetch(`${base}${API}/transmit/${String(invoice.irn)}`, { headers: local.headers });
  await new Promise((resolve) => setTimeout(resolve, 300));
  child.kill("SIGTERM");
  const exited = once(child, "exit");

  const res = await inFlight;
  assert.equal(res.status, 200, await res.clone().text());
  assert.ok(Date.now() - started >= 1400, "the answer waited for the slow authority");
  assert.equal(res.headers.get("connection"), "close", "the last answers close their connections");
  const answered = Date.now();
  const [code] = (await exited) as [number | null];
  assert.equal(code, 0, "clean exit after draining");
  // Kept-alive connections must not hold the process until their timeout.
  assert.ok(Date.now() - answered < 15_000, `exited ${Date.now() - answered} ms after the last answer`);
  await assert.rejects(fetch(`${base}/healthz`), "no longer listening");
  const there = (
    await authority.app.inject({ url: `${API}/lookup/${String(invoice.irn)}`, headers: upstream.headers })
  ).json().data;
  assert.equal(there.status, "TRANSMITTED");
});
