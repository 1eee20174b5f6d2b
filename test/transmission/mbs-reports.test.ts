import assert from "node:assert/strict";
import { test } from "node:test";
import { ENGINE, eventually, fixture, type Json } from "../helpers.ts";
import { API, invoiceFor, serviceFor, simulator } from "./mbs.ts";

test(`20 concurrent VAT reports for one invoice on ${ENGINE}: 20 distinct numbers, each registered at MBS once`, {
  timeout: 90_000,
}, async (t) => {
  const sim = await simulator(t, { seed: 23 });
  // The reports reach MBS one after another: each waits, backing off, until the one before it is
  // done. At the suite's fast 20 ms backoff, 19 waiting reports are always due again, and on SQLite
  // (whose commits wait for the disk in the event loop) the worker would spend its time deferring
  // them; the default backoff (about a second) is what a deployment runs with.
  const service = await serviceFor(t, sim, {
    EINVOICE_TRANSMIT_WAIT_MS: "5000",
    EINVOICE_RETRY_BASE_MS: "1000",
    EINVOICE_RETRY_MAX_MS: "1000",
  });
  service.startWorker(4);
  const [who] = service.tenants;
  assert.ok(who);
  const base = fixture("invoice-full", who);
  const payload = invoiceFor(base, who);
  const irn = String(payload.irn);
  const signed = await service.app.inject({
    method: "POST",
    url: `${API}/sign-transmit`,
    headers: who.headers,
    payload,
  });
  assert.equal(signed.statusCode, 200, signed.body);

  // The reports differ (one delivery each): MBS's integrators' form carries no id of the report,
  // so the simulator takes identical bodies for one report sent again.
  const count = 20;
  const report = fixture("report-fiscalization", who);
  report.irn = irn;
  report.agent_tin = String((base.accounting_supplier_party as Json).tin);
  const answers = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      service.app.inject({
        method: "POST",
        url: `${API}/report-fiscalization`,
        headers: who.headers,
        payload: { ...report, item_description: `${String(report.item_description)}, delivery ${i + 1}` },
      }),
    ),
  );
  for (const answer of answers) assert.equal(answer.statusCode, 200, answer.body);

  // Numbered 1 to 20 under the invoice's lock: the authority's vendor transaction ids all differ.
  const numbers = await service.ctx.db
    .selectFrom("fiscalization_reports")
    .select("number")
    .where("irn", "=", irn)
    .orderBy("number")
    .execute();
  assert.deepEqual(
    numbers.map((r) => Number(r.number)),
    Array.from({ length: count }, (_, i) => i + 1),
  );
  const forwards = await service.ctx.db
    .selectFrom("outbox_jobs")
    .select("payload")
    .where("kind", "=", "forward")
    .where("irn", "=", irn)
    .execute();
  const ids = forwards.map(
    (job) =>
      (JSON.parse(String(job.payload)) as { report: { vendor_transaction_id: string } }).report
        .vendor_transaction_id,
  );
  assert.deepEqual(
    new Set(ids),
    new Set([irn, ...Array.from({ length: count - 1 }, (_, i) => `${irn}-${i + 2}`)]),
  );

  await eventually(
    async () => sim.vatReports().filter((r) => (r as Json).irn === irn).length === count,
    60_000,
    "20 VAT reports registered at MBS",
  );
  await eventually(
    async () => {
      const jobs = await service.ctx.transmission.stats();
      return (
        JSON.stringify(jobs.filter((j) => j.kind === "forward").map((j) => [j.state, j.count])) ===
        `[["done",${count}]]`
      );
    },
    30_000,
    "the 20 forwarded reports done",
  );
  const registered = sim.vatReports().filter((r) => (r as Json).irn === irn) as Json[];
  assert.equal(new Set(registered.map((r) => r.item_description)).size, count);
  const history = (
    (await service.app.inject({ url: `${API}/${irn}`, headers: who.headers })).json().data.history as Array<{
      type: string;
    }>
  ).map((e) => e.type);
  assert.equal(history.filter((type) => type === "fiscalization_reported").length, count);
  assert.equal(history.filter((type) => type === "authority_vat_report").length, count);
});
