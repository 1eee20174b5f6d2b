import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_RULES, type Rules } from "../../../src/simulators/mbs/server.ts";
import type { Json } from "../../helpers.ts";
import { call, first, invoiceFor, refused, simulator } from "./harness.ts";

// What validate and sign refuse (the MBS spec, section 3): one row per rule, each answered with the
// one validation public message, handler `invoice_actions` and ONE reason in `details` (the first rule
// broken). The quoted texts are MBS's [client]/[recorded]; the rest are the simulator's, in that style.

type Row = {
  name: string;
  mark: "[recorded]" | "[client]" | "[doc]" | "[unknown]";
  change: (doc: Json, other: { service_id: string }) => void;
  details: string;
  rules?: Partial<Rules>;
};

const party = (doc: Json, name: string) => doc[name] as Json;
const address = (doc: Json, name: string) => party(doc, name).postal_address as Json;
const line = (doc: Json, i = 0) => (doc.invoice_line as Json[])[i] as Json;
const D = "invoicerequest.invoice";

const QUOTED: Row[] = [
  {
    name: "a tax category not in the list",
    mark: "[client]",
    change: (d) => {
      const total = (d.tax_total as Json[])[0] as Json;
      ((total.tax_subtotal as Json[])[0] as Json).tax_category = { id: "VAT", percent: 7.5 };
    },
    details: `${D}.taxtotal[0].taxsubtotal[0].taxcategory.id must be a valid tax category, refer to the invoice resource apis`,
  },
  {
    name: "a country that is not an alpha-2 code of the list",
    mark: "[client]",
    change: (d) => (address(d, "accounting_supplier_party").country = "NGA"),
    details: `${D}.accountingsupplierparty.postaladdress.country must be a valid country code, refer to the invoice resource apis`,
  },
  {
    name: "a tax point date that is not YYYY-MM-DD",
    mark: "[client]",
    change: (d) => (d.tax_point_date = "15/11/2026"),
    details: `${D}.taxpointdate must be a valid date value yyyy-mm-dd (e.g: 2024-04-29)`,
  },
  {
    name: "a tax point date that does not exist",
    mark: "[client]",
    change: (d) => (d.tax_point_date = "2026-02-30"),
    details: `${D}.taxpointdate must be a valid date value yyyy-mm-dd (e.g: 2024-04-29)`,
  },
  {
    name: "a customer TIN under 5 characters",
    mark: "[client]",
    change: (d) => (party(d, "accounting_customer_party").tin = "1234"),
    details: `${D}.accountingcustomerparty.tin must be at least in length or value 5`,
  },
  {
    name: "a business_id that is not a UUID (35 characters)",
    mark: "[client]",
    change: (d) => (d.business_id = "0a0e5821-198c-4087-a7ed-5f94a9f0eff"),
    details: "invalid UUID length: 35",
  },
  {
    name: "a business_id of another length",
    mark: "[client]",
    change: (d) => (d.business_id = "nobody"),
    details: "invalid UUID length: 6",
  },
  {
    name: "no tax currency",
    mark: "[recorded]",
    change: (d) => delete d.tax_currency_code,
    details: `${D}.taxcurrencycode is required`,
  },
  {
    name: "a line without item.description",
    mark: "[client]",
    change: (d) => delete (line(d).item as Json).description,
    details: `${D}.invoiceline[0].item.description is required`,
  },
  {
    name: "a service line with isic_code and no service_category",
    mark: "[client]",
    change: (d) => (line(d, 1).isic_code = "4663"),
    details: `${D}.invoiceline[1].service_category is required when isic_code is provided`,
  },
  {
    name: "an IRN with another business's service id",
    mark: "[client]",
    change: (d, other) => (d.irn = `INV0001-${other.service_id}-20261115`),
    details: "irn validation failed for this business, refer to the template and try again",
  },
  {
    name: "an IRN whose invoice number has a hyphen",
    mark: "[client]",
    change: (d) => (d.irn = `INV-1-${String(d.irn).split("-")[1]}-20261115`),
    details: "irn validation failed for this business, refer to the template and try again",
  },
  {
    name: "an IRN whose date does not exist",
    mark: "[client]",
    change: (d) => (d.irn = String(d.irn).replace("20261115", "20260230")),
    details: "irn validation failed for this business, refer to the template and try again",
  },
  {
    name: "a price_unit over 3 characters, with the price_unit_limit rule",
    mark: "[client]",
    change: () => undefined,
    rules: { price_unit_limit: true },
    details: `${D}.invoiceline[0].price.priceunit can not be more than in length or value 3`,
  },
];

