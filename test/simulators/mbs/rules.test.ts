import assert from "node:assert/strict";
import { test } from "node:test";
import { NO_ROUTE } from "../../../src/simulators/mbs/envelopes.ts";
import { RULE_NAMES } from "../../../src/simulators/mbs/rules.ts";
import {
  DEFAULT_RULES,
  type MbsSimulator,
  parseRules,
  RuleSpecError,
  type Rules,
  startMbsSimulator,
} from "../../../src/simulators/mbs/server.ts";
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

// Every switch of the MBS spec's section 8, off and on: the same request, both answers.

const D = "invoicerequest.invoice";
const IRN_REFUSED = "irn validation failed for this business, refer to the template and try again";

type Case = {
  rule: keyof Rules;
  mark: string;
  /** The value a test sets beside the default. */
  other: Rules[keyof Rules];
  /** Makes the request whose answer the rule decides. */
  send: (sim: MbsSimulator) => Promise<Reply>;
  /** What each value answers. */
  whenDefault: (reply: Reply) => void;
  whenOther: (reply: Reply) => void;
};

let sequence = 0;
/** A fresh invoice number each time: one simulator serves every case. */
const fresh = () => `INV${++sequence}`;

const sign = (sim: MbsSimulator, change: (doc: Json) => void) => {
  const doc = invoiceFor(first(sim), fresh());
  change(doc);
  return call(sim, "POST", "/api/v1/invoice/sign", { body: doc });
};
const accepted = (reply: Reply) => void data(reply);
const line = (doc: Json) => (doc.invoice_line as Json[])[0] as Json;

const CASES: Case[] = [
  {
    rule: "price_unit_limit",
    mark: "[doc] 'NGN per 1' in the authority's examples vs [client] a quoted 3-character refusal",
    other: true,
    send: (sim) => sign(sim, (d) => ((line(d).price as Json).price_unit = "NGN per 1")),
    whenDefault: accepted,
    whenOther: (r) =>
      refused(r, `${D}.invoiceline[0].price.priceunit can not be more than in length or value 3`),
  },
  {
    rule: "invoice_kind_required",
    mark: "[client] required in one APP's schema, absent from the collection [doc]",
    other: true,
    send: (sim) => sign(sim, (d) => delete d.invoice_kind),
    whenDefault: accepted,
    whenOther: (r) => refused(r, `${D}.invoicekind is required`),
  },
  {
    rule: "supplier_postal_address_id_required",
    mark: "[recorded] summary vs [doc] the sign example's full address",
    other: true,
    send: (sim) => sign(sim, () => undefined),
    whenDefault: accepted,
    whenOther: (r) => refused(r, `${D}.accountingsupplierparty.postaladdressid is required`),
  },
  {
    rule: "item_description_required",
    mark: "[client] quoted refused; one APP's schema says optional",
    other: false,
    send: (sim) => sign(sim, (d) => delete (line(d).item as Json).description),
    whenDefault: (r) => refused(r, `${D}.invoiceline[0].item.description is required`),
    whenOther: accepted,
  },
  {
    rule: "business_description_min",
    mark: "[client] reported refused under 5 characters",
    other: false,
    send: (sim) => sign(sim, (d) => ((d.accounting_customer_party as Json).business_description = "Shop")),
    whenDefault: (r) =>
      refused(r, `${D}.accountingcustomerparty.businessdescription must be at least in length or value 5`),
    whenOther: accepted,
  },
  {
    rule: "irn_date_is_issue_date",
    mark: "[doc] the authority's example: an IRN ending 20240703 on an invoice issued 2024-05-14",
    other: true,
    send: (sim) =>
      sign(sim, (d) => {
        d.irn = String(d.irn).replace("20261115", "20240703");
        d.issue_date = "2024-05-14";
      }),
    whenDefault: accepted,
    whenOther: (r) => refused(r, IRN_REFUSED),
  },
  {
    rule: "canceled",
    mark: "[doc] CANCELED in the collection; [unknown] whether it still works",
    other: false,
    send: async (sim) => {
      const irn = await signed(sim, invoiceFor(first(sim), fresh()));
      return call(sim, "PATCH", `/api/v1/invoice/update/${irn}`, { body: { payment_status: "CANCELED" } });
    },
    whenDefault: (r) => assert.equal(data(r).payment_status, "CANCELED"),
    whenOther: (r) =>
      refused(r, "updaterequest.paymentstatus must be one of [PENDING PAID PARTIAL REJECTED]"),
  },
  {
    rule: "confirm_unregistered",
    mark: "[unknown] the answer for an unregistered IRN",
    other: 400,
    send: (sim) => call(sim, "GET", `/api/v1/invoice/confirm/INV9-${first(sim).service_id}-20261115`),
    whenDefault: (r) => failure(r, 404, "invoice not found"),
    whenOther: (r) => failure(r, 400, "invoice not found"),
  },
  {
    rule: "documented_vat_path",
    mark: "[recorded] the documented path answered the no-route 404",
    other: true,
    send: (sim) => call(sim, "POST", "/v1/vat/postPayment", { body: DOCUMENTED_REPORT }),
    whenDefault: (r) =>
      assert.deepEqual(r, { status: 404, body: { code: 404, data: null, message: NO_ROUTE } }),
    whenOther: (r) => {
      assert.equal(r.status, 200);
      assert.equal(r.body.agentTin, DOCUMENTED_REPORT.agentTin, "a bare record, no envelope");
    },
  },
  {
    rule: "duplicate_at_validate",
    mark: "[client] an integrator's fixture shows the duplicate text from validate",
    other: true,
    send: async (sim) => {
      const doc = invoiceFor(first(sim), fresh());
      await signed(sim, doc);
      return call(sim, "POST", "/api/v1/invoice/validate", { body: doc });
    },
    whenDefault: accepted,
    whenOther: (r) => tryLater(r),
  },
  {
    rule: "pull_shape",
    mark: "[unknown] pull's answer: a list of records (assumed), or {items: [...]}, or bare documents",
    other: "items",
    send: async (sim) => {
      const [irn] = sim.injectInbound({ count: 1, buyer_tin: first(sim).tin });
      const reply = await call(sim, "GET", "/api/v1/invoice/transmit/pull");
      data(
        await call(sim, "PATCH", `/api/v1/invoice/transmit/${irn}`, { body: { message: "ACKNOWLEDGED" } }),
      );
      return reply;
    },
    whenDefault: (r) => {
      const list = data(r) as unknown as Json[];
      const [record] = list;
      assert.ok(record && list.length === 1);
      assert.equal(record.transmitted, true);
      assert.equal((record.document as Json).irn, record.irn);
    },
    whenOther: (r) => {
      const items = (data(r) as { items: Json[] }).items;
      const [record] = items;
      assert.ok(record && items.length === 1);
      assert.equal((record.document as Json).irn, record.irn);
    },
  },
];

