import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import {
  BAD_CREDENTIAL,
  NO_ROUTE,
  NOT_ENABLED,
  PARTIAL_TRANSMIT,
  SERVER_ERRORS,
  WEBHOOK_NOT_SETUP,
} from "../../../src/simulators/mbs/envelopes.ts";
import { type MbsSimulator, startMbsSimulator } from "../../../src/simulators/mbs/server.ts";
import type { Json } from "../../helpers.ts";
import { call, data, failure, first, invoiceFor, signed, simulator, tryLater } from "./harness.ts";

/** One call's outcome as a short text: "404" when no fault hit it, else the status and public message. */
async function outcome(sim: MbsSimulator, url: string): Promise<string> {
  const reply = await call(sim, "GET", url);
  return reply.status === 404 ? "404" : `${reply.status} ${(reply.body.error as Json).public_message}`;
}

/** `calls` confirms of distinct unknown IRNs, then `calls / 4` of one IRN, on a fresh simulator. */
async function run(seed: number, faults: string, calls = 400) {
  const sim = await startMbsSimulator({ seed, faults });
  try {
    const distinct: string[] = [];
    for (let i = 0; i < calls; i++)
      distinct.push(await outcome(sim, `/api/v1/invoice/confirm/INV${i}-AAAA1111-20261115`));
    const repeated: string[] = [];
    for (let i = 0; i < calls / 4; i++)
      repeated.push(await outcome(sim, "/api/v1/invoice/confirm/SAME-AAAA1111-20261115"));
    return { distinct, repeated, counts: sim.faultCounts() };
  } finally {
    await sim.close();
  }
}

test("rates: the same seed and requests give the same faults; another seed gives others; about P of calls", async () => {
  const a = await run(5, "transient=0.3");
  const b = await run(5, "transient=0.3");
  const c = await run(6, "transient=0.3");
  assert.deepEqual(b, a, "same seed, same requests: same decisions");
  assert.notDeepEqual(c.distinct, a.distinct, "another seed decides otherwise");
  const hit = a.distinct.filter((o) => o !== "404").length;
  assert.ok(hit >= 90 && hit <= 150, `about 30% of 400 calls: ${hit}`);
  assert.equal(a.counts.transient, hit + a.repeated.filter((o) => o !== "404").length);
  assert.ok(a.distinct.every((o) => o === "404" || /^(408|429|500|502|503|504) /.test(o)));
  assert.deepEqual(
    [...new Set(a.distinct.map((o) => o.slice(0, 3)))].sort(),
    ["404", "408", "429", "500", "502", "503", "504"],
    "every transient status appears",
  );
  // The n-th call of one key draws anew: a retry of a faulted request can succeed.
  const repeatedHits = a.repeated.filter((o) => o !== "404").length;
  assert.ok(
    repeatedHits > 10 && repeatedHits < 50,
    `repeats of one IRN fault independently: ${repeatedHits}/100`,
  );

  const mixed = await run(5, "5xx=0.2,try_later=1", 200);
  const statuses = new Set(mixed.distinct.map((o) => o.slice(0, 3)));
  assert.deepEqual([...statuses].sort(), ["404", "500", "502", "503"], "try_later is not a confirm fault");
});

test("decisions do not depend on how requests for different keys interleave", async () => {
  const keys = ["INVX-AAAA1111-20261115", "INVY-AAAA1111-20261115"];
  const order = async (interleaved: boolean) => {
    const sim = await startMbsSimulator({ seed: 9, faults: "transient=0.4,5xx=0.1" });
    const seen: Record<string, string[]> = { [keys[0] as string]: [], [keys[1] as string]: [] };
    try {
      const sequence = interleaved
        ? Array.from({ length: 60 }, (_, i) => keys[i % 2] as string)
        : [...Array(30).fill(keys[0]), ...Array(30).fill(keys[1])];
      for (const key of sequence) seen[key]?.push(await outcome(sim, `/api/v1/invoice/confirm/${key}`));
    } finally {
      await sim.close();
    }
    return seen;
  };
  const serial = await order(false);
  assert.deepEqual(await order(true), serial);
  assert.ok(
    Object.values(serial).every((list) => list.some((o) => o !== "404")),
    "some faults were drawn",
  );
});

