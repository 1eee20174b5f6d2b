import assert from "node:assert/strict";
import { test } from "node:test";
import { eventually, fixture, type Json } from "../helpers.ts";
import { BLOCKED_PAGE, firewall } from "./firewall.ts";
import { API, invoiceFor, serviceFor, simulator } from "./mbs.ts";

// The authority hold pauses every tenant's deliveries, so it opens only on evidence that carries no
// tenant's content (the architecture guide): a call of one tenant refused 401/403, or with MBS's
// credential 400, is judged by a content-free probe that needs the credential (MBS entity search),
// never by itself. These run the attack as the outside world would: a real web firewall in front
// of the MBS simulator, which refuses what it refuses whoever's request it is.

type Service = Awaited<ReturnType<typeof serviceFor>>;
type Attempt = { attempt: number; outcome: string; error?: string; hold?: string };
type Lookup = Json & { status: string; attempts: Attempt[]; authority_error: Json | null };

/** [doc] entity search, paged: the content-free call the connector probes the credential with. */
const PROBE = "GET /api/v1/entity?page=1&size=1";

const lookupOf = async (service: Service, irn: string, headers: Record<string, string>) =>
  (await service.app.inject({ url: `${API}/lookup/${irn}`, headers })).json().data as Lookup;

const signTransmit = (service: Service, headers: Record<string, string>, payload: Json) =>
  service.app.inject({ method: "POST", url: `${API}/sign-transmit`, headers, payload });

const holdRows = async (service: Service) =>
  (await service.ctx.db.selectFrom("authority_holds").selectAll().execute()).length;

test("a firewall's 403 to one tenant's invoices pauses no one: the other tenant's is delivered at once, no hold opens, the refused ones fail on their own budget with the firewall's page kept", {
  timeout: 90_000,
}, async (t) => {
  const sim = await simulator(t, { seed: 41 });
  const waf = await firewall(t, sim.url, { blocks: (request) => request.body.includes("<script>") });
  // The retries are spaced so that no refused invoice can use its budget of 3 within a request's
  // wait: the backoffs after attempts 1 and 2 are at least 2 s and 4 s. A request that finds a
  // worker holding its job watches it until an attempt ends, and with the suite's 20 ms backoffs a
  // loaded machine let all three end before it looked (a 400, failed for good, in one run).
  const service = await serviceFor(
    t,
    { ...sim, url: waf.url },
    {
      EINVOICE_TRANSMIT_WAIT_MS: "5000",
      EINVOICE_MAX_ATTEMPTS: "3",
      EINVOICE_RETRY_BASE_MS: "4000",
      EINVOICE_RETRY_MAX_MS: "8000",
    },
  );
  service.startWorker(4);
  const [a, b] = service.tenants;
  assert.ok(a && b);
  // Tenant A's notes carry what the firewall refuses: its invoices go first, and are retried.
  const attacks = Array.from({ length: 5 }, (): Json => {
    const doc = invoiceFor(fixture("invoice-minimal", a), a);
    doc.note = "<script>alert(document.cookie)</script>";
    return doc;
  });
  const answers = [];
  for (const doc of attacks) answers.push(await signTransmit(service, a.headers, doc));
  // Tenant B's clean invoice, right after: delivered within the bounded wait, not paused.
  const clean = invoiceFor(fixture("invoice-minimal", b), b);
  const delivered = await signTransmit(service, b.headers, clean);
  assert.equal(delivered.statusCode, 200, delivered.body);
  assert.equal(sim.registrations().get(String(clean.irn)), 1);
  assert.equal(await service.ctx.transmission.authorityHold(), undefined, "no hold opened");
  for (const res of answers) {
    assert.equal(res.statusCode, 503, `queued for a retry, not refused for good: ${res.body}`);
    assert.doesNotMatch(res.body, /paused/);
  }

  // A's invoices fail out on their own budget of 3, each attempt counted, none held.
  for (const doc of attacks) {
    const irn = String(doc.irn);
    await eventually(
      async () => (await lookupOf(service, irn, a.headers)).status === "TRANSMISSION_FAILED",
      30_000,
      `${irn} failed out`,
    );
    const lookup = await lookupOf(service, irn, a.headers);
    assert.deepEqual(
      lookup.attempts.map((attempt) => [attempt.attempt, attempt.outcome]),
      [
        [1, "error"],
        [2, "error"],
        [3, "error"],
      ],
    );
    // The firewall's answer, verbatim (as far as a message keeps a page: its first 200 characters).
    for (const attempt of lookup.attempts) {
      assert.ok(String(attempt.error).includes(JSON.stringify(BLOCKED_PAGE.slice(0, 200))), attempt.error);
      assert.match(String(attempt.error), /MBS validate answered 403/);
    }
    assert.equal((lookup.authority_error as Json).status, 403);
    assert.equal(sim.registrations().get(irn), undefined);
  }
  assert.equal(await holdRows(service), 0, "no hold row");
  // What reached MBS besides: the probes, content-free, each passed; the firewall refused A's alone.
  const probes = waf.seen.filter((s) => `${s.method} ${s.path}` === PROBE);
  assert.ok(probes.length >= 1, "the refusals were judged by asking");
  assert.ok(probes.length <= 15, `at most one probe per refusal (${probes.length})`);
  assert.ok(probes.every((s) => s.status === 200));
  assert.equal(waf.seen.filter((s) => s.blocked).length, 15, "5 invoices × 3 attempts, each refused once");
});

