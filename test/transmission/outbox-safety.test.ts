import assert from "node:assert/strict";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type TestContext, test } from "node:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { freePort, spawnWorker } from "../cli/run.ts";
import { build, eventually, freshInvoice, type Json, tenant } from "../helpers.ts";
import { FAST } from "./pair.ts";

const API = "/api/v1/einvoice";

/** A real HTTP server on 127.0.0.1, closed when the test ends. */
async function serve(t: TestContext, handler: http.RequestListener) {
  const server = http.createServer(handler);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { port, url: `http://127.0.0.1:${port}` };
}

async function lookup(app: Awaited<ReturnType<typeof build>>["app"], irn: string, headers: Json) {
  const res = await app.inject({ url: `${API}/lookup/${irn}`, headers: headers as Record<string, string> });
  return res.json().data as { status: string; attempts: Json[] };
}

test("a delivery timeout not shorter than the lease is refused at start-up, naming both settings", () => {
  for (const timeout of ["1000", "1500"]) {
    assert.throws(
      () => loadConfig({ EINVOICE_DELIVERY_TIMEOUT_MS: timeout, EINVOICE_LEASE_MS: "1000" }),
      (err: unknown) =>
        err instanceof ConfigError &&
        /EINVOICE_DELIVERY_TIMEOUT_MS \(\d+\) must be shorter than EINVOICE_LEASE_MS \(1000\)/.test(
          err.message,
        ),
    );
  }
  const config = loadConfig({ EINVOICE_DELIVERY_TIMEOUT_MS: "999", EINVOICE_LEASE_MS: "1000" });
  assert.equal(config.outbox.deliveryTimeoutMs, 999);
  assert.equal(config.outbox.leaseMs, 1000);
});

test("a delivery slower than the lease is never made twice at once by two workers; each invoice registered once", {
  timeout: 120_000,
}, async (t) => {
  const authority = await build(t);
  const authorityPort = await freePort();
  await authority.app.listen({ port: authorityPort, host: "127.0.0.1" });
  const upstream = await tenant(authority.ctx);

  // In front of the authority: the first two sign-transmits of each IRN are held far longer than
  // the lease (until the caller gives up), the later ones pass. Per IRN it records how many
  // sign-transmits were open at once and how many the authority accepted.
  const HOLD_MS = 10_000;
  const open = new Map<string, number>();
  const most = new Map<string, number>();
  const seen = new Map<string, number>();
  const accepted = new Map<string, number>();
  const slow = await serve(t, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const signTransmit = req.method === "POST" && req.url?.endsWith("/sign-transmit");
      const irn = String(req.headers["idempotency-key"]);
      if (signTransmit) {
        seen.set(irn, (seen.get(irn) ?? 0) + 1);
        open.set(irn, (open.get(irn) ?? 0) + 1);
        most.set(irn, Math.max(most.get(irn) ?? 0, open.get(irn) ?? 0));
        // An attempt is over once its caller gives up: the end of its side of the connection is
        // seen before the response's close, which on a loaded machine can come after the next
        // attempt's request has been read.
        let over = false;
        const done = () => {
          if (over) return;
          over = true;
          open.set(irn, (open.get(irn) ?? 1) - 1);
        };
        req.socket.once("end", done);
        res.once("close", done);
      }
      const forward = () => {
        if (res.destroyed) return;
        const onward = http.request(
          { host: "127.0.0.1", port: authorityPort, path: req.url, method: req.method, headers: req.headers },
          (up) => {
            const parts: Buffer[] = [];
            up.on("data", (c: Buffer) => parts.push(c));
            up.on("end", () => {
              if (signTransmit && up.statusCode === 200 && up.headers["idempotent-replayed"] !== "true")
                accepted.set(irn, (accepted.get(irn) ?? 0) + 1);
              res.writeHead(up.statusCode ?? 502, up.headers).end(Buffer.concat(parts));
            });
          },
        );
        onward.on("error", () => res.destroy());
        onward.end(Buffer.concat(chunks));
      };
      if (signTransmit && (seen.get(irn) ?? 0) <= 2) setTimeout(() => res.destroy(), HOLD_MS);
      else forward();
    });
  });

  const gateway = await build(t, {
    ...FAST,
    EINVOICE_AUTHORITY: "http",
    EINVOICE_AUTHORITY_URL: slow.url,
    EINVOICE_AUTHORITY_API_KEY: upstream.api_key,
    EINVOICE_AUTHORITY_API_SECRET: upstream.api_secret,
    EINVOICE_TRANSMIT_WAIT_MS: "0",
    // Margins for a loaded machine: an attempt ends a second before its lease, and the next one
    // starts at least 150 ms after (the backoff), so the end of one is seen before the next arrives.
    EINVOICE_LEASE_MS: "3000",
    EINVOICE_DELIVERY_TIMEOUT_MS: "2000",
    EINVOICE_RETRY_BASE_MS: "300",
  });
  const local = await tenant(gateway.ctx, { id: upstream.business_id, serviceId: upstream.service_id });
  const irns: string[] = [];
  for (let i = 0; i < 4; i++) {
    const payload = freshInvoice(local, "invoice-minimal");
    irns.push(String(payload.irn));
    const res = await gateway.app.inject({
      method: "POST",
      url: `${API}/sign-transmit`,
      headers: local.headers,
      payload,
    });
    assert.equal(res.statusCode, 503, "queued: no wait");
  }
  // Two workers compete for the same jobs.
  gateway.startWorker(4);
  gateway.startWorker(4);
  await eventually(
    async () => {
      for (const irn of irns)
        if ((await lookup(gateway.app, irn, local.headers)).status !== "TRANSMITTED") return false;
      return true;
    },
    60_000,
    "every invoice TRANSMITTED",
  );
  for (const irn of irns) {
    assert.ok(
      (seen.get(irn) ?? 0) >= 3,
      `${irn}: held twice, then through (${seen.get(irn)} sign-transmits)`,
    );
    assert.equal(most.get(irn), 1, `${irn}: never two deliveries in flight at once`);
    assert.equal(accepted.get(irn), 1, `${irn}: accepted by the authority once`);
    const attempts = (await lookup(gateway.app, irn, local.headers)).attempts;
    assert.deepEqual(
      attempts.map((a) => a.outcome),
      [...Array((seen.get(irn) ?? 0) - 1).fill("error"), "delivered"],
    );
    // Each held attempt was given up before its lease ended, not at the 10 s hold.
    for (const a of attempts.slice(0, -1)) {
      assert.match(String(a.error), /no answer within \d+ ms/);
      assert.ok(Number(a.duration_ms) < 3000, `given up within the lease: ${a.duration_ms} ms`);
    }
  }
});