test("each rate class applies to the endpoints it is documented for", async (t) => {
  const sim = await simulator(t, { faults: "credential=1" });
  const tp = first(sim);
  failure(await call(sim, "GET", "/api/v1/entity"), 400, BAD_CREDENTIAL);
  assert.equal((await call(sim, "GET", "/api", { auth: false })).status, 200, "health takes no rate fault");
  data(await call(sim, "GET", "/api/v1/invoice/resources/states", { auth: false }));

  sim.setFaults("5xx=1");
  const five = await call(sim, "POST", "/api/v1/invoice/sign", { body: invoiceFor(tp, "R1") });
  assert.ok([500, 502, 503].includes(five.status));

  sim.setFaults("drop=1");
  await assert.rejects(call(sim, "POST", "/api/v1/invoice/sign", { body: invoiceFor(tp, "R1") }), TypeError);

  sim.setFaults("slow=1,slow_ms=60");
  const started = Date.now();
  data(await call(sim, "GET", `/api/v1/invoice/confirm/${invoiceFor(tp, "R1").irn}`));
  assert.ok(Date.now() - started >= 55);

  // try_later is for validate and sign; duplicate for sign only; not_enabled, partial and no_webhook for transmit only.
  sim.setFaults("try_later=1");
  tryLater(await call(sim, "POST", "/api/v1/invoice/validate", { body: invoiceFor(tp, "R2") }));
  tryLater(await call(sim, "POST", "/api/v1/invoice/sign", { body: invoiceFor(tp, "R2") }));
  sim.setFaults("duplicate=1,not_enabled=1,partial=1,no_webhook=1");
  data(await call(sim, "POST", "/api/v1/invoice/validate", { body: invoiceFor(tp, "R2") }));
  tryLater(await call(sim, "POST", "/api/v1/invoice/sign", { body: invoiceFor(tp, "R2") }));
  const irn = String(invoiceFor(tp, "R2").irn);
  data(await call(sim, "GET", `/api/v1/invoice/confirm/${irn}`));
  failure(await call(sim, "POST", `/api/v1/invoice/transmit/${irn}`), 400, NOT_ENABLED);
  sim.setFaults("partial=1,no_webhook=1");
  failure(await call(sim, "POST", `/api/v1/invoice/transmit/${irn}`), 400, PARTIAL_TRANSMIT);
  sim.setFaults("no_webhook=1");
  failure(await call(sim, "POST", `/api/v1/invoice/transmit/${irn}`), 400, WEBHOOK_NOT_SETUP);
  sim.setFaults("");
  data(await call(sim, "POST", `/api/v1/invoice/transmit/${irn}`));

  assert.deepEqual(sim.faultCounts(), {
    credential: 1,
    "5xx": 1,
    drop: 1,
    slow: 1,
    try_later: 2,
    duplicate: 1,
    not_enabled: 1,
    partial: 1,
    no_webhook: 1,
  });
  assert.deepEqual([...sim.registrations()].sort(), [
    [invoiceFor(tp, "R1").irn, 1],
    [irn, 1],
  ]);
  assert.throws(() => sim.setFaults("drop=2"), /"drop=2"/);
  data(await call(sim, "GET", "/api/v1/entity"), 200);
});

test("downtime windows: every call answers 503 inside them, and nothing takes effect", async (t) => {
  // Windows of whole seconds with half a second of margin: a busy machine must not move a call across an edge.
  const sim = await simulator(t, { faults: "down=0-2" });
  const tp = first(sim);
  const down = async (method: string, url: string, body?: unknown) => {
    const reply = await call(sim, method, url, {
      ...(body === undefined ? {} : { body }),
      auth: url !== "/api",
    });
    failure(reply, 503, SERVER_ERRORS[503]);
  };
  await down("GET", "/api");
  await down("GET", "/api/v1/invoice/resources/states");
  await down("POST", "/api/v1/invoice/sign", invoiceFor(tp));
  await down("GET", "/api/v1/no/such/path");
  await sleep(2100);
  assert.equal((await call(sim, "GET", "/api", { auth: false })).status, 200);
  const after = await call(sim, "GET", "/api/v1/no/such/path");
  assert.deepEqual(after.body, { code: 404, data: null, message: NO_ROUTE });
  assert.equal(sim.registrations().size, 0);
  assert.equal(sim.faultCounts().down, 4);

  // Windows count from the moment a spec takes effect.
  sim.setFaults("down=1-2+3-4");
  const health = async () => (await call(sim, "GET", "/api", { auth: false })).status;
  const at = Date.now();
  const until = (ms: number) => sleep(Math.max(0, at + ms - Date.now()));
  assert.equal(await health(), 200);
  await until(1500);
  assert.equal(await health(), 503);
  await until(2500);
  assert.equal(await health(), 200);
  await until(3500);
  assert.equal(await health(), 503);
  await until(4500);
  assert.equal(await health(), 200);
  await signed(sim, invoiceFor(tp));
});
