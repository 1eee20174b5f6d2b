import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { RESOURCES_VARIABLE } from "../../../src/cli/simulate.ts";
import { isLoopback, startMbsSimulator } from "../../../src/simulators/mbs/server.ts";
import { cli, failed, TIMEOUT } from "../../cli/run.ts";
import { ISIC_JSON, type Json, SHARED_DIR } from "../../helpers.ts";
import { call, invoiceFor, runningSimulator, UUID } from "./harness.ts";

test("simulate mbs prints one JSON line, answers with the printed credentials, and exits 0 on SIGTERM", {
  timeout: TIMEOUT,
}, async (t) => {
  const { line, printed, out, stop } = await runningSimulator(t, [
    "--seed",
    "7",
    "--rules",
    "confirm_unregistered=400",
  ]);
  assert.deepEqual(Object.keys(printed), ["url", "api_key", "api_secret", "taxpayers"]);
  assert.match(String(printed.url), /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(typeof printed.api_key, "string");
  assert.equal(typeof printed.api_secret, "string");
  const taxpayers = printed.taxpayers as Json[];
  assert.equal(taxpayers.length, 4);
  for (const tp of taxpayers) {
    assert.deepEqual(Object.keys(tp), [
      "entity_id",
      "business_id",
      "service_id",
      "tin",
      "name",
      "irn_template",
    ]);
    assert.match(String(tp.entity_id), UUID);
    assert.match(String(tp.business_id), UUID);
    assert.notEqual(tp.entity_id, tp.business_id);
    assert.equal(tp.irn_template, `{{invoice_id(e.g:INV00XXX)}}-${tp.service_id}-{{YYYYMMDD(e.g:20250629)}}`);
    assert.match(String(tp.service_id), /^[A-Z0-9]{8}$/);
    assert.match(String(tp.tin), /^\d{8}-\d{4}$/);
    assert.ok(String(tp.name).length > 0);
  }

  // The same seed gives the same credentials and taxpayers, in process too.
  const twin = await startMbsSimulator({ seed: 7 });
  try {
    assert.deepEqual(
      { api_key: twin.api_key, api_secret: twin.api_secret, taxpayers: twin.taxpayers },
      { api_key: printed.api_key, api_secret: printed.api_secret, taxpayers },
    );
  } finally {
    await twin.close();
  }

  const sim = {
    url: String(printed.url),
    api_key: String(printed.api_key),
    api_secret: String(printed.api_secret),
  };
  const health = await fetch(`${sim.url}/api`);
  assert.deepEqual(await health.json(), { healthy: true });
  const tp = taxpayers[0] as { business_id: string; service_id: string };
  const unknown = await call(sim, "GET", `/api/v1/invoice/confirm/INV9-${tp.service_id}-20261115`);
  assert.equal(unknown.status, 400, "--rules took effect");
  const sign = await call(sim, "POST", "/api/v1/invoice/sign", { body: invoiceFor(tp) });
  assert.equal(sign.status, 200, JSON.stringify(sign.body));

  const [code, signal] = await stop();
  assert.equal(signal, null, out.stderr);
  assert.equal(code, 0, out.stderr);
  assert.equal(out.stdout, `${line}\n`, "exactly one line on stdout");
  // Said on stderr, as diagnostics are: the lists a connector meets here are not the authority's.
  assert.match(
    out.stderr,
    /^einvoice: simulate mbs: reference lists built in \(countries 249, currencies 119, /m,
  );
  await assert.rejects(fetch(`${sim.url}/api`), "closed");
});

test("simulate mbs refuses a bad --faults or --rules, naming the part, a bad --port and a bad --services-codes", {
  timeout: TIMEOUT,
}, async () => {
  failed(
    await cli(["simulate", "mbs", "--port", "0", "--faults", "transient=0.1,drop=1.5"], {}),
    /invalid --faults part "drop=1\.5"/,
  );
  failed(await cli(["simulate", "mbs", "--port", "0", "--faults", "down=9-3"], {}), /"down=9-3"/);
  failed(await cli(["simulate", "mbs", "--port", "http"], {}), /invalid --port "http"/);
  failed(await cli(["simulate", "mbs", "--port", "0", "--taxpayers", "0"], {}), /taxpayers/);
  failed(
    await cli(["simulate", "mbs", "--port", "0", "--rules", "canceled=off,price_unit_limit=3"], {}),
    /invalid --rules part "price_unit_limit=3": price_unit_limit is on or off/,
  );
  failed(await cli(["simulate", "mbs", "--port", "0", "--rules", "strict=on"], {}), /unknown rule strict/);
  failed(
    await cli(["simulate", "mbs", "--port", "0", "--services-codes", "/nonexistent/isic.json"], {}),
    /services codes file \/nonexistent\/isic\.json/,
  );
});

test("without a seed the APP key and secret are random (taxpayers still follow the default seed 1); the same seed gives the same", async () => {
  // One taxpayer each: its key pair is most of what a start costs.
  const [a, b, one, sevenA, sevenB] = await Promise.all([
    startMbsSimulator({ taxpayers: 1 }),
    startMbsSimulator({ taxpayers: 1 }),
    startMbsSimulator({ taxpayers: 1, seed: 1 }),
    startMbsSimulator({ taxpayers: 1, seed: 7 }),
    startMbsSimulator({ taxpayers: 1, seed: 7 }),
  ]);
  try {
    assert.notEqual(a.api_key, b.api_key, "two starts without a seed: two keys");
    assert.notEqual(a.api_secret, b.api_secret, "two starts without a seed: two secrets");
    for (const sim of [a, b]) {
      assert.notEqual(sim.api_key, one.api_key, "not the key of seed 1, the default of the rest");
      assert.notEqual(sim.api_secret, one.api_secret);
      assert.match(sim.api_key, UUID);
      assert.match(sim.api_secret, /^[0-9a-f]{64}$/);
      assert.deepEqual(sim.taxpayers, one.taxpayers, "the taxpayers follow seed 1 as before");
    }
    assert.deepEqual(
      { api_key: sevenA.api_key, api_secret: sevenA.api_secret, taxpayers: sevenA.taxpayers },
      { api_key: sevenB.api_key, api_secret: sevenB.api_secret, taxpayers: sevenB.taxpayers },
    );
    // Each answers with its own credentials only.
    const own = await call(a, "GET", "/api/v1/entity");
    assert.equal(own.status, 200, JSON.stringify(own.body));
    const crossed = await call(
      { url: a.url, api_key: b.api_key, api_secret: b.api_secret },
      "GET",
      "/api/v1/entity",
    );
    assert.equal(crossed.status, 400);
    assert.equal((crossed.body.error as Json).public_message, "unable to validate api key");
  } finally {
    await Promise.all([a, b, one, sevenA, sevenB].map((sim) => sim.close()));
  }
});

test("the simulator listens on loopback only unless --expose (expose: true) says otherwise", {
  timeout: TIMEOUT,
}, async () => {
  for (const host of ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost", "LOCALHOST"])
    assert.ok(isLoopback(host), host);
  for (const host of [
    "0.0.0.0",
    "::",
    "10.0.0.5",
    "192.168.1.10",
    "example.com",
    "127.0.0.1.example.com",
    "",
  ])
    assert.ok(!isLoopback(host), host);

  await assert.rejects(
    startMbsSimulator({ host: "0.0.0.0" }),
    /refusing to listen on 0\.0\.0\.0: .*--expose/,
  );
  await assert.rejects(startMbsSimulator({ host: "::", seed: 3 }), /--expose/);
  const exposed = await startMbsSimulator({ host: "0.0.0.0", expose: true, taxpayers: 1 });
  try {
    const health = await fetch(`${exposed.url}/api`);
    assert.deepEqual(await health.json(), { healthy: true });
  } finally {
    await exposed.close();
  }

  failed(
    await cli(["simulate", "mbs", "--port", "0", "--host", "0.0.0.0"], {}),
    /refusing to listen on 0\.0\.0\.0: .*pass --expose/,
  );
});

test("simulate mbs --inbound n prints the invoices from other APPs' sellers, and pull lists them; a bad n is refused", {
  timeout: TIMEOUT,
}, async (t) => {
  const { printed, out, stop } = await runningSimulator(t, ["--seed", "7", "--inbound", "5"]);
  assert.deepEqual(Object.keys(printed), ["url", "api_key", "api_secret", "taxpayers", "inbound"]);
  const inbound = printed.inbound as Json[];
  assert.equal(inbound.length, 5);
  const buyers = new Set((printed.taxpayers as Json[]).map((tp) => tp.tin));
  for (const entry of inbound) {
    assert.deepEqual(Object.keys(entry), [
      "irn",
      "business_id",
      "supplier_tin",
      "buyer_tin",
      "transmitted_at",
    ]);
    assert.match(String(entry.irn), /^[A-Z0-9]+-[0-9A-F]{8}-\d{8}$/);
    assert.ok(buyers.has(entry.buyer_tin), "to one of the printed taxpayers");
    assert.ok(!buyers.has(entry.supplier_tin), "from a seller elsewhere");
  }
  const sim = {
    url: String(printed.url),
    api_key: String(printed.api_key),
    api_secret: String(printed.api_secret),
  };
  const pulled = await call(sim, "GET", "/api/v1/invoice/transmit/pull?confirmed=false");
  assert.equal(pulled.status, 200);
  assert.deepEqual((pulled.body.data as Json[]).map((r) => r.irn).sort(), inbound.map((e) => e.irn).sort());
  const [code] = await stop();
  assert.equal(code, 0, out.stderr);

  failed(await cli(["simulate", "mbs", "--port", "0", "--inbound", "10001"], {}), /invalid inbound 10001/);
  failed(await cli(["simulate", "mbs", "--port", "0", "--inbound", "many"], {}), /invalid --inbound "many"/);
});

test("simulate mbs --resources DIR (or its variable) serves the authority's lists and says so; a bad folder fails the start", {
  timeout: TIMEOUT,
}, async (t) => {
  const dir = path.join(SHARED_DIR, "data", "mbs");
  const file = (list: string) =>
    JSON.parse(fs.readFileSync(path.join(dir, `${list}.json`), "utf8")) as Json[];
  for (const [how, args, env] of [
    ["option", ["--resources", dir], { [RESOURCES_VARIABLE]: path.join(os.tmpdir(), "not-this-one") }],
    ["variable", [], { [RESOURCES_VARIABLE]: dir }],
  ] as const) {
    const { line, printed, out, stop } = await runningSimulator(t, [...args], env);
    const sim = { url: String(printed.url), api_key: "", api_secret: "" };
    for (const list of ["currencies", "vat-exemptions"]) {
      const reply = await call(sim, "GET", `/api/v1/invoice/resources/${list}`, { auth: false });
      assert.deepEqual(reply.body, { code: 200, data: file(list) }, `${how}: ${list}`);
    }
    const [code] = await stop();
    assert.equal(code, 0, out.stderr);
    assert.equal(out.stdout, `${line}\n`, `${how}: stdout is still the one line`);
    assert.ok(
      out.stderr.includes(
        `einvoice: simulate mbs: reference lists from ${dir} (countries 249, currencies 118, `,
      ),
      `${how}: ${out.stderr}`,
    );
  }

  const empty = fs.mkdtempSync(path.join(os.tmpdir(), "mbs-resources-"));
  t.after(() => fs.rmSync(empty, { recursive: true, force: true }));
  failed(
    await cli(["simulate", "mbs", "--port", "0", "--resources", empty], {}),
    /einvoice: MBS resources folder .*: countries\.json is missing/,
  );
  failed(
    await cli(["simulate", "mbs", "--port", "0"], { [RESOURCES_VARIABLE]: path.join(empty, "none") }),
    /MBS resources folder .*none is not a folder/,
  );
  failed(await cli(["simulate", "mbs", "--port", "0", "--resources", ""], {}), /invalid --resources ""/);
  failed(
    await cli(["simulate", "mbs", "--port", "0", "--resources", dir, "--services-codes", ISIC_JSON], {}),
    /not both/,
  );
});
