import assert from "node:assert/strict";
import { test } from "node:test";
import { formatMinor, minorUnits, toMajor } from "../../../src/documents/money.ts";
import { DomainError } from "../../../src/errors.ts";
import {
  amountsOf,
  canMove,
  checkPartialBound,
  decidePayment,
  openingBalance,
  type PayableInvoice,
  type PaymentChange,
  type PaymentDecision,
  replayKey,
  replayPayments,
} from "../../../src/invoices/payments/payment-decision.ts";
import { PAYMENT_STATUSES } from "../../../src/reference/data.ts";

// A fixed clock: the date bounds are about days, and a test running at midnight must not flip them.
const NOW = Date.parse("2026-11-20T12:00:00.000Z");
const TODAY = "2026-11-20";
const NONE = { replay: false, count: 0 };
const MAX_PARTIALS = 50;

/** 25,000.00 NGN, nothing paid yet, unless `over` says otherwise. */
function invoice(over: Partial<PayableInvoice> = {}): PayableInvoice {
  return {
    irn: "INV0001-94ND90NR-20261101",
    payment_status: "PENDING",
    payment_reference: null,
    issue_date: "2026-11-01",
    currency: "NGN",
    payable_minor: 2_500_000,
    paid_minor: 0,
    currency_digits: 2,
    ...over,
  };
}

const decide = (inv: PayableInvoice, change: PaymentChange, recorded = NONE) =>
  decidePayment(inv, change, recorded, MAX_PARTIALS, NOW);

/** The refusal `work` throws: always the one 400 of a payment update, with one violation. */
function refusal(work: () => unknown, rule: string, details?: RegExp) {
  let thrown: unknown;
  try {
    work();
  } catch (err) {
    thrown = err;
  }
  assert.ok(thrown instanceof DomainError, `expected a refusal by ${rule}, got ${String(thrown)}`);
  assert.equal(thrown.code, "payment_transition_refused");
  assert.equal(thrown.message, "Failed to update invoice");
  assert.equal(thrown.violations?.length, 1);
  const violation = thrown.violations?.[0];
  assert.equal(violation?.rule, rule, thrown.details);
  if (details) assert.match(thrown.details, details);
  return { details: thrown.details, violation: violation as NonNullable<typeof violation> };
}

function moved(decision: PaymentDecision) {
  assert.equal(decision.kind, "move");
  return decision as Extract<PaymentDecision, { kind: "move" }>;
}

/** The invoice as the service stores it after `decision`. */
function after(inv: PayableInvoice, decision: PaymentDecision): PayableInvoice {
  const m = moved(decision);
  return { ...inv, payment_status: m.to, paid_minor: m.paid_minor, payment_reference: m.payment_reference };
}

test("the moves: PENDING may become PARTIAL, PAID or REJECTED; PARTIAL only PARTIAL or PAID; PAID and REJECTED are final", () => {
  const allowed = new Set([
    "PENDING>PARTIAL",
    "PENDING>PAID",
    "PENDING>REJECTED",
    "PARTIAL>PARTIAL",
    "PARTIAL>PAID",
  ]);
  for (const from of PAYMENT_STATUSES) {
    for (const to of PAYMENT_STATUSES) {
      assert.equal(canMove(from, to), allowed.has(`${from}>${to}`), `${from} -> ${to}`);
    }
  }
  assert.equal(canMove("CANCELED", "PAID"), false, "a status the service does not know moves nowhere");
  assert.equal(canMove("PENDING", "CANCELED"), false);
});

test("minor units: amounts are counted exactly in the currency's minor units, float noise is not a decimal", () => {
  assert.equal(minorUnits(25000, 2), 2_500_000);
  assert.equal(minorUnits(0.1 + 0.2, 2), 30, "0.30000000000000004 is 30 kobo");
  assert.equal(minorUnits(25000.000000001, 2), 2_500_000);
  assert.equal(minorUnits(100.005, 2), undefined, "half a kobo is a real extra decimal");
  assert.equal(minorUnits(100.5, 0), undefined, "JPY has no minor unit");
  assert.equal(minorUnits(100, 0), 100);
  assert.equal(minorUnits(1.234, 3), 1234, "KWD has three digits");
  assert.equal(minorUnits(1.2345, 3), undefined);
  // 70368744177.01 * 100 is 7036874417700.999 in binary: past a millionth of a kobo, yet a few units
  // in the last place of a double of that size, so still noise and not a decimal.
  assert.equal(minorUnits(70368744177.01, 2), 7_036_874_417_701);

  assert.equal(toMajor(2_500_000, 2), 25000);
  assert.equal(toMajor(1234, 3), 1.234);
  assert.equal(toMajor(7, 0), 7);
  assert.equal(formatMinor(2_500_000, 2), "25000.00");
  assert.equal(formatMinor(5, 2), "0.05");
  assert.equal(formatMinor(-150, 2), "-1.50");
  assert.equal(formatMinor(1234, 3), "1.234");
  assert.equal(formatMinor(42, 0), "42");
  assert.equal(formatMinor(-42, 0), "-42");
});

