import assert from "node:assert/strict";
import { test } from "node:test";
import { ENGINE, fixture, ISO_TIMESTAMP, type Json, type Tenant } from "../helpers.ts";
import { API, invoiceFor, serviceFor, simulator } from "../transmission/mbs.ts";

// What one invoice and one business may have forwarded to the authority. The service delivers to
// the MBS simulator, but no worker runs: every forwarded message stays queued, where it is counted.

type Service = Awaited<ReturnType<typeof serviceFor>>;

/** A business's calls on a service delivering to MBS: sign, update, report, and what is queued. */
function calls(service: Service, who: Tenant) {
  const { app, ctx } = service;
  return {
    async sign(): Promise<string> {
      const payload = invoiceFor(fixture("invoice-minimal", who), who, "BOUND");
      const res = await app.inject({ method: "POST", url: `${API}/sign`, headers: who.headers, payload });
      assert.equal(res.statusCode, 200, res.body);
      return String(payload.irn);
    },
    update: (irn: string, payload: Json) =>
      app.inject({ method: "PATCH", url: `${API}/update/${irn}`, headers: who.headers, payload }),
    report: (irn: string, description = "Portland cement") =>
      app.inject({
        method: "POST",
        url: `${API}/report-fiscalization`,
        headers: who.headers,
        payload: {
          ...fixture("report-fiscalization", who),
          irn,
          base_amount: "13000.00",
          vat_calculated: "975.00",
          total_amount: "13975.00",
          item_description: description,
        },
      }),
    /** The forwards queued for an invoice: their kinds, in order. */
    async queued(irn: string): Promise<string[]> {
      const jobs = await ctx.db
        .selectFrom("outbox_jobs")
        .select("payload")
        .where("kind", "=", "forward")
        .where("state", "=", "pending")
        .where("irn", "=", irn)
        .orderBy("id")
        .execute();
      return jobs.map((job) => (JSON.parse(String(job.payload)) as { kind: string }).kind);
    },
    async lookup(irn: string) {
      const res = await app.inject({ url: `${API}/lookup/${irn}`, headers: who.headers });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data as Json;
    },
    async history(irn: string): Promise<string[]> {
      const res = await app.inject({ url: `${API}/${irn}`, headers: who.headers });
      assert.equal(res.statusCode, 200, res.body);
      return (res.json().data.history as { type: string }[]).map((e) => e.type);
    },
  };
}

/** The spec's error envelope, with its status and message: answers `error`. */
function refused(res: { statusCode: number; body: string }, status: number, message: string) {
  assert.equal(res.statusCode, status, res.body);
  const body = JSON.parse(res.body);
  assert.equal(body.status, false);
  assert.equal(body.code, status);
  assert.equal(body.message, message);
  assert.equal(body.data, null);
  assert.match(body.timestamp, ISO_TIMESTAMP);
  return body.error as { details: string; public_message: string; violations?: Json[] };
}

const reportCount = async (service: Service, irn: string) =>
  (await service.ctx.db.selectFrom("fiscalization_reports").select("id").where("irn", "=", irn).execute())
    .length;

test(`VAT reports per invoice on ${ENGINE}: past EINVOICE_MAX_VAT_REPORTS_PER_INVOICE a report is a 400, not stored nor queued`, {
  timeout: 60_000,
}, async (t) => {
  const sim = await simulator(t);
  const service = await serviceFor(t, sim, { EINVOICE_MAX_VAT_REPORTS_PER_INVOICE: "3" });
  const [who] = service.tenants;
  assert.ok(who);
  const api = calls(service, who);
  const irn = await api.sign();
  for (const n of [1, 2, 3]) assert.equal((await api.report(irn, `delivery ${n}`)).statusCode, 200);

  const error = refused(await api.report(irn, "delivery 4"), 400, "Failed to submit report");
  assert.equal(
    error.details,
    `IRN '${irn}' has 3 VAT reports, the most one invoice may have: this report is not stored nor sent to the tax authority`,
  );
  assert.deepEqual(error.violations, [
    {
      path: "irn",
      rule: "reports_per_invoice",
      message: "at most 3 VAT reports per invoice",
      expected: "at most 3 reports",
      actual: 4,
    },
  ]);
  assert.equal(await reportCount(service, irn), 3);
  assert.deepEqual(await api.queued(irn), ["vat_report", "vat_report", "vat_report"]);
  assert.equal((await api.history(irn)).filter((type) => type === "fiscalization_reported").length, 3);

  // Another invoice has its own count.
  const other = await api.sign();
  assert.equal((await api.report(other)).statusCode, 200);

  // Ten at once on a fresh invoice: exactly three are taken, numbered 1 to 3.
  const raced = await api.sign();
  const answers = await Promise.all(
    Array.from({ length: 10 }, (_, i) => api.report(raced, `delivery ${i + 1}`)),
  );
  assert.deepEqual(answers.map((r) => r.statusCode).sort(), [...Array(3).fill(200), ...Array(7).fill(400)]);
  const numbers = await service.ctx.db
    .selectFrom("fiscalization_reports")
    .select("number")
    .where("irn", "=", raced)
    .orderBy("number")
    .execute();
  assert.deepEqual(
    numbers.map((r) => Number(r.number)),
    [1, 2, 3],
  );
  assert.equal((await api.queued(raced)).length, 3);
});

