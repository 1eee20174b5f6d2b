import assert from "node:assert/strict";
import { test } from "node:test";
import {
  BAD_CREDENTIAL,
  DUPLICATE_IRN,
  INVOICE_NOT_FOUND,
  NO_ROUTE,
  NOT_ENABLED,
  PARTIAL_TRANSMIT,
  SERVER_ERRORS,
  TRANSIENT_MESSAGES,
  VALIDATION_FAILED,
} from "../../../src/simulators/mbs/envelopes.ts";
import { FaultSpecError, parseFaults } from "../../../src/simulators/mbs/faults.ts";
import { FAULT_HEADER, type MbsSimulator, startMbsSimulator } from "../../../src/simulators/mbs/server.ts";
import type { Json } from "../../helpers.ts";
import { call, data, failure, first, invoiceFor, refused, signed, simulator } from "./harness.ts";

const TRANSIENT = /^(try again later|unable to complete this operation at this time)$/;

test("the texts the spec fixes are the simulator's", () => {
  assert.deepEqual(
    [...TRANSIENT_MESSAGES],
    ["try again later", "unable to complete this operation at this time"],
  );
  assert.equal(
    PARTIAL_TRANSMIT,
    "Invoice is Signed but could not transmit. Accounting parties APP might be offline or busy",
  );
  assert.equal(BAD_CREDENTIAL, "unable to validate api key");
  assert.equal(VALIDATION_FAILED, "validation failed: unable to process your request");
  assert.equal(NO_ROUTE, "no route found for this path. kindly check your request and try again");
});

test("the fault spec: every name, windows and slow_ms; a bad part is named in the error", async () => {
  assert.deepEqual(
    parseFaults(
      "transient=0.1, slow=0.05,5xx=.2,drop=0,duplicate=1,not_enabled=0.5,partial=1.0,credential=0.01,down=5-10+30.5-40,slow_ms=250",
    ),
    {
      rates: {
        transient: 0.1,
        slow: 0.05,
        "5xx": 0.2,
        drop: 0,
        duplicate: 1,
        not_enabled: 0.5,
        partial: 1,
        credential: 0.01,
      },
      down: [
        { from: 5, to: 10 },
        { from: 30.5, to: 40 },
      ],
      slowMs: 250,
    },
  );
  assert.deepEqual(parseFaults(""), { rates: {}, down: [], slowMs: 2000 });
  assert.deepEqual(parseFaults(undefined), { rates: {}, down: [], slowMs: 2000 });
  const bad: [string, RegExp][] = [
    ["transient=2", /"transient=2": a probability is a number in \[0,1\]/],
    ["transient=-0.1", /"transient=-0.1"/],
    ["transient=abc", /"transient=abc"/],
    ["flaky=0.1", /"flaky=0.1": unknown name flaky/],
    ["transient", /"transient": expected name=value/],
    ["transient=0.1,,slow=0.1", /"": expected name=value/],
    ["slow=0.1,slow=0.2", /"slow=0.2": slow is given twice/],
    ["down=10-5", /"down=10-5": window 10-5 ends before it starts/],
    ["down=5", /"down=5": a window is A-B/],
    ["down=1-2+x-3", /"down=1-2\+x-3"/],
    ["slow_ms=fast", /"slow_ms=fast": slow_ms is a whole number/],
    ["a=b=c", /"a=b=c": expected name=value/],
  ];
  for (const [spec, message] of bad) assert.throws(() => parseFaults(spec), message, spec);
  assert.throws(() => parseFaults("x=1"), FaultSpecError);
  await assert.rejects(startMbsSimulator({ faults: "transient=7" }), /"transient=7"/);
});

/** The effect of a sign: is the IRN registered? */
const registered = async (sim: MbsSimulator, irn: unknown) =>
  (await call(sim, "GET", `/api/v1/invoice/confirm/${irn}`)).status === 200;

const forced = (fault: string) => ({ headers: { [FAULT_HEADER]: fault } });

