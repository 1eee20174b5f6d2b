import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type TestContext, test } from "node:test";
import pino from "pino";
import { createContext, createServer } from "../../../src/main.ts";
import { cli, configOf, dbEnv, oneJson, onTeardown, startServer, TIMEOUT } from "../../cli/run.ts";
import {
  build,
  eventually,
  freshInvoice,
  ISO_TIMESTAMP,
  type Json,
  type Tenant,
  tenant,
} from "../../helpers.ts";

const API = "/api/v1/einvoice";

type App = Awaited<ReturnType<typeof build>>["app"];

/** The minimal fixture (payable 13,975.00 NGN, issued 2026-11-16) under a fresh IRN. */
const ISSUED = "2026-11-16";
const PAYABLE = 13975;

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

/** A business's calls: sign, update, and the lookup and record of one of its invoices. */
function client(app: App, who: Tenant) {
  const patch = (irn: string, payload: Json) =>
    app.inject({ method: "PATCH", url: `${API}/update/${irn}`, headers: who.headers, payload });
  return {
    async sign(changes: Json = {}): Promise<string> {
      const invoice = { ...freshInvoice(who, "invoice-minimal"), ...changes };
      const res = await app.inject({
        method: "POST",
        url: `${API}/sign`,
        headers: who.headers,
        payload: invoice,
      });
      assert.equal(res.statusCode, 200, res.body);
      return String(invoice.irn);
    },
    patch,
    /** An update that must succeed. */
    async pay(irn: string, payload: Json) {
      const res = await patch(irn, payload);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), {
        status: true,
        code: 200,
        message: "Invoice updated successfully",
        data: [],
      });
    },
    /** An update that must fail with a 400 naming `path`: answers the error object. */
    async refused(irn: string, payload: Json, path: string) {
      const res = await patch(irn, payload);
      assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
      const body = res.json();
      assert.equal(body.status, false);
      assert.equal(body.code, 400);
      assert.equal(body.message, "Failed to update invoice");
      assert.equal(body.data, null);
      assert.match(body.timestamp, ISO_TIMESTAMP);
      assert.deepEqual(
        (body.error.violations as { path: string }[]).map((v) => v.path),
        [path],
        `${JSON.stringify(payload)}: ${body.error.details}`,
      );
      return body.error as { details: string; violations: { rule: string; message: string }[] };
    },
    async lookup(irn: string) {
      const res = await app.inject({ url: `${API}/lookup/${irn}`, headers: who.headers });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data as Json;
    },
    async record(irn: string) {
      const res = await app.inject({ url: `${API}/${irn}`, headers: who.headers });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data as Json & { history: { type: string; actor: string; detail: Json }[] };
    },
  };
}

/** Where both views must agree: status, amount paid and amount outstanding. */
async function balance(api: ReturnType<typeof client>, irn: string) {
  const [lookup, record] = await Promise.all([api.lookup(irn), api.record(irn)]);
  const pick = (d: Json) => [d.payment_status, d.amount_paid, d.amount_outstanding];
  assert.deepEqual(pick(lookup), pick(record), "lookup and record agree");
  return {
    payment_status: lookup.payment_status,
    paid: lookup.amount_paid,
    outstanding: lookup.amount_outstanding,
  };
}

const payments = (record: { history: { type: string; detail: Json }[] }) =>
  record.history.filter((e) => e.type === "payment_updated").map((e) => e.detail);

/** A local HTTP receiver for a business's webhooks: every event it is sent, in arrival order. */
async function receiver(t: TestContext) {
  const events: { type: string; data: Json }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      events.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as { type: string; data: Json });
      res.writeHead(204).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, events };
}

