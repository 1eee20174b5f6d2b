import assert from "node:assert/strict";
import { once } from "node:events";
import { test } from "node:test";
import { spawnWorker } from "../cli/run.ts";
import { build, eventually, fixture } from "../helpers.ts";
import { API, invoiceFor, mbsEnv, mirror, simulator } from "./mbs.ts";

test("MBS: a worker killed mid-delivery; another finishes every invoice, each registered at MBS once", {
  timeout: 180_000,
}, async (t) => {
  // Half the answers slow: the worker dies with calls in flight, some registered and not yet recorded.
  const sim = await simulator(t, { seed: 9, faults: "slow=0.5,slow_ms=300" });
  const settings = mbsEnv(sim, {
    EINVOICE_TRANSMIT_WAIT_MS: "0",
    EINVOICE_LEASE_MS: "3000",
    EINVOICE_DELIVERY_TIMEOUT_MS: "2500",
    EINVOICE_MBS_CALL_TIMEOUT_MS: "1000",
    EINVOICE_WORKER_POLL_MS: "20",
    EINVOICE_WORKER_CONCURRENCY: "8",
    EINVOICE_LOG_LEVEL: "warn",
  });
  const service = await build(t, settings);
  const taxpayer = sim.taxpayers[0];
  assert.ok(taxpayer);
  const who = await mirror(service.ctx, taxpayer);
  const total = 120;
  const base = fixture("invoice-minimal", who);
  const invoices = Array.from({ length: total }, () => invoiceFor(base, who));
  for (const payload of invoices) {
    const res = await service.app.inject({
      method: "POST",
      url: `${API}/sign-transmit`,
      headers: who.headers,
      payload,
    });
    assert.equal(res.statusCode, 503, "queued: no worker in this process");
  }
  const count = async (status: "TRANSMITTED") =>
    Number(
      (
        await service.ctx.db
          .selectFrom("invoices")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("status", "=", status)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const env = { ...settings, EINVOICE_DATABASE_URL: service.databaseUrl, EINVOICE_DATA_DIR: service.dir };
  const first = spawnWorker(t, env);
  await eventually(async () => (await count("TRANSMITTED")) >= 20, 60_000, "the first worker's progress");
  first.kill("SIGKILL");
  await once(first, "exit");
  assert.ok((await count("TRANSMITTED")) < total, "it died before finishing");

  const second = spawnWorker(t, env);
  await eventually(async () => (await count("TRANSMITTED")) === total, 120_000, "every invoice TRANSMITTED");
  second.kill("SIGTERM");
  const [code] = (await once(second, "exit")) as [number | null];
  assert.equal(code, 0);

  const registrations = sim.registrations();
  for (const payload of invoices)
    assert.equal(registrations.get(String(payload.irn)), 1, String(payload.irn));
  // No sign was sent again for an IRN already registered: a repeat asked confirm first.
  assert.deepEqual([...sim.refusedSigns()], []);
  const jobs = await service.ctx.transmission.stats();
  assert.deepEqual(
    jobs.filter((j) => j.kind === "delivery").map((j) => [j.state, j.count]),
    [["done", total]],
  );
});