test("each fault class forced by the header, with or without its effect as documented", async (t) => {
  const sim = await simulator(t, { faults: "slow_ms=150" });
  const tp = first(sim);
  const doc = (n: string) => invoiceFor(tp, n);
  const sign = (d: Json, fault: string) =>
    call(sim, "POST", "/api/v1/invoice/sign", { body: d, ...forced(fault) });

  failure(await sign(doc("A1"), "transient"), 400, TRANSIENT);
  assert.equal(await registered(sim, doc("A1").irn), false, "a transient answer has no effect");

  const five = await sign(doc("A2"), "5xx");
  assert.ok([500, 502, 503].includes(five.status));
  failure(five, five.status, SERVER_ERRORS[five.status as 500]);
  assert.equal(await registered(sim, doc("A2").irn), false);

  failure(await call(sim, "GET", "/api/v1/entity", forced("credential")), 400, BAD_CREDENTIAL);
  failure(await call(sim, "GET", "/api/v1/entity", forced("down")), 503, SERVER_ERRORS[503]);

  await assert.rejects(sign(doc("A3"), "drop"), TypeError, "the connection is cut without an answer");
  assert.equal(await registered(sim, doc("A3").irn), true, "a dropped sign took effect");

  const started = Date.now();
  assert.equal((await sign(doc("A4"), "slow")).status, 201);
  assert.ok(Date.now() - started >= 140, "answered after slow_ms");

  failure(await sign(doc("A5"), "duplicate"), 400, DUPLICATE_IRN);
  assert.equal(await registered(sim, doc("A5").irn), true, "registered although answered as a duplicate");

  const irn = await signed(sim, doc("A6"));
  const transmit = (fault: string) => call(sim, "POST", `/api/v1/invoice/transmit/${irn}`, forced(fault));
  const notEnabled = failure(await transmit("not_enabled"), 400, NOT_ENABLED);
  assert.equal(notEnabled.sub_message, "NOT_ENABLED");
  // The spec's text, written out: a client matches it word for word.
  failure(
    await transmit("partial"),
    400,
    "Invoice is Signed but could not transmit. Accounting parties APP might be offline or busy",
  );
  assert.equal((sim.invoice(irn) as Json).transmitted, false, "neither transmitted the invoice");

  // A class the endpoint does not take is refused, not ignored.
  const unknown = failure(
    await call(sim, "GET", `/api/v1/invoice/confirm/${irn}`, forced("partial")),
    400,
    "unknown simulator fault",
  );
  assert.match(
    String(unknown.details),
    /x-simulator-fault must be one of credential, 5xx, transient, drop, slow, down on GET/,
  );
  failure(await sign(doc("A7"), "flaky"), 400, "unknown simulator fault");

  assert.deepEqual(sim.faultCounts(), {
    transient: 1,
    "5xx": 1,
    credential: 1,
    down: 1,
    drop: 1,
    slow: 1,
    duplicate: 1,
    not_enabled: 1,
    partial: 1,
  });
  assert.deepEqual([...sim.registrations().values()], [1, 1, 1, 1], "A3, A4, A5, A6: each registered once");
});

test("an invoice number's prefix faults the first call of its endpoint only, so a retry succeeds", async (t) => {
  const sim = await simulator(t, { faults: "slow_ms=120" });
  const tp = first(sim);
  const sign = (d: Json) => call(sim, "POST", "/api/v1/invoice/sign", { body: d });

  const transient = invoiceFor(tp, "TRANSIENT001");
  data(await call(sim, "POST", "/api/v1/invoice/validate", { body: transient }), 200);
  failure(await sign(transient), 400, TRANSIENT);
  assert.equal((await sign(transient)).status, 201);

  const server = invoiceFor(tp, "SERVERERROR001");
  assert.ok((await sign(server)).status >= 500);
  assert.equal((await sign(server)).status, 201);

  const drop = invoiceFor(tp, "DROP001");
  await assert.rejects(sign(drop), TypeError);
  assert.equal(await registered(sim, drop.irn), true);
  failure(await sign(drop), 400, DUPLICATE_IRN);

  const slow = invoiceFor(tp, "SLOW001");
  const started = Date.now();
  assert.equal((await sign(slow)).status, 201);
  assert.ok(Date.now() - started >= 110);

  const duplicate = invoiceFor(tp, "DUPLICATE001");
  failure(await sign(duplicate), 400, DUPLICATE_IRN);
  assert.equal(await registered(sim, duplicate.irn), true);

  const partial = await signed(sim, invoiceFor(tp, "PARTIAL001"));
  failure(await call(sim, "POST", `/api/v1/invoice/transmit/${partial}`), 400, PARTIAL_TRANSMIT);
  data(await call(sim, "POST", `/api/v1/invoice/transmit/${partial}`));

  const notEnabled = await signed(sim, invoiceFor(tp, "NOTENABLED001"));
  for (let i = 0; i < 2; i++) {
    const error = failure(
      await call(sim, "POST", `/api/v1/invoice/transmit/${notEnabled}`),
      400,
      NOT_ENABLED,
    );
    assert.equal(error.sub_message, "NOT_ENABLED");
  }
  data(await call(sim, "POST", `/api/v1/invoice/transmit/${notEnabled}`));

  assert.deepEqual(sim.faultCounts(), {
    transient: 1,
    "5xx": 1,
    drop: 1,
    slow: 1,
    duplicate: 1,
    partial: 1,
    not_enabled: 2,
  });
  assert.ok([...sim.registrations().values()].every((n) => n === 1));
});

test("REJECT fails validate and sign every time, as a validation error", async (t) => {
  const sim = await simulator(t);
  const doc = invoiceFor(first(sim), "REJECT001");
  for (let i = 0; i < 3; i++) {
    for (const url of ["/api/v1/invoice/validate", "/api/v1/invoice/sign"]) {
      refused(await call(sim, "POST", url, { body: doc }), "invoicerequest.invoice.invoiceline is invalid");
    }
  }
  failure(await call(sim, "GET", `/api/v1/invoice/confirm/${doc.irn}`), 404, INVOICE_NOT_FOUND);
  assert.deepEqual(sim.faultCounts(), { reject: 6 });
});