test("PENDING → PARTIAL → PARTIAL → PAID: the amounts add up in lookup, record, history and webhooks; audit verify is clean", async (t) => {
  const { app, ctx, startWorker } = await build(t);
  const a = await tenant(ctx);
  const hooks = await receiver(t);
  await ctx.webhooks.set(a.business_id, hooks.url);
  startWorker();
  const api = client(app, a);
  const irn = await api.sign();
  assert.deepEqual(await balance(api, irn), { payment_status: "PENDING", paid: 0, outstanding: PAYABLE });

  await api.pay(irn, {
    payment_status: "PARTIAL",
    amount: 5000,
    payment_update_date: ISSUED,
    reference: "TRF-1",
  });
  assert.deepEqual(await balance(api, irn), { payment_status: "PARTIAL", paid: 5000, outstanding: 8975 });
  assert.equal((await api.lookup(irn)).payment_reference, "TRF-1");

  await api.pay(irn, { payment_status: "PARTIAL", amount: 3000.5, payment_update_date: day(0) });
  assert.deepEqual(await balance(api, irn), { payment_status: "PARTIAL", paid: 8000.5, outstanding: 5974.5 });
  assert.equal(
    (await api.lookup(irn)).payment_reference,
    "TRF-1",
    "an update without a reference keeps the last one",
  );

  // PAID without an amount settles the balance.
  await api.pay(irn, { payment_status: "PAID", reference: "TRF-3" });
  assert.deepEqual(await balance(api, irn), { payment_status: "PAID", paid: PAYABLE, outstanding: 0 });

  const record = await api.record(irn);
  assert.deepEqual(payments(record), [
    {
      from: "PENDING",
      to: "PARTIAL",
      reference: "TRF-1",
      amount: 5000,
      payment_update_date: ISSUED,
      amount_paid: 5000,
      amount_outstanding: 8975,
    },
    {
      from: "PARTIAL",
      to: "PARTIAL",
      reference: null,
      amount: 3000.5,
      payment_update_date: day(0),
      amount_paid: 8000.5,
      amount_outstanding: 5974.5,
    },
    {
      from: "PARTIAL",
      to: "PAID",
      reference: "TRF-3",
      amount: 5974.5,
      payment_update_date: day(0),
      amount_paid: PAYABLE,
      amount_outstanding: 0,
    },
  ]);
  for (const entry of record.history.filter((e) => e.type === "payment_updated")) {
    assert.equal(entry.actor, `key:${a.api_key}`);
  }

  await eventually(
    async () => hooks.events.filter((e) => e.type === "invoice.payment_updated").length === 3,
    10_000,
    "three payment webhooks",
  );
  const base = { irn, business_id: a.business_id, status: "SIGNED" };
  assert.deepEqual(
    // Deliveries run side by side, so they may arrive in any order: each says where it stands.
    hooks.events
      .filter((e) => e.type === "invoice.payment_updated")
      .map((e) => e.data)
      .sort((x, y) => Number(x.amount_paid) - Number(y.amount_paid)),
    [
      {
        ...base,
        payment_status: "PARTIAL",
        amount_paid: 5000,
        amount_outstanding: 8975,
        payment_reference: "TRF-1",
        amount: 5000,
        payment_update_date: ISSUED,
      },
      {
        ...base,
        payment_status: "PARTIAL",
        amount_paid: 8000.5,
        amount_outstanding: 5974.5,
        payment_reference: "TRF-1",
        amount: 3000.5,
        payment_update_date: day(0),
      },
      {
        ...base,
        payment_status: "PAID",
        amount_paid: PAYABLE,
        amount_outstanding: 0,
        payment_reference: "TRF-3",
        amount: 5974.5,
        payment_update_date: day(0),
      },
    ],
  );
  const signed = hooks.events.find((e) => e.type === "invoice.signed");
  assert.equal(signed?.data.amount_outstanding, PAYABLE);

  assert.deepEqual(await ctx.audit.verify(a.business_id), { checked: 1, broken: [] });
  // PAID is final: another payment, or REJECTED, is refused; PAID again is a no-op.
  await api.refused(irn, { payment_status: "PARTIAL", amount: 1 }, "payment_status");
  await api.refused(irn, { payment_status: "REJECTED" }, "payment_status");
  await api.pay(irn, { payment_status: "PAID", amount: 5974.5 });
  assert.equal(payments(await api.record(irn)).length, 3);
});

test("a PARTIAL that clears the balance makes the invoice PAID; PAID with the exact balance is accepted", async (t) => {
  const { app, ctx } = await build(t);
  const api = client(app, await tenant(ctx));
  const cleared = await api.sign();
  await api.pay(cleared, { payment_status: "PARTIAL", amount: 10000 });
  await api.pay(cleared, { payment_status: "PARTIAL", amount: 3975, reference: "LAST" });
  assert.deepEqual(await balance(api, cleared), { payment_status: "PAID", paid: PAYABLE, outstanding: 0 });
  assert.equal(payments(await api.record(cleared)).at(-1)?.to, "PAID");

  const exact = await api.sign();
  await api.pay(exact, { payment_status: "PAID", amount: PAYABLE });
  assert.deepEqual(await balance(api, exact), { payment_status: "PAID", paid: PAYABLE, outstanding: 0 });
  assert.deepEqual(await ctx.audit.verify(), { checked: 2, broken: [] });
});

