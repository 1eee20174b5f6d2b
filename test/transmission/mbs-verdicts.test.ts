import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type TestContext, test } from "node:test";
import { eventually, fixture, type Json } from "../helpers.ts";
import { API, invoiceFor, serviceFor, simulator } from "./mbs.ts";

// The connector's verdicts end to end against the simulator, as the MBS spec's section 4 decides
// them: by the step and by asking MBS (`confirm`), never by MBS's words, which are the same for a
// refusal and a duplicate ("…also confirm this is not a duplicate request", "…try again later").

type Service = Awaited<ReturnType<typeof serviceFor>>;
type Attempt = { attempt: number; outcome: string; error?: string; authority_state?: string; hold?: string };
type Lookup = Json & { status: string; attempts: Attempt[]; authority_error: Json | null };

/** [recorded][client] The one public_message of every refusal of validate and sign. */
const REFUSED =
  "validation failed: we are unable to process your request. also confirm this is not a duplicate request";

const lookupOf = async (service: Service, irn: string, headers: Record<string, string>) =>
  (await service.app.inject({ url: `${API}/lookup/${irn}`, headers })).json().data as Lookup;

const settled = (service: Service, irn: string, headers: Record<string, string>) =>
  eventually(
    async () =>
      ["TRANSMITTED", "TRANSMISSION_FAILED"].includes((await lookupOf(service, irn, headers)).status),
    30_000,
    `${irn} settled`,
  );

async function signTransmit(service: Service, headers: Record<string, string>, payload: Json) {
  const res = await service.app.inject({ method: "POST", url: `${API}/sign-transmit`, headers, payload });
  // 200 delivered, 503 queued, 400 refused by the authority within the bounded wait.
  assert.ok([200, 400, 503].includes(res.statusCode), res.body);
  return res;
}