test("a late finisher cannot overwrite: once the lease passed to another worker, its outcome is lost", async (t) => {
  const gateway = await build(t, {
    EINVOICE_LEASE_MS: "300",
    EINVOICE_DELIVERY_TIMEOUT_MS: "200",
    EINVOICE_TRANSMIT_WAIT_MS: "0",
  });
  const a = await tenant(gateway.ctx);
  const payload = freshInvoice(a, "invoice-minimal");
  assert.equal(
    (await gateway.app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload }))
      .statusCode,
    200,
  );
  const irn = String(payload.irn);
  // Queued, not tried: the transmit waits for nothing.
  assert.equal(
    (await gateway.app.inject({ url: `${API}/transmit/${irn}`, headers: a.headers })).statusCode,
    503,
  );
  const [first] = await gateway.ctx.transmission.claimDue("worker:first", 1);
  assert.ok(first);
  assert.equal(first.attempts, 1, "the claim counts the attempt");
  await new Promise((resolve) => setTimeout(resolve, 400));
  const [second] = await gateway.ctx.transmission.claimDue("worker:second", 1);
  assert.equal(second?.id, first.id, "the expired lease was taken over");
  assert.equal(second?.attempts, 2);

  assert.equal(await gateway.ctx.transmission.process(first, "worker:first"), "lost");
  const job = await gateway.ctx.db
    .selectFrom("outbox_jobs")
    .selectAll()
    .where("id", "=", first.id)
    .executeTakeFirstOrThrow();
  assert.equal(job.state, "pending", "the first worker's outcome was not written");
  assert.equal(job.lease_owner, "worker:second");
  assert.equal((await lookup(gateway.app, irn, a.headers)).status, "TRANSMITTING");

  assert.equal(await gateway.ctx.transmission.process(second as typeof first, "worker:second"), "delivered");
  assert.equal((await lookup(gateway.app, irn, a.headers)).status, "TRANSMITTED");
});

