import assert from "node:assert/strict";
import { test } from "node:test";
import { build, type Json, type Tenant, tenant } from "../../helpers.ts";

/*
 * Invoices as an accounting connector in production use builds them from QuickBooks Online for the
 * authority's document. Its public form is github.com/Mcdavid95/SampleApp-WebhookNotifications-nodejs,
 * src/firs/firs.service.ts (transformQBInvoiceToFirs) with the types of src/types/firs.types.ts: it
 * maps every field of its own record and sends "" where QuickBooks has no value
 * (`order_reference`, `accounting_cost`, `buyer_reference` always; a customer's missing phone, TIN
 * or postal code likewise), never sends `invoice_kind` (the authority's examples have none), takes
 * QuickBooks' VAT-inclusive `TotalAmt` and works the tax back out of it (`total × 7.5 / 107.5`, not
 * rounded), and writes each line's unit price as `Amount / Qty`. Before the service read empty
 * optional fields as absent and derived a missing `invoice_kind`, none of its invoices signed.
 *
 * The sample hard-codes `invoice_type_code: '380'` with the comment "Commercial Invoice" (the
 * UN/CEFACT meaning); here, as in the authority's list, 380 is the credit note, so the invoices
 * below are 381, and the last test shows what the connector is told when it sends 380.
 */

const API = "/api/v1/einvoice";

/** A QuickBooks customer as the connector reads it: fields QuickBooks has no value for come out "". */
type QbCustomer = {
  name: string;
  tin: string;
  email: string;
  phone: string;
  description: string;
  street: string;
  city: string;
  postalCode: string;
};

const CUSTOMERS: QbCustomer[] = [
  {
    name: "Lekki Homes Development Co",
    tin: "31845560-0001",
    email: "accounts@lekkihomes.example",
    phone: "+2348029876543",
    description: "Residential construction",
    street: "3 Admiralty Way",
    city: "Lagos",
    postalCode: "106104",
  },
  {
    name: "Chiamaka Eze", // a private buyer: no TIN, no company description
    tin: "",
    email: "chiamaka.eze@example.ng",
    phone: "",
    description: "",
    street: "",
    city: "Enugu",
    postalCode: "",
  },
  {
    name: "Kano Agro Inputs Ltd",
    tin: "20557781-0001",
    email: "",
    phone: "+2348061112233",
    description: "Agricultural inputs wholesale",
    street: "22 Murtala Mohammed Way",
    city: "Kano",
    postalCode: "",
  },
  {
    name: "Walk-in customer",
    tin: "",
    email: "",
    phone: "",
    description: "",
    street: "",
    city: "",
    postalCode: "",
  },
  {
    name: "Port Harcourt Marine Services",
    tin: "17730422-0002",
    email: "finance@phmarine.example",
    phone: "",
    description: " ", // a space typed into the ERP's field
    street: "5 Trans-Amadi Road",
    city: "Port Harcourt",
    postalCode: "500272",
  },
  {
    name: "Abuja Office Supplies",
    tin: "09912345-0001",
    email: "orders@abujaoffice.example",
    phone: "+2349055566778",
    description: "Stationery and office equipment",
    street: "",
    city: "Abuja",
    postalCode: "900211",
  },
];

/** QuickBooks items: `ItemRef.value` (an id, used as `hsn_code`), `ItemRef.name`, a line description. */
const ITEMS = [
  { id: "7", name: "Consulting hours", description: "Advisory services, per hour", price: 45000 },
  { id: "12", name: "Portland cement 50kg", description: "Grade 42.5R bag", price: 6500.5 },
  { id: "3", name: "Delivery", description: "", price: 15000 }, // no description in QuickBooks
  { id: "21", name: "Printer toner", description: "HP 26A compatible", price: 38999.99 },
  { id: "9", name: "Software licence", description: "Annual subscription, 5 seats", price: 250000 },
];

const pad = (n: number) => String(n).padStart(2, "0");
const round2 = (value: number) => Math.round(value * 100) / 100;