test("bad payment updates are 400s that name the field and say why; nothing is recorded", async (t) => {
  const { app, ctx } = await build(t);
  const api = client(app, await tenant(ctx));
  const irn = await api.sign();
  await api.pay(irn, { payment_status: "PARTIAL", amount: 8975 });

  const over = await api.refused(irn, { payment_status: "PARTIAL", amount: 10000 }, "amount");
  assert.equal(
    over.details,
    "the payment of 10000.00 NGN exceeds the outstanding balance 5000.00 NGN by 5000.00 NGN",
  );
  assert.equal(over.violations[0]?.rule, "overpayment");
  const overPaid = await api.refused(irn, { payment_status: "PAID", amount: 5000.01 }, "amount");
  assert.equal(
    overPaid.details,
    "the payment of 5000.01 NGN exceeds the outstanding balance 5000.00 NGN by 0.01 NGN",
  );
  const short = await api.refused(irn, { payment_status: "PAID", amount: 4000 }, "amount");
  assert.match(
    short.details,
    /outstanding balance 5000\.00 NGN.*leaves 1000\.00 NGN unpaid; send it as PARTIAL/,
  );

  assert.match(
    (await api.refused(irn, { payment_status: "PARTIAL" }, "amount")).details,
    /amount is required for PARTIAL/,
  );
  for (const amount of [0, -5]) {
    assert.match(
      (await api.refused(irn, { payment_status: "PARTIAL", amount }, "amount")).details,
      /must be > 0/,
    );
  }
  assert.match(
    (await api.refused(irn, { payment_status: "PARTIAL", amount: "100" }, "amount")).details,
    /amount must be a number/,
  );
  assert.match(
    (await api.refused(irn, { payment_status: "PARTIAL", amount: 100.005 }, "amount")).details,
    /not a whole number of NGN minor units: NGN amounts carry at most 2 decimals/,
  );
  for (const date of ["2026-02-30", "20-11-2026", "2026-11-20T10:00:00Z"]) {
    const bad = await api.refused(
      irn,
      { payment_status: "PARTIAL", amount: 1, payment_update_date: date },
      "payment_update_date",
    );
    assert.match(bad.details, /must be a real calendar date written YYYY-MM-DD/);
  }
  assert.equal(
    (
      await api.refused(
        irn,
        { payment_status: "PARTIAL", amount: 1, payment_update_date: "2026-11-15" },
        "payment_update_date",
      )
    ).details,
    `payment_update_date 2026-11-15 is before the invoice's issue_date ${ISSUED}`,
  );
  assert.equal(
    (
      await api.refused(
        irn,
        { payment_status: "PARTIAL", amount: 1, payment_update_date: day(2) },
        "payment_update_date",
      )
    ).details,
    `payment_update_date ${day(2)} is in the future: it must be ${day(1)} or earlier`,
  );
  // PARTIAL → REJECTED: money was received; a credit note settles it. PARTIAL → PENDING neither.
  const rejected = await api.refused(irn, { payment_status: "REJECTED" }, "payment_status");
  assert.match(
    rejected.details,
    /8975\.00 NGN of the invoice has been paid, so it cannot be REJECTED; .*credit note/,
  );
  assert.match(
    (await api.refused(irn, { payment_status: "PENDING" }, "payment_status")).details,
    /cannot go back to PENDING/,
  );
  assert.match(
    (await api.refused(irn, { payment_status: "REJECTED", amount: 5 }, "amount")).details,
    /amount is only for PARTIAL and PAID/,
  );
  assert.deepEqual(await balance(api, irn), { payment_status: "PARTIAL", paid: 8975, outstanding: 5000 });
  assert.equal(payments(await api.record(irn)).length, 1, "no refused update left a trace");

  // Tomorrow is within the clock skew allowed.
  await api.pay(irn, { payment_status: "PARTIAL", amount: 1, payment_update_date: day(1) });
  assert.deepEqual(await balance(api, irn), { payment_status: "PARTIAL", paid: 8976, outstanding: 4999 });
});