/** A real proxy in front of the simulator that keeps the method and path of every call MBS got. */
async function countingProxy(t: TestContext, target: string) {
  const calls: string[] = [];
  const to = new URL(target);
  const server = http.createServer((req, res) => {
    calls.push(`${req.method} ${req.url}`);
    const upstream = http.request(
      { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

const FAST_SIGN_REPEAT = { EINVOICE_MBS_SIGN_REPEAT_DELAY_MS: "50" };

test("an invoice MBS refuses at validate ends TRANSMISSION_FAILED in one attempt and 2 calls, MBS's words verbatim in lookup, history and webhook", {
  timeout: 60_000,
}, async (t) => {
  const sim = await simulator(t, { seed: 21 });
  const counted = await countingProxy(t, sim.url);
  // The wait is long for a loaded machine; the answer comes as soon as the verdict is known.
  const service = await serviceFor(t, { ...sim, url: counted.url }, { EINVOICE_TRANSMIT_WAIT_MS: "20000" });
  service.startWorker(2);
  const [who] = service.tenants;
  assert.ok(who);
  // Its webhook's events stay queued (nothing listens there): their payloads are read back below.
  await service.ctx.webhooks.set(who.business_id, "http://127.0.0.1:9/never");
  // The simulator refuses an invoice number starting with REJECT at validate and sign, as MBS does
  // an invalid tax category; this service's own validation has no reason to.
  const doc = invoiceFor(fixture("invoice-minimal", who), who, "REJECT");
  const irn = String(doc.irn);
  const answer = await signTransmit(service, who.headers, doc);
  assert.equal(answer.statusCode, 400, "refused at once, within the bounded wait");
  await settled(service, irn, who.headers);
  const lookup = await lookupOf(service, irn, who.headers);
  assert.equal(lookup.status, "TRANSMISSION_FAILED");
  assert.deepEqual(
    lookup.attempts.map((a) => [a.attempt, a.outcome]),
    [[1, "rejected"]],
  );
  // confirm (not registered), validate (refused): nothing signed, nothing retried.
  assert.deepEqual(
    counted.calls.map(
      (c) => `${c.split(" ")[0]} ${(c.split(" ")[1] ?? "").split("/").slice(0, 5).join("/")}`,
    ),
    ["GET /api/v1/invoice/confirm", "POST /api/v1/invoice/validate"],
  );
  assert.ok(counted.calls.length <= 3);
  const error = lookup.authority_error as Json;
  assert.equal(error.status, 400);
  assert.equal(error.handler, "invoice_actions");
  assert.equal(error.public_message, REFUSED);
  assert.match(String(error.details), /^invoicerequest\./, "MBS's reason, verbatim");
  assert.match(String(error.id), /^[0-9a-f-]{36}$/);
  const history = (await service.app.inject({ url: `${API}/${irn}`, headers: who.headers })).json().data
    .history as Array<{ type: string; detail: Json }>;
  const failed = history.find((e) => e.type === "transmission_failed");
  assert.deepEqual(failed?.detail.authority_error, error);
  const [event] = await service.ctx.db
    .selectFrom("outbox_jobs")
    .select("payload")
    .where("kind", "=", "webhook")
    .where("irn", "=", irn)
    .where("payload", "like", "%transmission_failed%")
    .execute();
  assert.ok(event?.payload, "an invoice.transmission_failed event");
  assert.deepEqual((JSON.parse(event.payload) as { data: Json }).data.authority_error, error);
  assert.equal(sim.registrations().get(irn), undefined);
});

test("a sign whose answer was lost, or answered like a duplicate, is confirmed as ours and delivered once; a 4xx that registered nothing is signed again once", {
  timeout: 60_000,
}, async (t) => {
  const sim = await simulator(t, { seed: 22 });
  const service = await serviceFor(t, sim, { EINVOICE_TRANSMIT_WAIT_MS: "0", ...FAST_SIGN_REPEAT });
  service.startWorker(4);
  const [who] = service.tenants;
  assert.ok(who);
  const base = fixture("invoice-minimal", who);
  // DROP: the sign registers and its connection is cut. DUPLICATE: the sign registers and is
  // answered as a duplicate. TRYLATER: a sign 400 "try again later" that registered nothing.
  const docs = Object.fromEntries(
    ["DROP", "DUPLICATE", "TRYLATER"].map((prefix) => [prefix, invoiceFor(base, who, prefix)]),
  );
  for (const doc of Object.values(docs)) await signTransmit(service, who.headers, doc);
  for (const doc of Object.values(docs)) await settled(service, String(doc.irn), who.headers);
  for (const [prefix, doc] of Object.entries(docs)) {
    const irn = String(doc.irn);
    const lookup = await lookupOf(service, irn, who.headers);
    assert.equal(lookup.status, "TRANSMITTED", prefix);
    assert.equal(sim.registrations().get(irn), 1, `${prefix}: registered once`);
    assert.equal(lookup.attempts.filter((a) => a.outcome === "delivered").length, 1, prefix);
  }
  // The lost answer: the next attempt asked confirm, read the invoice back, and transmitted. (On
  // a machine busy enough, an attempt between them may get no answer in time: then it was cut off,
  // and nothing else went wrong.)
  const dropped = (await lookupOf(service, String(docs.DROP?.irn), who.headers)).attempts;
  const between = dropped.slice(1, -1);
  assert.ok(dropped.length >= 2, JSON.stringify(dropped));
  assert.deepEqual(
    between.filter((a) => !/no answer within/.test(String(a.error))),
    [],
    `only attempts cut off come between the lost answer and the delivery: ${JSON.stringify(dropped)}`,
  );
  // The duplicate answer and the try-again-later refusal are resolved inside one attempt, by asking
  // (besides attempts cut off on a busy machine, as above).
  for (const prefix of ["DUPLICATE", "TRYLATER"]) {
    const attempts: Attempt[] = (await lookupOf(service, String(docs[prefix]?.irn), who.headers)).attempts;
    const resolving = attempts.filter((a) => !/no answer within/.test(String(a.error)));
    assert.equal(resolving.length, 1, `${prefix}: ${JSON.stringify(attempts)}`);
  }
  // No sign was ever sent for an IRN MBS held already.
  assert.deepEqual([...sim.refusedSigns()], []);
  const counts = sim.faultCounts();
  for (const fault of ["drop", "duplicate", "try_later"]) assert.ok((counts[fault] ?? 0) >= 1, fault);
});

test("an IRN MBS holds with another document ends refused as a clash, in one attempt", {
  timeout: 60_000,
}, async (t) => {
  const sim = await simulator(t, { seed: 23 });
  const service = await serviceFor(t, sim, { EINVOICE_TRANSMIT_WAIT_MS: "20000" });
  service.startWorker(2);
  const [who] = service.tenants;
  assert.ok(who);
  const doc = invoiceFor(fixture("invoice-minimal", who), who);
  const irn = String(doc.irn);
  // Someone else (another system of the same taxpayer) registered this IRN at MBS with other amounts.
  const theirs = structuredClone(doc) as Json & { legal_monetary_total: Json };
  theirs.legal_monetary_total = { ...theirs.legal_monetary_total, payable_amount: 1 };
  const signed = await fetch(`${sim.url}/api/v1/invoice/sign`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": sim.api_key, "x-api-secret": sim.api_secret },
    body: JSON.stringify(theirs),
  });
  assert.equal(signed.status, 200, await signed.text());
  await signTransmit(service, who.headers, doc);
  await settled(service, irn, who.headers);
  const lookup = await lookupOf(service, irn, who.headers);
  assert.equal(lookup.status, "TRANSMISSION_FAILED");
  assert.equal(lookup.attempts.length, 1);
  assert.match(String(lookup.attempts[0]?.error), /holds IRN .* with a different document.*clashes/);
  assert.equal(sim.registrations().get(irn), 1, "theirs, and only theirs");
  assert.deepEqual([...sim.refusedSigns()], [], "ours was never signed over it");
});

test("refused credentials pause every delivery with one probe per interval; all deliver once the credentials pass", {
  timeout: 90_000,
}, async (t) => {
  const sim = await simulator(t, { seed: 24 });
  const probeMs = 1000;
  const service = await serviceFor(t, sim, {
    EINVOICE_TRANSMIT_WAIT_MS: "0",
    EINVOICE_AUTHORITY_PROBE_MS: String(probeMs),
    EINVOICE_MAX_ATTEMPTS: "2",
    EINVOICE_OPERATOR_PASSWORD: "correct horse battery staple",
  });
  const [who] = service.tenants;
  assert.ok(who);
  // The APP's credential is refused (revoked in the MBS dashboard, say) before anything is sent.
  sim.setFaults("credential=1");
  const docs = Array.from({ length: 20 }, () => invoiceFor(fixture("invoice-minimal", who), who));
  for (const doc of docs) await signTransmit(service, who.headers, doc);
  service.startWorker(8);
  await eventually(
    async () => (await service.ctx.transmission.authorityHold()) !== undefined,
    10_000,
    "held",
  );
  await new Promise((resolve) => setTimeout(resolve, 4 * probeMs));
  // Every call MBS got is one of the attempts claimed before the hold opened (one per worker slot
  // at most), the probe that judged their refusals (shared: they came together), or one of the
  // hold's probes, which come one per interval, however many invoices wait.
  // MBS counts a probe when it arrives, the hold when its answer is recorded: the calls are read
  // first, so that no probe is counted by MBS and not yet by the hold.
  const calls = sim.faultCounts().credential ?? 0;
  const hold = await service.ctx.transmission.authorityHold();
  assert.ok(hold);
  const intervals = (Date.now() - Date.parse(hold.since)) / probeMs;
  assert.ok(hold.probes >= 2, `probes were made (${hold.probes})`);
  assert.ok(
    hold.probes <= Math.ceil(intervals),
    `${hold.probes} probes in ${intervals.toFixed(1)} intervals`,
  );
  assert.ok(
    calls <= 8 + 1 + hold.probes,
    `${calls} calls: 8 worker slots, 1 judging probe and ${hold.probes} probes at most`,
  );
  assert.ok(calls < docs.length, `fewer calls (${calls}) than invoices waiting (${docs.length})`);

  // Shown where an operator looks: outbox status, /metrics, the dashboard, and each lookup.
  assert.equal(hold.authority, "mbs");
  assert.match(hold.reason, /unable to validate api key/);
  const metrics = (await service.app.inject({ url: "/metrics" })).body;
  assert.match(metrics, /^einvoice_authority_hold_seconds [1-9]/m);
  assert.match(metrics, /^einvoice_authority_hold_probes [1-9]/m);
  const signIn = await service.app.inject({
    method: "POST",
    url: "/dashboard/login",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    payload: new URLSearchParams({ password: "correct horse battery staple" }).toString(),
  });
  const cookie = signIn.cookies.find((c) => c.name === "einvoice_operator");
  assert.ok(cookie, signIn.body);
  const page = await service.app.inject({
    url: "/dashboard/outbox",
    headers: { cookie: `${cookie.name}=${cookie.value}` },
  });
  assert.match(page.body, /Deliveries to mbs are paused/);
  // A new sign-transmit says why it waits, without calling MBS.
  const more = invoiceFor(fixture("invoice-minimal", who), who);
  const paused = await service.app.inject({
    method: "POST",
    url: `${API}/sign-transmit`,
    headers: who.headers,
    payload: more,
  });
  assert.equal(paused.statusCode, 503);
  assert.match(paused.json().error.details, /paused since .*refused this service's credentials/);
  docs.push(more);
  for (const doc of docs) {
    const lookup = await lookupOf(service, String(doc.irn), who.headers);
    assert.equal(lookup.status, "TRANSMITTING", "no invoice fails for the operator's credentials");
  }
  const attempted = await lookupOf(service, String(docs[0]?.irn), who.headers);
  if (attempted.attempts.length > 0) assert.equal(attempted.authority_state, "AWAITING_OPERATOR");

  // The credentials pass again: the next probe lifts the hold, and everything is delivered once.
  sim.setFaults("");
  for (const doc of docs) {
    await eventually(
      async () => (await lookupOf(service, String(doc.irn), who.headers)).status === "TRANSMITTED",
      30_000,
      `${doc.irn} TRANSMITTED`,
    );
    assert.equal(sim.registrations().get(String(doc.irn)), 1);
  }
  assert.equal(await service.ctx.transmission.authorityHold(), undefined, "the hold is over");
  await eventually(
    async () =>
      /^einvoice_authority_hold_seconds 0$/m.test((await service.app.inject({ url: "/metrics" })).body),
    10_000,
    "the metric back to 0 once its snapshot is counted again",
  );
});
