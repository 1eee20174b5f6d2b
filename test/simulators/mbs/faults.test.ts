import assert from "node:assert/strict";
import { test } from "node:test";
import {
  BAD_CREDENTIAL,
  INVOICE_NOT_FOUND,
  NO_ROUTE,
  NOT_ENABLED,
  PARTIAL_TRANSMIT,
  SERVER_ERRORS,
  TRY_LATER,
  VALIDATION_FAILED,
  WEBHOOK_NOT_SETUP,
} from "../../../src/simulators/mbs/envelopes.ts";
import { FaultSpecError, parseFaults, RATE_CLASSES } from "../../../src/simulators/mbs/faults.ts";
import { FAULT_HEADER, type MbsSimulator, startMbsSimulator } from "../../../src/simulators/mbs/server.ts";
import type { Json } from "../../helpers.ts";
import {
  call,
  data,
  failure,
  first,
  invoiceFor,
  type Reply,
  refused,
  signed,
  simulator,
  tryLater,
} from "./harness.ts";

/** [client] A status-transient answer: 408, 429 or a 5xx, in the error envelope. */
function transient(reply: Reply): void {
  assert.ok([408, 429, 500, 502, 503, 504].includes(reply.status), JSON.stringify(reply));
  failure(reply, reply.status, SERVER_ERRORS[reply.status as 408]);
}

test("the texts the spec fixes are the simulator's, and the fault class names are the contract", () => {
  assert.equal(
    PARTIAL_TRANSMIT,
    "Invoice is Signed but could not transmit. Accounting parties APP might be offline or busy",
  );
  assert.equal(BAD_CREDENTIAL, "unable to validate api key");
  assert.equal(
    VALIDATION_FAILED,
    "validation failed: we are unable to process your request. also confirm this is not a duplicate request",
  );
  assert.equal(TRY_LATER, "unable to complete this operation at this time, kindly try again later");
  assert.equal(WEBHOOK_NOT_SETUP, "webhook url is not setup");
  assert.equal(NO_ROUTE, "no route found for this path. kindly check your request and try again");
  assert.deepEqual([...RATE_CLASSES].sort(), [
    "5xx",
    "credential",
    "drop",
    "duplicate",
    "no_webhook",
    "not_enabled",
    "partial",
    "slow",
    "transient",
    "try_later",
  ]);
});