test("the opening balance: nothing paid unless the document is signed PAID, in the currency's digits", () => {
  const doc = (code: string, amount: unknown, status?: string) => ({
    document_currency_code: code,
    legal_monetary_total: { payable_amount: amount },
    payment_status: status,
  });
  assert.deepEqual(openingBalance(doc("NGN", 25000.5)), {
    payable_minor: 2_500_050,
    paid_minor: 0,
    currency_digits: 2,
  });
  assert.deepEqual(openingBalance(doc("NGN", 25000.5, "PAID")), {
    payable_minor: 2_500_050,
    paid_minor: 2_500_050,
    currency_digits: 2,
  });
  assert.equal(openingBalance(doc("NGN", 100, "PARTIAL")).paid_minor, 0, "a PARTIAL's payments come later");
  assert.deepEqual(openingBalance(doc("JPY", 1200)), {
    payable_minor: 1200,
    paid_minor: 0,
    currency_digits: 0,
  });
  assert.deepEqual(openingBalance(doc("KWD", 1.234)), {
    payable_minor: 1234,
    paid_minor: 0,
    currency_digits: 3,
  });
  assert.equal(openingBalance(doc("XYZ", 1)).currency_digits, 2, "an unknown code counts in hundredths");
  assert.equal(openingBalance(doc("NGN", "25000")).payable_minor, 0, "no number, no balance");
  assert.equal(openingBalance({}).payable_minor, 0);

  assert.deepEqual(amountsOf({ payable_minor: 2_500_000, paid_minor: 1_000_050, currency_digits: 2 }), {
    amount_paid: 10000.5,
    amount_outstanding: 14999.5,
  });
});

test("replay keys: only a PARTIAL with a reference and a whole amount can be recognised as a retry", () => {
  assert.deepEqual(replayKey({ payment_status: "PARTIAL", reference: "TRX-1", amount: 100.25 }, 2), {
    reference: "TRX-1",
    amount_minor: 10025,
  });
  assert.equal(replayKey({ payment_status: "PARTIAL", reference: "", amount: 100 }, 2), undefined);
  assert.equal(replayKey({ payment_status: "PARTIAL", amount: 100 }, 2), undefined);
  assert.equal(replayKey({ payment_status: "PARTIAL", reference: "TRX-1" }, 2), undefined);
  assert.equal(replayKey({ payment_status: "PARTIAL", reference: "TRX-1", amount: 100.001 }, 2), undefined);
  assert.equal(replayKey({ payment_status: "PAID", reference: "TRX-1", amount: 100 }, 2), undefined);
});

test("PENDING to PAID settles the whole balance, dated today unless told, and says so in the entry", () => {
  const paid = moved(decide(invoice(), { payment_status: "PAID", reference: "TRX-9" }));
  assert.equal(paid.to, "PAID");
  assert.equal(paid.paid_minor, 2_500_000);
  assert.equal(paid.payment_reference, "TRX-9");
  assert.deepEqual(paid.detail, {
    from: "PENDING",
    to: "PAID",
    reference: "TRX-9",
    amount: 25000,
    payment_update_date: TODAY,
    amount_paid: 25000,
    amount_outstanding: 0,
  });
  const exact = moved(
    decide(invoice(), { payment_status: "PAID", amount: 25000, payment_update_date: "2026-11-05" }),
  );
  assert.equal(exact.paid_minor, 2_500_000);
  assert.equal(exact.detail.payment_update_date, "2026-11-05");
  assert.equal(exact.payment_reference, null, "no reference given, none kept");
  const kept = moved(decide(invoice({ payment_reference: "OLD" }), { payment_status: "PAID" }));
  assert.equal(kept.payment_reference, "OLD", "an update without a reference keeps the invoice's");
});