test("a credential MBS refuses opens the hold: while it stands no tenant's job is sent, and what closes it once the credential passes is the content-free probe", {
  timeout: 60_000,
}, async (t) => {
  const sim = await simulator(t, { seed: 42 });
  const waf = await firewall(t, sim.url);
  // MBS no longer knows the secret the APP sends (revoked in its dashboard, say): it refuses it itself.
  waf.replaceSecret("revoked-secret");
  const service = await serviceFor(
    t,
    { ...sim, url: waf.url },
    { EINVOICE_TRANSMIT_WAIT_MS: "0", EINVOICE_AUTHORITY_PROBE_MS: "300", EINVOICE_MAX_ATTEMPTS: "2" },
  );
  const [who] = service.tenants;
  assert.ok(who);
  const docs = Array.from({ length: 4 }, () => invoiceFor(fixture("invoice-minimal", who), who));
  for (const doc of docs) await signTransmit(service, who.headers, doc);
  // One slot: the job that meets the refusal settles (and opens the hold) before another is claimed.
  service.startWorker(1);
  await eventually(async () => (await holdRows(service)) === 1, 10_000, "the hold opened");
  const opened = waf.seen.length;
  // Three probes seen after it opened (the hold's count may include one sent before `opened`).
  await eventually(
    async () =>
      waf.seen.slice(opened).filter((s) => `${s.method} ${s.path}` === PROBE).length >= 3 &&
      ((await service.ctx.transmission.authorityHold())?.probes ?? 0) >= 3,
    10_000,
    "three probes",
  );
  // While it stands: only the probe reaches MBS, refused, once per interval; no invoice is sent.
  const during = waf.seen.slice(opened);
  assert.deepEqual(
    during.filter((s) => `${s.method} ${s.path}` !== PROBE || s.status !== 400),
    [],
    "nothing but the refused probe",
  );
  assert.ok(during.length >= 3, JSON.stringify(during));
  const hold = await service.ctx.transmission.authorityHold();
  assert.ok(hold);
  assert.match(hold.reason, /probe.*unable to validate api key/, "the probe's words, no tenant's");
  const paused = await signTransmit(service, who.headers, invoiceFor(fixture("invoice-minimal", who), who));
  assert.equal(paused.statusCode, 503);
  assert.match(paused.json().error.details, /paused since .*refused this service's credentials/);

  // The credential passes again: the next probe, and not an invoice, is what lifts the hold.
  const fixed = waf.seen.length;
  waf.replaceSecret(undefined);
  for (const doc of docs) {
    await eventually(
      async () => (await lookupOf(service, String(doc.irn), who.headers)).status === "TRANSMITTED",
      20_000,
      `${doc.irn} TRANSMITTED`,
    );
    assert.equal(sim.registrations().get(String(doc.irn)), 1);
  }
  const after = waf.seen.slice(fixed);
  const lifted = after.findIndex((s) => s.status < 300);
  assert.ok(lifted >= 0);
  assert.equal(`${after[lifted]?.method} ${after[lifted]?.path}`, PROBE, "the first call that passed");
  assert.deepEqual(
    after.slice(0, lifted).filter((s) => `${s.method} ${s.path}` !== PROBE),
    [],
    "no invoice was sent before the probe passed",
  );
  assert.equal(await holdRows(service), 0, "the hold is over");
  // No invoice used up its budget of 2 on the operator's credential.
  for (const doc of docs) {
    const lookup = await lookupOf(service, String(doc.irn), who.headers);
    assert.ok(lookup.attempts.filter((a) => a.outcome === "error").length === 0, JSON.stringify(lookup));
  }
});

test("an acknowledgement refused 403 for its IRN while the credential passes the probe fails alone: no hold, the other acknowledgement and a delivery go on", {
  timeout: 60_000,
}, async (t) => {
  const sim = await simulator(t, { seed: 43, taxpayers: 2 });
  const [buyer] = sim.taxpayers;
  assert.ok(buyer);
  // Two invoices from other APPs' sellers wait for the buyer: the seller chose the first IRN.
  const [chosen, other] = sim.injectInbound({ count: 2, buyer_tin: buyer.tin });
  assert.ok(chosen && other);
  const waf = await firewall(t, sim.url, {
    bare: true,
    blocks: (request) => request.method === "PATCH" && request.path.endsWith(`/transmit/${chosen}`),
  });
  const service = await serviceFor(
    t,
    { ...sim, url: waf.url },
    { EINVOICE_TRANSMIT_WAIT_MS: "5000", EINVOICE_MAX_ATTEMPTS: "3", EINVOICE_INBOX_LOOKBACK_DAYS: "2" },
  );
  const [who, seller] = service.tenants;
  assert.ok(who && seller);
  const collection = await service.ctx.collector.collect("test", { force: true });
  assert.ok(collection.pulled && collection.stored === 2, JSON.stringify(collection));
  service.startWorker(2);
  for (const irn of [chosen, other]) {
    const acked: { statusCode: number; body: string } = await service.app.inject({
      method: "POST",
      url: `${API}/inbox/${irn}/acknowledge`,
      headers: who.headers,
    });
    assert.equal(acked.statusCode, 200, acked.body);
  }
  await eventually(async () => sim.acknowledgements().get(other) === 1, 20_000, "the other acknowledged");
  const jobOf = () =>
    service.ctx.db
      .selectFrom("outbox_jobs")
      .select(["state", "attempts", "last_error"])
      .where("kind", "=", "acknowledgement")
      .where("irn", "=", chosen)
      .executeTakeFirstOrThrow();
  await eventually(async () => (await jobOf()).state === "failed", 20_000, "the refused one failed out");
  const job = await jobOf();
  assert.equal(job.attempts, 3, "on its own budget");
  assert.match(String(job.last_error), /MBS acknowledge answered 403: "Forbidden"/);
  assert.equal(sim.acknowledgements().get(chosen), undefined);
  const states = await service.ctx.db
    .selectFrom("received_invoices")
    .select(["irn", "acknowledgement"])
    .execute();
  assert.deepEqual(Object.fromEntries(states.map((s) => [s.irn, s.acknowledgement])), {
    [chosen]: "failed",
    [other]: "sent",
  });
  assert.equal(await holdRows(service), 0, "no hold row");
  // Nor is any other tenant's delivery paused.
  const doc = invoiceFor(fixture("invoice-minimal", seller), seller);
  const res = await signTransmit(service, seller.headers, doc);
  assert.equal(res.statusCode, 200, res.body);
  assert.ok(waf.seen.some((s) => `${s.method} ${s.path}` === PROBE && s.status === 200));
});