test("the fault spec: every name, windows and slow_ms; a bad part is named in the error", async () => {
  assert.deepEqual(
    parseFaults(
      "transient=0.1, slow=0.05,5xx=.2,drop=0,duplicate=1,not_enabled=0.5,partial=1.0,credential=0.01,try_later=0.3,no_webhook=0.2,down=5-10+30.5-40,slow_ms=250",
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
        try_later: 0.3,
        no_webhook: 0.2,
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

  transient(await sign(doc("A1"), "transient"));
  assert.equal(await registered(sim, doc("A1").irn), false, "a transient answer has no effect");

  const five = await sign(doc("A2"), "5xx");
  assert.ok([500, 502, 503].includes(five.status));
  failure(five, five.status, SERVER_ERRORS[five.status as 500]);
  assert.equal(await registered(sim, doc("A2").irn), false);

  const credential = failure(
    await call(sim, "GET", "/api/v1/entity", forced("credential")),
    400,
    BAD_CREDENTIAL,
  );
  assert.equal(credential.handler, "handler");
  failure(await call(sim, "GET", "/api/v1/entity", forced("down")), 503, SERVER_ERRORS[503]);

  await assert.rejects(sign(doc("A3"), "drop"), TypeError, "the connection is cut without an answer");
  assert.equal(await registered(sim, doc("A3").irn), true, "a dropped sign took effect");

  const started = Date.now();
  assert.equal((await sign(doc("A4"), "slow")).status, 200);
  assert.ok(Date.now() - started >= 140, "answered after slow_ms");

  tryLater(await sign(doc("A5"), "duplicate"));
  assert.equal(await registered(sim, doc("A5").irn), true, "registered although answered as a duplicate");

  // try_later: the same answer, nothing registered; on validate too.
  tryLater(await sign(doc("A8"), "try_later"));
  assert.equal(await registered(sim, doc("A8").irn), false, "try_later registered nothing");
  tryLater(await call(sim, "POST", "/api/v1/invoice/validate", { body: doc("A8"), ...forced("try_later") }));

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
  const webhook = failure(await transmit("no_webhook"), 400, "webhook url is not setup");
  assert.equal(webhook.handler, "invoice_actions");
  assert.equal((sim.invoice(irn) as Json).transmitted, false, "none of them transmitted the invoice");

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
  failure(await sign(doc("A7"), "no_webhook"), 400, "unknown simulator fault");

  assert.deepEqual(sim.faultCounts(), {
    transient: 1,
    "5xx": 1,
    credential: 1,
    down: 1,
    drop: 1,
    slow: 1,
    duplicate: 1,
    try_later: 2,
    not_enabled: 1,
    partial: 1,
    no_webhook: 1,
  });
  assert.deepEqual([...sim.registrations().values()], [1, 1, 1, 1], "A3, A4, A5, A6: each registered once");
  assert.deepEqual([...sim.refusedSigns()], [], "faults are not refused signs");
});

test("an invoice number's prefix faults the first call(s) of its endpoint only, so a retry succeeds", async (t) => {
  const sim = await simulator(t, { faults: "slow_ms=120" });
  const tp = first(sim);
  const sign = (d: Json) => call(sim, "POST", "/api/v1/invoice/sign", { body: d });

  const transientDoc = invoiceFor(tp, "TRANSIENT001");
  data(await call(sim, "POST", "/api/v1/invoice/validate", { body: transientDoc }));
  transient(await sign(transientDoc));
  assert.equal((await sign(transientDoc)).status, 200);

  const server = invoiceFor(tp, "SERVERERROR001");
  assert.ok((await sign(server)).status >= 500);
  assert.equal((await sign(server)).status, 200);

  const drop = invoiceFor(tp, "DROP001");
  await assert.rejects(sign(drop), TypeError);
  assert.equal(await registered(sim, drop.irn), true);
  tryLater(await sign(drop));

  const slow = invoiceFor(tp, "SLOW001");
  const started = Date.now();
  assert.equal((await sign(slow)).status, 200);
  assert.ok(Date.now() - started >= 110);

  const duplicate = invoiceFor(tp, "DUPLICATE001");
  tryLater(await sign(duplicate));
  assert.equal(await registered(sim, duplicate.irn), true);

  // TRYLATER: the duplicate's answer on the first sign, nothing registered; the next sign registers.
  const later = invoiceFor(tp, "TRYLATER001");
  tryLater(await sign(later));
  assert.equal(await registered(sim, later.irn), false);
  assert.equal((await sign(later)).status, 200);

  const partial = await signed(sim, invoiceFor(tp, "PARTIAL001"));
  failure(await call(sim, "POST", `/api/v1/invoice/transmit/${partial}`), 400, PARTIAL_TRANSMIT);
  data(await call(sim, "POST", `/api/v1/invoice/transmit/${partial}`));

  for (const [word, text] of [
    ["NOTENABLED001", NOT_ENABLED],
    ["NOWEBHOOK001", WEBHOOK_NOT_SETUP],
  ] as const) {
    const irn = await signed(sim, invoiceFor(tp, word));
    for (let i = 0; i < 2; i++)
      failure(await call(sim, "POST", `/api/v1/invoice/transmit/${irn}`), 400, text);
    data(await call(sim, "POST", `/api/v1/invoice/transmit/${irn}`));
  }

  assert.deepEqual(sim.faultCounts(), {
    transient: 1,
    "5xx": 1,
    drop: 1,
    slow: 1,
    duplicate: 1,
    try_later: 1,
    partial: 1,
    not_enabled: 2,
    no_webhook: 2,
  });
  assert.ok([...sim.registrations().values()].every((n) => n === 1));
  assert.deepEqual(
    [...sim.refusedSigns()],
    [[drop.irn, 1]],
    "only the real repeat (after the dropped answer) is a refused sign",
  );
});

test("REJECT fails validate and sign every time, with a real refusal text", async (t) => {
  const sim = await simulator(t);
  const doc = invoiceFor(first(sim), "REJECT001");
  for (let i = 0; i < 3; i++) {
    for (const url of ["/api/v1/invoice/validate", "/api/v1/invoice/sign"]) {
      refused(
        await call(sim, "POST", url, { body: doc }),
        "invoicerequest.invoice.taxtotal[0].taxsubtotal[0].taxcategory.id must be a valid tax category, refer to the invoice resource apis",
      );
    }
  }
  failure(await call(sim, "GET", `/api/v1/invoice/confirm/${doc.irn}`), 404, INVOICE_NOT_FOUND);
  assert.deepEqual(sim.faultCounts(), { reject: 6 });
});