test("PENDING to REJECTED records no payment", () => {
  const rejected = moved(decide(invoice(), { payment_status: "REJECTED" }));
  assert.equal(rejected.to, "REJECTED");
  assert.equal(rejected.paid_minor, 0);
  assert.equal("amount" in rejected.detail, false);
  assert.equal(rejected.detail.amount_outstanding, 25000);
});

test("PARTIAL payments add up exactly in minor units, and the one that clears the balance makes the invoice PAID", () => {
  let inv = invoice({ payable_minor: 30, paid_minor: 0 }); // 0.30 NGN
  const first = moved(decide(inv, { payment_status: "PARTIAL", amount: 0.1, reference: "A" }));
  assert.equal(first.to, "PARTIAL");
  assert.equal(first.paid_minor, 10);
  assert.deepEqual(
    [first.detail.amount, first.detail.amount_paid, first.detail.amount_outstanding],
    [0.1, 0.1, 0.2],
  );
  inv = after(inv, first);
  // 0.1 + 0.2 is 0.30000000000000004 in floating point: counted in kobo it is exactly the balance.
  const second = moved(decide(inv, { payment_status: "PARTIAL", amount: 0.2, reference: "B" }));
  assert.equal(second.to, "PAID", "nothing is left to pay");
  assert.equal(second.paid_minor, 30);
  assert.deepEqual(second.detail, {
    from: "PARTIAL",
    to: "PAID",
    reference: "B",
    amount: 0.2,
    payment_update_date: TODAY,
    amount_paid: 0.3,
    amount_outstanding: 0,
  });

  // Three payments that do not clear it, then PAID without an amount takes what is left.
  inv = invoice();
  for (const [amount, paidAfter] of [
    [10000.1, 1_000_010],
    [0.01, 1_000_011],
    [4999.99, 1_500_010],
  ] as const) {
    const d = moved(decide(inv, { payment_status: "PARTIAL", amount }));
    assert.equal(d.to, "PARTIAL");
    assert.equal(d.paid_minor, paidAfter);
    inv = after(inv, d);
  }
  const settled = moved(decide(inv, { payment_status: "PAID" }));
  assert.equal(settled.to, "PAID");
  assert.equal(settled.paid_minor, 2_500_000);
  assert.equal(settled.detail.amount, 9999.9, "PAID records what was outstanding");
  assert.deepEqual([settled.detail.amount_paid, settled.detail.amount_outstanding], [25000, 0]);
});

test("amounts are held to the currency's precision: NGN hundredths, JPY whole yen, KWD thousandths", () => {
  const { violation } = refusal(
    () => decide(invoice(), { payment_status: "PARTIAL", amount: 100.005 }),
    "precision",
    /not a whole number of NGN minor units: NGN amounts carry at most 2 decimals/,
  );
  assert.equal(violation.path, "amount");
  assert.equal(violation.actual, 100.005);
  const yen = invoice({ currency: "JPY", currency_digits: 0, payable_minor: 5000 });
  refusal(() => decide(yen, { payment_status: "PARTIAL", amount: 10.5 }), "precision", /at most 0 decimals/);
  assert.equal(moved(decide(yen, { payment_status: "PARTIAL", amount: 10 })).paid_minor, 10);
  const dinar = invoice({ currency: "KWD", currency_digits: 3, payable_minor: 10_000 });
  assert.equal(moved(decide(dinar, { payment_status: "PARTIAL", amount: 1.234 })).paid_minor, 1234);
  refusal(() => decide(dinar, { payment_status: "PARTIAL", amount: 1.2345 }), "precision");
  // Float noise around zero is no payment at all.
  const { violation: tiny } = refusal(
    () => decide(invoice(), { payment_status: "PARTIAL", amount: 1e-9 }),
    "precision",
    /less than one NGN minor unit: a payment is at least 0\.01 NGN/,
  );
  assert.equal(tiny.expected, "at least 0.01");
  refusal(() => decide(yen, { payment_status: "PARTIAL", amount: 1e-9 }), "precision", /at least 1 JPY/);
});