test(`PARTIAL payments per invoice on ${ENGINE}: past EINVOICE_MAX_PARTIAL_PAYMENTS_PER_INVOICE a PARTIAL is a 400; a retry and PAID still go through`, {
  timeout: 60_000,
}, async (t) => {
  const sim = await simulator(t);
  const service = await serviceFor(t, sim, { EINVOICE_MAX_PARTIAL_PAYMENTS_PER_INVOICE: "3" });
  const [who] = service.tenants;
  assert.ok(who);
  const api = calls(service, who);
  const irn = await api.sign();
  for (const n of [1, 2, 3]) {
    const res = await api.update(irn, { payment_status: "PARTIAL", amount: 0.01, reference: `K${n}` });
    assert.equal(res.statusCode, 200, res.body);
  }

  const error = refused(
    await api.update(irn, { payment_status: "PARTIAL", amount: 0.01, reference: "K4" }),
    400,
    "Failed to update invoice",
  );
  assert.equal(
    error.details,
    "the invoice has 3 PARTIAL payments recorded, the most one invoice may have: send PAID to settle the outstanding balance 13974.97 NGN",
  );
  assert.deepEqual(error.violations, [
    {
      path: "payment_status",
      rule: "partial_payments_limit",
      message: "at most 3 PARTIAL payments per invoice",
      expected: "at most 3 PARTIAL payments",
      actual: 4,
    },
  ]);
  assert.deepEqual(await api.queued(irn), ["payment_update", "payment_update", "payment_update"]);
  assert.equal((await api.lookup(irn)).amount_paid, 0.03);

  // A retry of a recorded PARTIAL is still recognised (answered 200, recorded once), and PAID settles.
  const retry = await api.update(irn, { payment_status: "PARTIAL", amount: 0.01, reference: "K2" });
  assert.equal(retry.statusCode, 200, retry.body);
  assert.equal((await api.queued(irn)).length, 3);
  const paid = await api.update(irn, { payment_status: "PAID", reference: "K-final" });
  assert.equal(paid.statusCode, 200, paid.body);
  assert.deepEqual(await api.queued(irn), Array(4).fill("payment_update"));
  const lookup = await api.lookup(irn);
  assert.equal(lookup.payment_status, "PAID");
  assert.equal(lookup.amount_outstanding, 0);
  assert.equal((await api.history(irn)).filter((type) => type === "payment_updated").length, 4);

  // A payment that rounds to nothing is no payment.
  const fresh = await api.sign();
  const nothing = refused(
    await api.update(fresh, { payment_status: "PARTIAL", amount: 1e-9, reference: "Z" }),
    400,
    "Failed to update invoice",
  );
  assert.match(nothing.details, /less than one NGN minor unit: a payment is at least 0\.01 NGN/);

  // Ten at once on a fresh invoice: exactly three are recorded, whatever the order.
  const raced = await api.sign();
  const answers = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      api.update(raced, { payment_status: "PARTIAL", amount: 1, reference: `R${i}` }),
    ),
  );
  assert.deepEqual(answers.map((r) => r.statusCode).sort(), [...Array(3).fill(200), ...Array(7).fill(400)]);
  assert.equal((await api.lookup(raced)).amount_paid, 3);
  assert.equal((await api.queued(raced)).length, 3);
});

test(`queued forwards per business on ${ENGINE}: past EINVOICE_MAX_QUEUED_FORWARDS_PER_BUSINESS a change is a 429 with Retry-After, and nothing of it is recorded`, {
  timeout: 60_000,
}, async (t) => {
  const sim = await simulator(t, { taxpayers: 2 });
  const service = await serviceFor(t, sim, { EINVOICE_MAX_QUEUED_FORWARDS_PER_BUSINESS: "4" });
  const [who, neighbour] = service.tenants;
  assert.ok(who && neighbour);
  const api = calls(service, who);
  const a = await api.sign();
  const b = await api.sign();
  for (const n of [1, 2]) {
    const res = await api.update(a, { payment_status: "PARTIAL", amount: 10, reference: `Q${n}` });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await api.report(b, `delivery ${n}`)).statusCode, 200);
  }

  const full = (res: { statusCode: number; body: string; headers: Record<string, unknown> }) => {
    const error = refused(res, 429, "Too many requests");
    assert.equal(res.headers["retry-after"], "60");
    assert.equal(
      error.details,
      "this business has 4 messages waiting to be sent to the tax authority, the most it may have: nothing was recorded; retry after 60 s",
    );
  };
  full(await api.update(a, { payment_status: "PARTIAL", amount: 10, reference: "Q3" }));
  full(await api.report(b, "delivery 3"));
  full(await api.update(b, { payment_status: "PAID" }));
  // Nothing of the refused changes: no payment, no report, no history entry, no job.
  const lookup = await api.lookup(a);
  assert.equal(lookup.amount_paid, 20);
  assert.equal((await api.lookup(b)).payment_status, "PENDING");
  assert.equal(await reportCount(service, b), 2);
  assert.equal((await api.history(a)).filter((type) => type === "payment_updated").length, 2);
  assert.deepEqual(await api.queued(a), ["payment_update", "payment_update"]);
  assert.deepEqual(await api.queued(b), ["vat_report", "vat_report"]);
  // The retry of a recorded payment is still answered: it queues nothing.
  const retry = await api.update(a, { payment_status: "PARTIAL", amount: 10, reference: "Q1" });
  assert.equal(retry.statusCode, 200, retry.body);

  // Another business has its own bound.
  const theirs = calls(service, neighbour);
  const c = await theirs.sign();
  assert.equal((await theirs.report(c)).statusCode, 200);

  // Once the authority has taken some, there is room again.
  await service.ctx.db
    .updateTable("outbox_jobs")
    .set({ state: "done" })
    .where("kind", "=", "forward")
    .where("irn", "=", a)
    .execute();
  const again = await api.update(a, { payment_status: "PARTIAL", amount: 10, reference: "Q3" });
  assert.equal(again.statusCode, 200, again.body);
  assert.equal((await api.lookup(a)).amount_paid, 30);
});
