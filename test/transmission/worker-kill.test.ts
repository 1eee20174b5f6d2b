import assert from "node:assert/strict";
import { once } from "node:events";
import { test } from "node:test";
import { freePort, spawnWorker } from "../cli/run.ts";
import { build, eventually, freshInvoice, tenant } from "../helpers.ts";
import { proxy, slow } from "./proxy.ts";

const API = "/api/v1/einvoice";

test("a worker killed mid-delivery loses its leases; another worker finishes every job, nothing twice", {
  timeout: 180_000,
}, async (t) => {
  const authority = await build(t);
  const authorityPort = await freePort();
  await authority.app.listen({ port: authorityPort, host: "127.0.0.1" });
  const proxyPort = await freePort();
  const proxied = await proxy(t, proxyPort, authorityPort, slow(150));
  const upstream = await tenant(authority.ctx);
  const settings = {
    EINVOICE_AUTHORITY: "http",
    EINVOICE_AUTHORITY_URL: `http://127.0.0.1:${proxyPort}`,
    EINVOICE_AUTHORITY_API_KEY: upstream.api_key,
    EINVOICE_AUTHORITY_API_SECRET: upstream.api_secret,
    EINVOICE_TRANSMIT_WAIT_MS: "0",
    EINVOICE_LEASE_MS: "1500",
    EINVOICE_DELIVERY_TIMEOUT_MS: "1000",
    EINVOICE_RETRY_BASE_MS: "20",
    EINVOICE_RETRY_MAX_MS: "200",
    EINVOICE_MAX_ATTEMPTS: "1000",
    EINVOICE_WORKER_POLL_MS: "20",
    EINVOICE_WORKER_CONCURRENCY: "8",
    EINVOICE_LOG_LEVEL: "warn",
  };
  const gateway = await build(t, settings);
  const local = await tenant(gateway.ctx, { id: upstream.business_id, serviceId: upstream.service_id });

  const total = 150;
  const invoices = Array.from({ length: total }, () => freshInvoice(local, "invoice-minimal"));
  for (const payload of invoices) {
    assert.equal(
      (await gateway.app.inject({ method: "POST", url: `${API}/sign`, headers: local.headers, payload }))
        .statusCode,
      200,
    );
    // No wait: the job is queued and the answer is 503 at once.
    const queued = await gateway.app.inject({
      url: `${API}/transmit/${String(payload.irn)}`,
      headers: local.headers,
    });
    assert.equal(queued.statusCode, 503);
  }
  const transmitted = async () =>
    Number(
      (
        await gateway.ctx.db
          .selectFrom("invoices")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("status", "=", "TRANSMITTED")
          .executeTakeFirstOrThrow()
      ).n,
    );
  const held = async () =>
    Number(
      (
        await gateway.ctx.db
          .selectFrom("outbox_jobs")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("lease_owner", "is not", null)
          .executeTakeFirstOrThrow()
      ).n,
    );

  // The gateway's own database (a file, or its PostgreSQL schema) and keys.
  const env = { ...settings, EINVOICE_DATABASE_URL: gateway.databaseUrl, EINVOICE_DATA_DIR: gateway.dir };
  const first = spawnWorker(t, env);
  await eventually(async () => (await transmitted()) >= 30, 60_000, "the first worker's progress");
  first.kill("SIGKILL");
  await once(first, "exit");
  const orphaned = await held();
  assert.ok(orphaned > 0, "the killed worker died holding leases on jobs in flight");
  const before = await transmitted();
  assert.ok(before < total, "it died before finishing");

  const second = spawnWorker(t, env);
  await eventually(async () => (await transmitted()) === total, 90_000, "every invoice TRANSMITTED");
  second.kill("SIGTERM");
  const [code] = (await once(second, "exit")) as [number | null];
  assert.equal(code, 0, "a worker stops cleanly on SIGTERM");

  const jobs = await gateway.ctx.transmission.stats();
  assert.deepEqual(
    jobs.filter((j) => j.kind === "delivery").map((j) => [j.state, j.count]),
    [["done", total]],
  );
  assert.equal(await held(), 0, "no lease is left behind");
  const atAuthority = await authority.ctx.db
    .selectFrom("invoices")
    .select(["irn", "status"])
    .where("business_id", "=", upstream.business_id)
    .execute();
  assert.equal(atAuthority.length, total);
  assert.deepEqual(new Set(atAuthority.map((r) => r.status)), new Set(["TRANSMITTED"]));
  assert.deepEqual(
    [...proxied.accepted.values()].filter((n) => n > 1),
    [],
    "no invoice was accepted twice",
  );
});