test("an overpayment is refused by how much it exceeds the balance; PAID with an amount must settle it exactly", () => {
  const inv = invoice({ payment_status: "PARTIAL", paid_minor: 2_000_000 }); // 5,000.00 outstanding
  const over = refusal(
    () => decide(inv, { payment_status: "PARTIAL", amount: 5000.01 }),
    "overpayment",
    /the payment of 5000\.01 NGN exceeds the outstanding balance 5000\.00 NGN by 0\.01 NGN/,
  );
  assert.equal(over.violation.expected, "at most 5000");
  refusal(() => decide(inv, { payment_status: "PAID", amount: 6000 }), "overpayment", /by 1000\.00 NGN/);
  const short = refusal(
    () => decide(inv, { payment_status: "PAID", amount: 4000 }),
    "paid_settles_balance",
    /leaves 1000\.00 NGN unpaid/,
  );
  assert.equal(short.violation.expected, 5000);
  assert.deepEqual(short.violation.related, ["payment_status"]);
  // The whole outstanding balance is not an overpayment.
  assert.equal(moved(decide(inv, { payment_status: "PARTIAL", amount: 5000 })).to, "PAID");
  assert.equal(moved(decide(inv, { payment_status: "PAID", amount: 5000 })).paid_minor, 2_500_000);
});

test("amounts too large to count exactly are refused; PAID without an amount still settles them", () => {
  const huge = invoice({ payable_minor: 2 ** 60 });
  refusal(
    () => decide(huge, { payment_status: "PARTIAL", amount: 5 }),
    "amount_too_large",
    /send PAID without an amount/,
  );
  assert.equal(moved(decide(huge, { payment_status: "PAID" })).to, "PAID");
});

test("an amount belongs to PARTIAL and PAID only, and PARTIAL needs one", () => {
  for (const to of ["PENDING", "REJECTED"] as const) {
    const { violation } = refusal(
      () => decide(invoice(), { payment_status: to, amount: 10 }),
      "amount_not_allowed",
      new RegExp(`a ${to} update records no payment`),
    );
    assert.equal(violation.actual, 10);
  }
  const { violation } = refusal(() => decide(invoice(), { payment_status: "PARTIAL" }), "required");
  assert.equal(violation.message, "is required for PARTIAL");
});

test("the payment date: not before the issue date, not after tomorrow", () => {
  const early = refusal(
    () => decide(invoice(), { payment_status: "PAID", payment_update_date: "2026-10-31" }),
    "date_order",
    /2026-10-31 is before the invoice's issue_date 2026-11-01/,
  );
  assert.deepEqual(early.violation.related, ["issue_date"]);
  assert.equal(
    moved(decide(invoice(), { payment_status: "PAID", payment_update_date: "2026-11-01" })).to,
    "PAID",
  );
  assert.equal(
    moved(decide(invoice(), { payment_status: "PAID", payment_update_date: "2026-11-21" })).detail
      .payment_update_date,
    "2026-11-21",
    "tomorrow is allowed: a client east of UTC",
  );
  const late = refusal(
    () => decide(invoice(), { payment_status: "PAID", payment_update_date: "2026-11-22" }),
    "date_not_future",
    /must be 2026-11-21 or earlier/,
  );
  assert.equal(late.violation.actual, "2026-11-22");
});

test("the same status again changes nothing; a retried PARTIAL is recognised whatever happened since", () => {
  for (const status of ["PENDING", "PAID", "REJECTED"] as const) {
    assert.deepEqual(decide(invoice({ payment_status: status }), { payment_status: status }), {
      kind: "unchanged",
      replay: false,
    });
  }
  const retry = { payment_status: "PARTIAL" as const, amount: 100, reference: "TRX-1" };
  for (const status of ["PARTIAL", "PAID"] as const) {
    assert.deepEqual(decide(invoice({ payment_status: status }), retry, { replay: true, count: 1 }), {
      kind: "unchanged",
      replay: true,
    });
  }
  // Only a PARTIAL is ever a retry: a PAID is decided on the invoice as it stands.
  assert.equal(moved(decide(invoice(), { payment_status: "PAID" }, { replay: true, count: 1 })).to, "PAID");
  // Not a retry: another PARTIAL on a PARTIAL invoice is a payment.
  assert.equal(
    moved(decide(invoice({ payment_status: "PARTIAL", paid_minor: 100 }), retry)).paid_minor,
    10_100,
  );
});