const DOCUMENTED_REPORT = {
  agentTin: "20198222-0002",
  beneficiaryTin: "31845560-0001",
  currency: 566,
  transDate: "2026-11-15",
  baseAmount: "645000.00",
  vatRate: "7.5",
  vatCalculated: "48375.00",
  otherTaxes: "0.00",
  totalAmount: "693375.00",
  vatStatus: 1,
  itemDescription: "Portland cement and rebar",
  vendorTransactionId: "INV0001-X-20261115",
};

test("every rule of the spec's section 8 has a case here, and a default", () => {
  assert.deepEqual(CASES.map((c) => c.rule).sort(), [...RULE_NAMES].sort());
  assert.deepEqual(DEFAULT_RULES, {
    price_unit_limit: false,
    invoice_kind_required: false,
    supplier_postal_address_id_required: false,
    item_description_required: true,
    business_description_min: true,
    irn_date_is_issue_date: false,
    canceled: true,
    confirm_unregistered: 404,
    documented_vat_path: false,
    duplicate_at_validate: false,
    pull_shape: "list",
  });
});

test("each rule: the default answer, then the other value's, on the same request", async (t) => {
  const sim = await simulator(t);
  for (const c of CASES) {
    sim.setRules(DEFAULT_RULES);
    const label = `${c.rule} (${c.mark})`;
    await t.test(`${label}: default ${String(DEFAULT_RULES[c.rule])}`, async () =>
      c.whenDefault(await c.send(sim)),
    );
    sim.setRules({ [c.rule]: c.other });
    await t.test(`${label}: ${String(c.other)}`, async () => c.whenOther(await c.send(sim)));
  }
});

test("rules from options and from --rules text; a bad part is named", async (t) => {
  const sim = await simulator(t, { rules: "price_unit_limit=on, confirm_unregistered=400" });
  assert.equal(sim.rules().price_unit_limit, true);
  assert.equal(sim.rules().confirm_unregistered, 400);
  sim.setRules("price_unit_limit=off");
  assert.equal(sim.rules().price_unit_limit, false);
  assert.equal(sim.rules().confirm_unregistered, 400, "the others keep their value");
  assert.deepEqual(parseRules("canceled=false,documented_vat_path=1,item_description_required=no"), {
    canceled: false,
    documented_vat_path: true,
    item_description_required: false,
  });
  assert.deepEqual(parseRules(""), {});
  const bad: [string, RegExp][] = [
    ["price_unit_limit=maybe", /"price_unit_limit=maybe": price_unit_limit is on or off/],
    ["confirm_unregistered=500", /"confirm_unregistered=500": confirm_unregistered is 404 or 400/],
    ["strict=on", /"strict=on": unknown rule strict \(known: price_unit_limit, /],
    ["canceled", /"canceled": expected name=value/],
    ["canceled=on,canceled=off", /"canceled=off": canceled is given twice/],
  ];
  for (const [text, message] of bad) assert.throws(() => parseRules(text), message, text);
  assert.throws(() => parseRules("x=1"), RuleSpecError);
  assert.throws(() => sim.setRules({ canceled: "yes" as unknown as boolean }), /invalid rule canceled/);
  await assert.rejects(startMbsSimulator({ rules: "canceled=perhaps" }), /"canceled=perhaps"/);
});