/** The QuickBooks invoice number `n` (0 to 35): varied customers, lines, quantities and taxes. */
function qbInvoice(n: number) {
  const day = 1 + ((n * 7) % 28);
  const month = 1 + (n % 12);
  const lines = Array.from({ length: 1 + (n % 4) }, (_, i) => {
    const item = ITEMS[(n + i * 2) % ITEMS.length] as (typeof ITEMS)[number];
    const qty = [1, 2, 3, 7, 12, 0.5][(n + i) % 6] as number;
    return {
      DetailType: "SalesItemLineDetail",
      Description: item.description,
      Amount: round2(qty * item.price),
      SalesItemLineDetail: { ItemRef: { value: item.id, name: item.name }, Qty: qty },
    };
  });
  // QuickBooks adds the tax to the lines' subtotal, rounded to the kobo; every fifth invoice is an
  // export, zero-rated.
  const zeroRated = n % 5 === 4;
  const subtotal = round2(lines.reduce((sum, line) => sum + line.Amount, 0));
  const tax = zeroRated ? 0 : round2((subtotal * 7.5) / 100);
  return {
    DocNumber: `QB${process.pid}N${1000 + n}`,
    TxnDate: `2026-${pad(month)}-${pad(day)}`,
    DueDate: n % 3 === 0 ? undefined : `2026-${pad(month)}-28`,
    PrivateNote: n % 2 === 0 ? undefined : `Order placed by phone, ref ${n}`,
    SalesTermRef: n % 4 === 0 ? { name: "Due on receipt" } : undefined,
    CustomerRef: CUSTOMERS[n % CUSTOMERS.length] as QbCustomer,
    Line: lines,
    TotalAmt: round2(subtotal + tax),
    Balance: n % 6 === 5 ? 0 : round2(subtotal + tax),
    zeroRated,
  };
}

/** The document the connector sends for a QuickBooks invoice, field by field as it builds it. */
function connectorDocument(qb: ReturnType<typeof qbInvoice>, who: Tenant): Json {
  const issueDate = qb.TxnDate;
  const due = new Date(`${issueDate}T00:00:00Z`);
  due.setUTCDate(due.getUTCDate() + 30);
  const dueDate = qb.DueDate ?? due.toISOString().slice(0, 10);
  // The tax worked back out of the VAT-inclusive total, unrounded: 7.5 / 107.5 of it.
  const rate = qb.zeroRated ? 0 : 7.5;
  const taxAmount = (qb.TotalAmt * rate) / (100 + rate);
  const taxExclusiveAmount = qb.TotalAmt - taxAmount;
  const customer = qb.CustomerRef;
  return {
    business_id: who.business_id,
    irn: `${qb.DocNumber}-${who.service_id}-${issueDate.replaceAll("-", "")}`,
    issue_date: issueDate,
    due_date: dueDate,
    issue_time: new Date(Date.UTC(2026, 0, 1, 8 + (qb.Line.length % 9), 15, 0)).toLocaleTimeString("en-GB", {
      hour12: false,
      timeZone: "UTC",
    }),
    invoice_type_code: "381",
    payment_status: qb.Balance > 0 ? "PENDING" : "PAID",
    note: qb.PrivateNote || `QuickBooks Invoice ${qb.DocNumber}`,
    tax_point_date: issueDate,
    document_currency_code: "NGN",
    tax_currency_code: "NGN",
    accounting_cost: "",
    buyer_reference: "",
    order_reference: "",
    accounting_supplier_party: {
      party_name: "Okafor Building Supplies Ltd",
      tin: who.tin,
      email: "billing@okafor-supplies.example",
      telephone: "+2348031234567",
      business_description: "Wholesale of building materials",
      postal_address: {
        street_name: "14 Aba Road",
        city_name: "Aba",
        postal_zone: "450001",
        country: "NG",
      },
    },
    accounting_customer_party: {
      party_name: customer.name,
      tin: customer.tin,
      email: customer.email,
      telephone: customer.phone,
      business_description: customer.description,
      postal_address: {
        street_name: customer.street,
        city_name: customer.city,
        postal_zone: customer.postalCode,
        country: "NG",
      },
    },
    actual_delivery_date: issueDate,
    payment_means: [{ payment_means_code: "30", payment_due_date: dueDate }],
    payment_terms_note: qb.SalesTermRef?.name || "Net 30 days",
    allowance_charge: [],
    tax_total: [
      {
        tax_amount: taxAmount,
        tax_subtotal: [
          {
            taxable_amount: taxExclusiveAmount,
            tax_amount: taxAmount,
            tax_category: { id: qb.zeroRated ? "ZERO_VAT" : "STANDARD_VAT", percent: rate },
          },
        ],
      },
    ],
    legal_monetary_total: {
      line_extension_amount: taxExclusiveAmount,
      tax_exclusive_amount: taxExclusiveAmount,
      tax_inclusive_amount: qb.TotalAmt,
      payable_amount: qb.TotalAmt,
    },
    invoice_line: qb.Line.map((line, index) => {
      const quantity = line.SalesItemLineDetail.Qty;
      const raw = line.SalesItemLineDetail.ItemRef.value;
      return {
        hsn_code: raw.length < 2 ? `${raw}00` : raw,
        product_category: "General Services",
        discount_rate: 0,
        discount_amount: 0,
        fee_rate: 0,
        fee_amount: 0,
        invoiced_quantity: quantity,
        line_extension_amount: line.Amount,
        item: {
          name: line.SalesItemLineDetail.ItemRef.name,
          // The sample falls back to a placeholder; in production an empty description goes as it is.
          description: line.Description,
          sellers_item_identification: raw || `ITEM-${index + 1}`,
        },
        price: {
          price_amount: quantity > 0 ? line.Amount / quantity : line.Amount,
          base_quantity: 1,
          price_unit: "EA",
        },
      };
    }),
  };
}