test("a delivery that kills its worker every time stops after the retry budget: TRANSMISSION_FAILED", {
  timeout: 120_000,
}, async (t) => {
  // An upstream that never answers: each worker is killed while its request hangs there.
  const requests: number[] = [];
  const hanging = await serve(t, (req) => {
    if (req.method === "POST") requests.push(Date.now());
  });
  const settings = {
    ...FAST,
    EINVOICE_AUTHORITY: "http",
    EINVOICE_AUTHORITY_URL: hanging.url,
    EINVOICE_AUTHORITY_API_KEY: "upstream-key",
    EINVOICE_AUTHORITY_API_SECRET: "upstream-secret",
    EINVOICE_TRANSMIT_WAIT_MS: "0",
    EINVOICE_MAX_ATTEMPTS: "3",
    EINVOICE_LEASE_MS: "1500",
    EINVOICE_DELIVERY_TIMEOUT_MS: "1000",
    EINVOICE_WORKER_POLL_MS: "50",
    EINVOICE_LOG_LEVEL: "warn",
  };
  const gateway = await build(t, settings);
  const a = await tenant(gateway.ctx);
  const payload = freshInvoice(a, "invoice-minimal");
  const irn = String(payload.irn);
  assert.equal(
    (await gateway.app.inject({ method: "POST", url: `${API}/sign-transmit`, headers: a.headers, payload }))
      .statusCode,
    503,
  );
  const env = { ...settings, EINVOICE_DATABASE_URL: gateway.databaseUrl, EINVOICE_DATA_DIR: gateway.dir };
  for (let attempt = 1; attempt <= 3; attempt++) {
    const worker = spawnWorker(t, env);
    await eventually(async () => requests.length === attempt, 30_000, `attempt ${attempt} under way`);
    worker.kill("SIGKILL");
    await once(worker, "exit");
  }
  const job = async () =>
    gateway.ctx.db.selectFrom("outbox_jobs").selectAll().where("irn", "=", irn).executeTakeFirstOrThrow();
  assert.equal((await job()).state, "pending", "no attempt was recorded by the killed workers");
  assert.equal((await job()).attempts, 3, "yet each claim counted one");

  // A worker that lives finds the budget spent once the last lease expires, and stops there.
  const last = spawnWorker(t, env);
  await eventually(async () => (await job()).state !== "pending", 30_000, "the job settled");
  last.kill("SIGTERM");
  await once(last, "exit");
  const settled = await job();
  assert.equal(settled.state, "failed");
  assert.equal(settled.attempts, 3);
  assert.match(String(settled.last_error), /did not complete: attempt 3 of 3 was cut off/);
  assert.equal(requests.length, 3, "not tried a fourth time");
  const record = await lookup(gateway.app, irn, a.headers);
  assert.equal(record.status, "TRANSMISSION_FAILED");
  assert.deepEqual(
    record.attempts.map((x) => [x.attempt, x.outcome]),
    [[3, "incomplete"]],
  );
  const failed = (await gateway.app.inject({ url: `${API}/${irn}`, headers: a.headers })).json().data
    .history as { type: string; detail?: Json }[];
  assert.ok(
    failed.some((e) => e.type === "transmission_failed"),
    JSON.stringify(failed),
  );
});