const OTHERS: Row[] = [
  {
    name: "a telephone without +",
    mark: "[doc]",
    change: (d) => (party(d, "accounting_supplier_party").telephone = "08031234567"),
    details: `${D}.accountingsupplierparty.telephone must start with + (e.g: +2348012345678)`,
  },
  {
    name: "a business description under 5 characters",
    mark: "[client]",
    change: (d) => (party(d, "accounting_customer_party").business_description = "Shop"),
    details: `${D}.accountingcustomerparty.businessdescription must be at least in length or value 5`,
  },
  {
    name: "a party without email",
    mark: "[doc]",
    change: (d) => delete party(d, "accounting_customer_party").email,
    details: `${D}.accountingcustomerparty.email is required`,
  },
  {
    name: "an integer invoice type code",
    mark: "[client]",
    change: (d) => (d.invoice_type_code = 381),
    details: `${D}.invoicetypecode must be a string`,
  },
  {
    name: "an invoice type code not in the list",
    mark: "[recorded]",
    change: (d) => (d.invoice_type_code = "999"),
    details: `${D}.invoicetypecode must be a valid invoice type code, refer to the invoice resource apis`,
  },
  {
    name: "an amount as a numeric string",
    mark: "[client]",
    change: (d) => ((d.legal_monetary_total as Json).payable_amount = "693375.00"),
    details: `${D}.legalmonetarytotal.payableamount must be a number`,
  },
  {
    name: "an issue date that does not exist",
    mark: "[unknown]",
    change: (d) => (d.issue_date = "2026-11-31"),
    details: `${D}.issuedate must be a valid date value yyyy-mm-dd (e.g: 2024-04-29)`,
  },
  {
    name: "a currency code not in the list",
    mark: "[unknown]",
    change: (d) => (d.document_currency_code = "XYZ"),
    details: `${D}.documentcurrencycode must be a valid currency code, refer to the invoice resource apis`,
  },
  {
    name: "no lines",
    mark: "[doc]",
    change: (d) => (d.invoice_line = []),
    details: `${D}.invoiceline is required`,
  },
  {
    name: "a party id that names no party",
    mark: "[doc]",
    change: (d) => (d.accounting_customer_party = { id: "no-such-party" }),
    details: `${D}.accountingcustomerparty.id must be a valid party, refer to the party apis`,
  },
  {
    name: "a well-formed business id of no business",
    mark: "[unknown]",
    change: (d) => (d.business_id = "00000000-0000-4000-8000-000000000000"),
    details: `${D}.businessid must be a valid business, refer to the entity apis`,
  },
  {
    name: "only the first of two problems is reported",
    mark: "[client]",
    change: (d) => {
      d.invoice_type_code = 381;
      delete d.tax_currency_code;
    },
    details: `${D}.invoicetypecode must be a string`,
  },
  {
    name: "a payment status not in the list",
    mark: "[doc]",
    change: (d) => (d.payment_status = "OWED"),
    details: `${D}.paymentstatus must be one of [PENDING PAID PARTIAL CANCELED]`,
  },
];

for (const [title, rows] of [
  ["quoted refusals", QUOTED],
  ["other field errors, in their style", OTHERS],
] as const) {
  test(`validate and sign refuse (${title}), registering nothing`, async (t) => {
    const sim = await simulator(t);
    const other = sim.taxpayers[1];
    assert.ok(other);
    for (const row of rows) {
      sim.setRules({ ...DEFAULT_RULES, ...row.rules });
      for (const url of ["/api/v1/invoice/validate", "/api/v1/invoice/sign"]) {
        const doc = invoiceFor(first(sim));
        row.change(doc, other);
        const reply = await call(sim, "POST", url, { body: doc });
        assert.doesNotThrow(() => refused(reply, row.details), `${row.mark} ${row.name} at ${url}`);
      }
    }
    assert.equal(sim.registrations().size, 0);
  });
}

test("the request body itself: not an object, not JSON", async (t) => {
  const sim = await simulator(t);
  for (const url of ["/api/v1/invoice/validate", "/api/v1/invoice/sign"]) {
    refused(await call(sim, "POST", url, { body: [1] }), `${D} must be a JSON object`);
    refused(await call(sim, "POST", url, { raw: '{"irn": ' }), "request body is not valid JSON");
  }
});
