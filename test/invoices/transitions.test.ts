import assert from "node:assert/strict";
import { test } from "node:test";
import type { InvoiceTable } from "../../src/db/schema.ts";
import { initialState } from "../../src/invoices/lifecycle.ts";
import { decidePayment } from "../../src/invoices/payments/payment-decision.ts";
import { paymentEffects, queuedEffects, signedEffects } from "../../src/invoices/transitions.ts";

// The lifecycle's decisions, without a database: what each move leaves to write besides its row.

const AT = "2026-11-26T10:00:00.000Z";

function row(overrides: Partial<InvoiceTable> = {}): InvoiceTable {
  return {
    irn: "INV001-94ND90NR-20261126",
    business_id: "b1",
    ...initialState(false, undefined),
    payment_reference: null,
    invoice_type_code: "396",
    issue_date: "2026-11-26",
    supplier_tin: "12345678-0001",
    customer_tin: null,
    document: JSON.stringify({ document_currency_code: "NGN" }),
    sealed: null,
    signed_at: AT,
    transmitted_at: null,
    authority_reference: null,
    qr_code: "qr",
    updated_at: AT,
    chain_seq: 1,
    previous_hash: null,
    hash: "h",
    signature: "s",
    kid: "k",
    payable_minor: 100_000,
    paid_minor: 0,
    currency_digits: 2,
    ...overrides,
  } as InvoiceTable;
}

test("an invoice is signed into SIGNED, or TRANSMITTING with its transmission, with its declared payment status", () => {
  assert.deepEqual(initialState(false, undefined), { status: "SIGNED", payment_status: "PENDING" });
  assert.deepEqual(initialState(true, "PAID"), { status: "TRANSMITTING", payment_status: "PAID" });
  assert.throws(() => initialState(false, "SETTLED"), /not a payment status/);
});

test("signing writes a signed entry and notice each; sign-transmit also its queued entry and its delivery", () => {
  const plain = row({ irn: "A-1", business_id: "b1" });
  const sending = row({ irn: "B-1", business_id: "b2", ...initialState(true, "PAID") });
  const effects = signedEffects([
    { row: plain, actor: "api:k1" },
    { row: sending, actor: "api:k2" },
  ]);
  assert.deepEqual(
    effects.history.map(({ irn, event }) => [irn, event.type, event.actor, event.at]),
    [
      ["A-1", "signed", "api:k1", AT],
      ["B-1", "signed", "api:k2", AT],
      ["B-1", "transmission_queued", "api:k2", AT],
    ],
  );
  assert.deepEqual(effects.history[1]?.event.detail, { payment_status: "PAID" });
  assert.deepEqual(effects.deliveries, [{ irn: "B-1", businessId: "b2" }]);
  assert.deepEqual(
    effects.notices.map((n) => [n.businessId, n.type, n.data.status, n.data.amount_outstanding]),
    [
      ["b1", "invoice.signed", "SIGNED", 1000],
      ["b2", "invoice.signed", "TRANSMITTING", 1000],
    ],
  );
  assert.deepEqual(effects.forwards, []);
});

test("queueing again writes its entry, and a delivery unless one is still open", () => {
  const fresh = queuedEffects(row(), "operator", AT, false);
  assert.deepEqual(
    fresh.history.map(({ event }) => event.type),
    ["transmission_queued"],
  );
  assert.deepEqual(fresh.deliveries, [{ irn: row().irn, businessId: "b1" }]);
  const reused = queuedEffects(row(), "operator", AT, true);
  assert.deepEqual(reused.deliveries, []);
  assert.equal(reused.history.length, 1);
});

test("a payment move writes its entry, the authority's update and the notice with the balance after it", () => {
  const invoice = { ...row(), currency: "NGN" };
  const decision = decidePayment(
    invoice,
    { payment_status: "PARTIAL", reference: "TRF-1", amount: 250.5, payment_update_date: "2026-11-26" },
    { replay: false, count: 0 },
    10,
    Date.parse(AT),
  );
  assert.equal(decision.kind, "move");
  if (decision.kind !== "move") return;
  const effects = paymentEffects(row(), decision, "api:k1", AT);
  assert.deepEqual(
    effects.history.map(({ event }) => [event.type, event.detail.amount]),
    [["payment_updated", 250.5]],
  );
  assert.deepEqual(effects.forwards, [
    {
      businessId: "b1",
      at: AT,
      message: {
        kind: "payment_update",
        irn: row().irn,
        update: {
          payment_status: "PARTIAL",
          reference: "TRF-1",
          amount: 250.5,
          payment_update_date: "2026-11-26",
        },
      },
    },
  ]);
  const [notice] = effects.notices;
  assert.equal(notice?.type, "invoice.payment_updated");
  assert.equal(notice?.data.payment_status, "PARTIAL");
  assert.equal(notice?.data.amount_paid, 250.5);
  assert.equal(notice?.data.amount_outstanding, 749.5);
  assert.equal(notice?.data.payment_reference, "TRF-1");
  assert.deepEqual(effects.deliveries, []);
});

test("a rejection tells the authority without an amount", () => {
  const invoice = { ...row(), currency: "NGN" };
  const decision = decidePayment(
    invoice,
    { payment_status: "REJECTED" },
    { replay: false, count: 0 },
    10,
    Date.parse(AT),
  );
  assert.equal(decision.kind, "move");
  if (decision.kind !== "move") return;
  const effects = paymentEffects(row(), decision, "api:k1", AT);
  const update = effects.forwards[0]?.message as { update: Record<string, unknown> };
  assert.equal(update.update.payment_status, "REJECTED");
  assert.equal("amount" in update.update, false);
  assert.equal(effects.notices[0]?.data.amount, null);
});