test("every refused move says why: PAID and REJECTED are final, PARTIAL has money paid", () => {
  for (const from of ["PAID", "REJECTED"] as const) {
    for (const to of PAYMENT_STATUSES.filter((s) => s !== from)) {
      const change: PaymentChange =
        to === "PARTIAL" ? { payment_status: to, amount: 1 } : { payment_status: to };
      const { violation } = refusal(
        () => decide(invoice({ payment_status: from }), change),
        "payment_transition",
        new RegExp(`payment_status is ${from}, which is final: it cannot change to ${to}`),
      );
      assert.deepEqual([violation.expected, violation.actual], [from, to]);
    }
  }
  const partial = invoice({ payment_status: "PARTIAL", paid_minor: 100_000 });
  refusal(
    () => decide(partial, { payment_status: "PENDING" }),
    "payment_transition",
    /1000\.00 NGN of the invoice has been paid, so it cannot go back to PENDING/,
  );
  refusal(
    () => decide(partial, { payment_status: "REJECTED" }),
    "payment_transition",
    /cannot be REJECTED; settle a rejection after a part payment with a credit note/,
  );
});

test("one invoice takes at most the configured number of PARTIAL payments", () => {
  const inv = invoice({ payment_status: "PARTIAL", paid_minor: 100 });
  const change: PaymentChange = { payment_status: "PARTIAL", amount: 1 };
  assert.equal(moved(decidePayment(inv, change, { replay: false, count: 2 }, 3, NOW)).paid_minor, 200);
  const { violation } = refusal(
    () => decidePayment(inv, change, { replay: false, count: 3 }, 3, NOW),
    "partial_payments_limit",
    /has 3 PARTIAL payments recorded.*outstanding balance 24999\.00 NGN/,
  );
  assert.equal(violation.actual, 4);
  // PAID is always allowed: it is how an invoice at the limit is settled.
  assert.equal(
    moved(decidePayment(inv, { payment_status: "PAID" }, { replay: false, count: 3 }, 3, NOW)).to,
    "PAID",
  );
  assert.doesNotThrow(() => checkPartialBound(inv, 2, 3));
  assert.throws(() => checkPartialBound(inv, 3, 3), DomainError);
});

test("replaying a history: allowed moves that add up pass; a wrong move, an overpayment or a wrong balance is named", () => {
  const balance = { payable_minor: 2_500_000, paid_minor: 0, currency_digits: 2 };
  const sound = replayPayments({ payment_status: "PENDING", balance }, [
    { at: "t1", detail: { to: "PARTIAL", amount: 10000, amount_paid: 10000 } },
    { at: "t2", detail: { to: "PAID", amount: 15000, amount_paid: 25000 } },
  ]);
  assert.deepEqual(sound, { payment_status: "PAID", paid_minor: 2_500_000, problems: [] });
  // Entries written before PARTIAL existed carry no amount: PAID settled everything.
  assert.deepEqual(
    replayPayments({ payment_status: "PENDING", balance }, [{ at: "t1", detail: { to: "PAID" } }]).problems,
    [],
  );
  assert.equal(replayPayments({ payment_status: "PAID", balance }, []).paid_minor, 2_500_000);

  const wrong = replayPayments({ payment_status: "PAID", balance }, [
    { at: "t1", detail: { to: "PENDING" } },
  ]);
  assert.deepEqual(wrong.problems, [
    "payment entry at t1 moves payment_status from PAID to PENDING, which is not allowed",
  ]);
  const over = replayPayments({ payment_status: "PENDING", balance }, [
    { at: "t1", detail: { to: "PARTIAL", amount: 30000 } },
  ]);
  assert.deepEqual(over.problems, [
    "payment entry at t1 takes the amount paid to 30000.00, beyond the payable 25000.00",
  ]);
  const early = replayPayments({ payment_status: "PENDING", balance }, [
    { at: "t1", detail: { to: "PAID", amount: 100 } },
  ]);
  assert.deepEqual(early.problems, ["payment entry at t1 makes the invoice PAID with 24900.00 outstanding"]);
  const stated = replayPayments({ payment_status: "PENDING", balance }, [
    { at: "t1", detail: { to: "PARTIAL", amount: 100, amount_paid: 200 } },
  ]);
  assert.deepEqual(stated.problems, [
    "payment entry at t1 states amount_paid 200, but the payments before it add up to 100.00",
  ]);
  const odd = replayPayments({ payment_status: "PENDING", balance }, [
    { at: "t1", detail: { to: "PARTIAL", amount: 0.001 } },
  ]);
  assert.deepEqual(odd.problems, ["payment entry at t1 has an amount of 0.001"]);
});