test("REJECTED from PENDING stays allowed and final; PENDING again is a no-op", async (t) => {
  const { app, ctx } = await build(t);
  const api = client(app, await tenant(ctx));
  const irn = await api.sign();
  await api.pay(irn, { payment_status: "PENDING" });
  await api.pay(irn, { payment_status: "REJECTED", payment_update_date: ISSUED, reference: "BUYER-NO" });
  assert.deepEqual(await balance(api, irn), { payment_status: "REJECTED", paid: 0, outstanding: PAYABLE });
  assert.deepEqual(payments(await api.record(irn)), [
    {
      from: "PENDING",
      to: "REJECTED",
      reference: "BUYER-NO",
      payment_update_date: ISSUED,
      amount_paid: 0,
      amount_outstanding: PAYABLE,
    },
  ]);
  assert.match(
    (await client(app, await tenant(ctx)).patch(irn, { payment_status: "PAID" })).json().message,
    /Invoice not found/,
    "another business's invoice is not there",
  );
  await api.refused(irn, { payment_status: "PARTIAL", amount: 5 }, "payment_status");
});

test("a retried PARTIAL (same reference and amount) is answered 200 and recorded once, even after the invoice is PAID", async (t) => {
  const { app, ctx } = await build(t);
  const api = client(app, await tenant(ctx));
  const irn = await api.sign();
  const payment = {
    payment_status: "PARTIAL",
    amount: 25.5,
    payment_update_date: ISSUED,
    reference: "TRF-889",
  };
  await api.pay(irn, payment);
  await api.pay(irn, payment);
  await api.pay(irn, { ...payment, payment_update_date: day(0) });
  assert.deepEqual(await balance(api, irn), { payment_status: "PARTIAL", paid: 25.5, outstanding: 13949.5 });
  assert.equal(payments(await api.record(irn)).length, 1);

  // Same reference, another amount: another payment. No reference: every PARTIAL is a payment.
  await api.pay(irn, { ...payment, amount: 100 });
  await api.pay(irn, { payment_status: "PARTIAL", amount: 25.5 });
  await api.pay(irn, { payment_status: "PARTIAL", amount: 25.5 });
  assert.deepEqual(await balance(api, irn), { payment_status: "PARTIAL", paid: 176.5, outstanding: 13798.5 });
  assert.equal(payments(await api.record(irn)).length, 4);

  // The last payment, retried after it made the invoice PAID: still the same answer.
  const last = { payment_status: "PARTIAL", amount: 13798.5, reference: "TRF-900" };
  await api.pay(irn, last);
  await api.pay(irn, last);
  await api.pay(irn, payment);
  assert.deepEqual(await balance(api, irn), { payment_status: "PAID", paid: PAYABLE, outstanding: 0 });
  assert.equal(payments(await api.record(irn)).length, 5);
  assert.deepEqual(await ctx.audit.verify(), { checked: 1, broken: [] });
});

/** A business's calls over HTTP to one of several server processes. */
function remote(urls: readonly string[], who: Tenant) {
  return async (irn: string, payload: Json, i: number) => {
    const res = await fetch(`${urls[i % urls.length]}${API}/update/${irn}`, {
      method: "PATCH",
      headers: { ...who.headers, "content-type": "application/json" },
      body: JSON.stringify(payload),
    });
    return { statusCode: res.status, body: (await res.json()) as Json & { error: { details: string } } };
  };
}