type Finding = { path: string; rule: string; message: string };

const blank = (value: unknown) => typeof value === "string" && value.trim() === "";

/** The paths of the fields of the document's own schema the connector sent blank. */
function blankPaths(doc: Json): string[] {
  const out: string[] = [];
  if (blank(doc.order_reference)) out.push("order_reference");
  const customer = doc.accounting_customer_party as Json;
  for (const field of ["tin", "email", "telephone", "business_description"])
    if (blank(customer[field])) out.push(`accounting_customer_party.${field}`);
  const address = customer.postal_address as Json;
  for (const field of ["street_name", "city_name", "postal_zone"])
    if (blank(address[field])) out.push(`accounting_customer_party.postal_address.${field}`);
  (doc.invoice_line as Json[]).forEach((line, i) => {
    if (blank((line.item as Json).description)) out.push(`invoice_line[${i}].item.description`);
  });
  return out;
}

test("36 invoices as the QuickBooks connector builds them (empty optional strings, no invoice_kind) all validate and sign", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  const headers = { ...who.headers, "content-type": "application/json" };
  let signed = 0;
  const kinds = new Set<string>();
  for (let n = 0; n < 36; n++) {
    const doc = connectorDocument(qbInvoice(n), who);
    const payload = JSON.stringify(doc);
    const validated = await app.inject({ method: "POST", url: `${API}/validate`, headers, payload });
    assert.equal(validated.statusCode, 200, `${payload}\n${validated.body}`);
    const warnings = (validated.json() as { warnings?: Finding[] }).warnings ?? [];
    const named = (rule: string) => warnings.filter((w) => w.rule === rule).map((w) => w.path);

    // Each empty optional field is named, and read as absent.
    assert.deepEqual(named("empty_optional_field").sort(), blankPaths(doc).sort(), JSON.stringify(warnings));
    // invoice_kind is derived from the customer's TIN, and the warning says which value was used.
    const customer = doc.accounting_customer_party as Json;
    const kind = blank(customer.tin) ? "B2C" : "B2B";
    kinds.add(kind);
    const derived = warnings.find((w) => w.rule === "invoice_kind_derived");
    assert.equal(derived?.path, "invoice_kind");
    assert.match(derived?.message ?? "", new RegExp(`^is missing: ${kind} was used`));
    // The MBS-only fields it sends empty are kept and named as unknown fields, as any other.
    assert.deepEqual(named("unknown_field").sort(), ["accounting_cost", "buyer_reference"]);

    const res = await app.inject({ method: "POST", url: `${API}/sign`, headers, payload });
    assert.equal(res.statusCode, 200, `${payload}\n${res.body}`);
    assert.deepEqual(
      (res.json() as { warnings?: Finding[] }).warnings,
      warnings,
      "sign warns as validate does",
    );
    signed += 1;

    // What is stored and signed is the document as read: the derived kind, no empty optional field.
    const record = await app.inject({ url: `${API}/${String(doc.irn)}`, headers: who.headers });
    assert.equal(record.statusCode, 200, record.body);
    const stored = (record.json() as { data: { document: Json } }).data.document;
    assert.equal(stored.invoice_kind, kind);
    assert.ok(!("order_reference" in stored));
    const storedCustomer = stored.accounting_customer_party as Json;
    for (const [field, value] of Object.entries(customer)) {
      if (field === "postal_address") continue;
      if (blank(value)) assert.ok(!(field in storedCustomer), `${field} stored`);
      else assert.equal(storedCustomer[field], value);
    }
    assert.equal(stored.accounting_cost, "", "an unknown field is kept as sent");
  }
  assert.equal(signed, 36);
  assert.deepEqual([...kinds].sort(), ["B2B", "B2C"]);
});

test("the connector's 380 ('Commercial Invoice' in UN/CEFACT) is refused as a credit note, saying an invoice is 381", async (t) => {
  const { app, ctx } = await build(t);
  const who = await tenant(ctx);
  const doc = { ...connectorDocument(qbInvoice(0), who), invoice_type_code: "380" };
  const res = await app.inject({
    method: "POST",
    url: `${API}/validate`,
    headers: who.headers,
    payload: doc,
  });
  assert.equal(res.statusCode, 400, res.body);
  const violations = (res.json() as { error: { violations: Finding[] } }).error.violations;
  const refusal = violations.find((v) => v.path === "billing_reference");
  assert.equal(refusal?.rule, "billing_reference_required");
  assert.match(refusal?.message ?? "", /380 is a credit note/);
  assert.match(refusal?.message ?? "", /a commercial invoice is 381/);
  // The only thing wrong with it.
  assert.deepEqual(
    violations.map((v) => v.rule),
    ["billing_reference_required"],
  );
});