test("redirects are not followed: a 3xx from the upstream or a webhook receiver is a failed attempt, the target sees nothing", {
  timeout: 60_000,
}, async (t) => {
  const reached: string[] = [];
  const target = await serve(t, (req, res) => {
    reached.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)}`);
    res.writeHead(200, { "content-type": "application/json" }).end('{"status":true,"code":200}');
  });
  const redirector = await serve(t, (req, res) => {
    req.resume();
    res.writeHead(req.url?.startsWith("/hooks") ? 307 : 302, { location: `${target.url}/stolen${req.url}` });
    res.end();
  });
  const gateway = await build(t, {
    ...FAST,
    EINVOICE_AUTHORITY: "http",
    EINVOICE_AUTHORITY_URL: redirector.url,
    EINVOICE_AUTHORITY_API_KEY: "upstream-key",
    EINVOICE_AUTHORITY_API_SECRET: "upstream-secret",
    EINVOICE_TRANSMIT_WAIT_MS: "3000",
    EINVOICE_MAX_ATTEMPTS: "2",
  });
  const a = await tenant(gateway.ctx);
  await gateway.ctx.webhooks.set(a.business_id, `${redirector.url}/hooks`);
  const payload = freshInvoice(a, "invoice-minimal");
  const irn = String(payload.irn);
  const res = await gateway.app.inject({
    method: "POST",
    url: `${API}/sign-transmit`,
    headers: a.headers,
    payload,
  });
  assert.equal(res.statusCode, 503, res.body);
  const first = (await lookup(gateway.app, irn, a.headers)).attempts[0];
  assert.equal(first?.outcome, "error");
  assert.equal(
    first?.error,
    `upstream answered a redirect: 302 to "${target.url}/stolen/api/v1/einvoice/sign-transmit"`,
  );

  gateway.startWorker();
  await eventually(
    async () => (await lookup(gateway.app, irn, a.headers)).status === "TRANSMISSION_FAILED",
    20_000,
    "out of attempts",
  );
  const hooks = async () =>
    gateway.ctx.db.selectFrom("outbox_jobs").selectAll().where("kind", "=", "webhook").execute();
  await eventually(
    async () => (await hooks()).length > 0 && (await hooks()).every((j) => j.state === "failed"),
    20_000,
    "every webhook event failed",
  );
  for (const hook of await hooks()) {
    assert.equal(hook.attempts, 2);
    assert.match(
      String(hook.last_error),
      new RegExp(`^receiver answered a redirect: 307 to "${target.url}/stolen/hooks"$`),
    );
  }
  assert.deepEqual(reached, [], "the redirect target received nothing: no credential, no signed event");
});

test("/metrics reads the outbox counts from a snapshot: 100 scrapes count once; fresh again after the refresh interval", {
  timeout: 120_000,
}, async (t) => {
  const REFRESH_MS = 5000;
  const { app, ctx } = await build(t, { EINVOICE_METRICS_REFRESH_MS: String(REFRESH_MS) });
  const a = await tenant(ctx);
  // A large outbox of settled jobs, as it grows without ever being pruned.
  const at = new Date().toISOString();
  const settledJob = {
    kind: "webhook" as const,
    irn: null,
    business_id: a.business_id,
    payload: null,
    state: "done" as const,
    next_attempt_at: at,
    created_at: at,
    updated_at: at,
  };
  const ROWS = 50_000;
  for (let done = 0; done < ROWS; done += 1000) {
    await ctx.db.insertInto("outbox_jobs").values(Array(1000).fill(settledJob)).execute();
  }
  // The scrapes read the real service through this counter of calls.
  let counts = 0;
  ctx.metrics.observe({
    stats: () => {
      counts += 1;
      return ctx.transmission.stats();
    },
  });
  const scrape = async () => {
    const res = await app.inject({ url: "/metrics" });
    assert.equal(res.statusCode, 200);
    return res.body;
  };
  const coldStarted = performance.now();
  const first = await scrape();
  const cold = performance.now() - coldStarted;
  assert.match(first, new RegExp(`einvoice_outbox_jobs\\{kind="webhook",state="done"\\} ${ROWS}\\n`));
  assert.equal(counts, 1);

  // More jobs arrive; the scrapes within the interval all read the same snapshot.
  await ctx.db.insertInto("outbox_jobs").values(Array(10).fill(settledJob)).execute();
  const started = performance.now();
  const bodies = await Promise.all(Array.from({ length: 50 }, scrape));
  for (let i = 0; i < 50; i++) bodies.push(await scrape());
  const warm = performance.now() - started;
  t.diagnostic(
    `one counting scrape of ${ROWS} jobs: ${cold.toFixed(1)} ms; 100 snapshot scrapes: ${warm.toFixed(1)} ms`,
  );
  assert.ok(warm < REFRESH_MS, "the scrapes ran within one interval");
  assert.equal(counts, 1, "100 scrapes, no count");
  for (const body of bodies) {
    assert.match(body, new RegExp(`einvoice_outbox_jobs\\{kind="webhook",state="done"\\} ${ROWS}\\n`));
    assert.match(body, /einvoice_outbox_snapshot_age_seconds \d/);
  }

  await new Promise((resolve) => setTimeout(resolve, REFRESH_MS + 100));
  const fresh = await scrape();
  assert.equal(counts, 2, "counted again once the snapshot was older than the interval");
  assert.match(fresh, new RegExp(`einvoice_outbox_jobs\\{kind="webhook",state="done"\\} ${ROWS + 10}\\n`));
});