test("concurrent PARTIALs through two server processes: none is lost, together they never overpay, a retry is recorded once", {
  timeout: TIMEOUT * 3,
}, async (t) => {
  const db = await dbEnv(t);
  const ctx = await createContext(configOf(db));
  const app = await createServer(ctx, pino({ level: "silent" }));
  onTeardown(t, async () => {
    await app.close();
    await ctx.close();
  });
  const a = await tenant(ctx);
  const api = client(app, a);
  // Two API processes on one database, as production runs them (on SQLite, sharing the file): in
  // one process a SQLite update runs start to end without a pause, so only processes race.
  const servers = await Promise.all([startServer(t, db.env), startServer(t, db.env)]);
  const patch = remote(
    servers.map((s) => s.url),
    a,
  );

  // Twenty payments of 100.00 at once: all fit, all recorded.
  const fits = await api.sign();
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      patch(fits, { payment_status: "PARTIAL", amount: 100, reference: `P${i}` }, i),
    ),
  );
  assert.deepEqual(
    answers.map((r) => r.statusCode),
    Array(20).fill(200),
  );
  assert.deepEqual(await balance(api, fits), { payment_status: "PARTIAL", paid: 2000, outstanding: 11975 });
  // Each entry states the balance after it: 100 more each time, whatever the order.
  assert.deepEqual(
    payments(await api.record(fits)).map((d) => d.amount_paid),
    Array.from({ length: 20 }, (_, i) => (i + 1) * 100),
  );

  // Ten payments of 3,000.00 at once on 13,975.00: four are taken, six would overpay.
  const tight = await api.sign();
  const race = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      patch(tight, { payment_status: "PARTIAL", amount: 3000, reference: `T${i}` }, i),
    ),
  );
  assert.deepEqual(race.map((r) => r.statusCode).sort(), [...Array(4).fill(200), ...Array(6).fill(400)]);
  for (const lost of race.filter((r) => r.statusCode === 400)) {
    assert.equal(
      lost.body.error.details,
      "the payment of 3000.00 NGN exceeds the outstanding balance 1975.00 NGN by 1025.00 NGN",
    );
  }
  assert.deepEqual(await balance(api, tight), { payment_status: "PARTIAL", paid: 12000, outstanding: 1975 });
  assert.equal(payments(await api.record(tight)).length, 4);

  // The same PARTIAL sent ten times at once (a client's retries overlapping): recorded once.
  const retried = await api.sign();
  const same = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      patch(retried, { payment_status: "PARTIAL", amount: 700, reference: "R" }, i),
    ),
  );
  assert.deepEqual(
    same.map((r) => r.statusCode),
    Array(10).fill(200),
  );
  assert.deepEqual(await balance(api, retried), { payment_status: "PARTIAL", paid: 700, outstanding: 13275 });
  assert.equal(payments(await api.record(retried)).length, 1);
  assert.deepEqual(await ctx.audit.verify(), { checked: 3, broken: [] });
});

test("float noise in amounts counts as the rounded amount: 0.1 + 0.2 and friends add up to the kobo", async (t) => {
  const { app, ctx } = await build(t);
  const api = client(app, await tenant(ctx));
  const irn = await api.sign();
  await api.pay(irn, { payment_status: "PARTIAL", amount: 0.1 });
  await api.pay(irn, { payment_status: "PARTIAL", amount: 0.2 });
  await api.pay(irn, { payment_status: "PARTIAL", amount: 0.1 + 0.2 });
  assert.equal(0.1 + 0.2, 0.30000000000000004, "the noise is there to be ignored");
  await api.pay(irn, { payment_status: "PARTIAL", amount: 5000.000000001 });
  assert.deepEqual(await balance(api, irn), { payment_status: "PARTIAL", paid: 5000.6, outstanding: 8974.4 });
  // What a client computes as the rest in floating point is the balance to the kobo.
  const rest = PAYABLE - (0.1 + 0.2 + (0.1 + 0.2) + 5000.000000001);
  assert.notEqual(rest, 8974.4);
  await api.pay(irn, { payment_status: "PAID", amount: rest });
  assert.deepEqual(await balance(api, irn), { payment_status: "PAID", paid: PAYABLE, outstanding: 0 });
  assert.deepEqual(
    payments(await api.record(irn)).map((d) => d.amount),
    [0.1, 0.2, 0.3, 5000, 8974.4],
  );
});

test("currencies with 0 and 3 decimals: JPY counts in yen, KWD in fils", async (t) => {
  const { app, ctx } = await build(t);
  const api = client(app, await tenant(ctx));
  const currency = (code: string) => ({ document_currency_code: code, tax_currency_code: code });

  const yen = await api.sign(currency("JPY"));
  assert.match(
    (await api.refused(yen, { payment_status: "PARTIAL", amount: 100.5 }, "amount")).details,
    /JPY amounts carry at most 0 decimals/,
  );
  await api.pay(yen, { payment_status: "PARTIAL", amount: 13000 });
  assert.equal(
    (await api.refused(yen, { payment_status: "PARTIAL", amount: 1000 }, "amount")).details,
    "the payment of 1000 JPY exceeds the outstanding balance 975 JPY by 25 JPY",
  );
  assert.deepEqual(await balance(api, yen), { payment_status: "PARTIAL", paid: 13000, outstanding: 975 });

  const dinar = await api.sign(currency("KWD"));
  await api.pay(dinar, { payment_status: "PARTIAL", amount: 0.001 });
  await api.pay(dinar, { payment_status: "PARTIAL", amount: 1.234 });
  assert.match(
    (await api.refused(dinar, { payment_status: "PARTIAL", amount: 1.0005 }, "amount")).details,
    /KWD amounts carry at most 3 decimals/,
  );
  assert.equal(
    (await api.refused(dinar, { payment_status: "PAID", amount: 13975 }, "amount")).details,
    "the payment of 13975.000 KWD exceeds the outstanding balance 13973.765 KWD by 1.235 KWD",
  );
  assert.deepEqual(await balance(api, dinar), {
    payment_status: "PARTIAL",
    paid: 1.235,
    outstanding: 13973.765,
  });
  await api.pay(dinar, { payment_status: "PAID", amount: 13973.765 });
  assert.deepEqual(await balance(api, dinar), { payment_status: "PAID", paid: PAYABLE, outstanding: 0 });
  assert.deepEqual(await ctx.audit.verify(), { checked: 2, broken: [] });
});

test("payment_status in the signed document: PAID has paid it all, PARTIAL has paid nothing yet", async (t) => {
  const { app, ctx } = await build(t);
  const api = client(app, await tenant(ctx));
  const paid = await api.sign({ payment_status: "PAID" });
  assert.deepEqual(await balance(api, paid), { payment_status: "PAID", paid: PAYABLE, outstanding: 0 });
  const partial = await api.sign({ payment_status: "PARTIAL" });
  assert.deepEqual(await balance(api, partial), { payment_status: "PARTIAL", paid: 0, outstanding: PAYABLE });
  await api.refused(partial, { payment_status: "REJECTED" }, "payment_status");
  await api.pay(partial, { payment_status: "PARTIAL", amount: 975 });
  await api.pay(partial, { payment_status: "PAID" });
  assert.deepEqual(
    payments(await api.record(partial)).map((d) => [d.from, d.to, d.amount]),
    [
      ["PARTIAL", "PARTIAL", 975],
      ["PARTIAL", "PAID", 13000],
    ],
  );
  const unknown = await app.inject({
    method: "POST",
    url: `${API}/validate`,
    headers: (await tenant(ctx)).headers,
    payload: { payment_status: "SETTLED" },
  });
  assert.match(JSON.stringify(unknown.json().error.violations), /one of PENDING, PARTIAL, PAID, REJECTED/);
  assert.deepEqual(await ctx.audit.verify(), { checked: 2, broken: [] });
});

test("npx einvoice audit verify reports nothing broken after partial payments, and a tampered amount paid after", {
  timeout: TIMEOUT * 2,
}, async (t) => {
  const db = await dbEnv(t);
  const ctx = await createContext(configOf(db));
  const app = await createServer(ctx, pino({ level: "silent" }));
  onTeardown(t, async () => {
    await app.close();
    await ctx.close();
  });
  const api = client(app, await tenant(ctx));
  const irn = await api.sign();
  await api.pay(irn, { payment_status: "PARTIAL", amount: 5000, reference: "A" });
  await api.pay(irn, { payment_status: "PARTIAL", amount: 0.1 + 0.2, reference: "B" });
  await api.pay(irn, { payment_status: "PAID" });
  const other = await api.sign();
  await api.pay(other, { payment_status: "PARTIAL", amount: 100 });
  assert.deepEqual(oneJson(await cli(["audit", "verify"], db.env)), { checked: 2, broken: [] });

  await ctx.db.updateTable("invoices").set({ paid_minor: 5000 }).where("irn", "=", other).execute();
  const run = await cli(["audit", "verify"], db.env);
  assert.equal(run.code, 1);
  assert.deepEqual(
    JSON.parse(run.stdout).broken.map((b: { irn: string; reason: string }) => [b.irn, b.reason]),
    [[other, "amount_paid is 50.00 but the history's payments add up to 100.00"]],
  );
});
