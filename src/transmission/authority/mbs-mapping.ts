import { createRequire } from "node:module";
import { DeliveryError, type PaymentUpdate } from "./connector.ts";
import { isObject } from "./mbs-answers.ts";

// CommonJS, with its own types; ESM's default import would not see `code`.
const currencyCodes = createRequire(import.meta.url)("currency-codes") as {
  code(code: string): { number: string } | undefined;
};

/*
 * This service's documents, payment updates and reports in the shapes of the MBS API (the MBS spec,
 * sections 3 and 5). MBS gets MBS's document, not ours: only the fields its collection documents
 * ([doc], and [client] where integrators send a field the collection lacks), each listed once in
 * the table below with what becomes of it. A field ours has and MBS does not document (a postal
 * address's `lga` and `state`, unknown fields a client sent and ours kept with a warning) stays here.
 */

/** How one of our values becomes MBS's: kept as it is, or changed by a function. */
type Rule = "keep" | ((value: unknown, document: Record<string, unknown>) => unknown);
/** A field that is an object (or a list of objects) has a table of its own. */
type Table = { readonly [field: string]: Rule | { readonly fields: Table; readonly list?: boolean } };

/**
 * UN/ECE Rec. 20 codes for the words a free-text `price_unit` uses. MBS's limit on `price_unit` is
 * disputed (the MBS spec, section 3: a 3-character refusal quoted by a 2026 integrator, "NGN per 1"
 * in the authority's own examples): a code of at most 3 characters passes either reading.
 */
const UNIT_WORDS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\b(?:kg|kgs|kilo|kilos|kilogram|kilograms)\b/, "KGM"],
  [/\b(?:g|gram|grams)\b/, "GRM"],
  [/\b(?:l|ltr|litre|litres|liter|liters)\b/, "LTR"],
  [/\b(?:m|metre|metres|meter|meters)\b/, "MTR"],
  [/\b(?:hr|hrs|hour|hours)\b/, "HUR"],
  [/\b(?:day|days)\b/, "DAY"],
  [/\b(?:month|months)\b/, "MON"],
  [/\b(?:bag|bags)\b/, "BG"],
  [/\b(?:box|boxes)\b/, "BX"],
  [/\b(?:carton|cartons)\b/, "CT"],
  [/\b(?:pc|pcs|piece|pieces)\b/, "H87"],
];
/** "EA" (each) for any other unit: the spec's choice beside H87 (piece). */
const DEFAULT_UNIT = "EA";

/** A `price_unit` as MBS takes it: a code of up to 3 upper-case letters/digits is kept, words become one. */
export function mbsPriceUnit(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const trimmed = value.trim();
  if (/^[A-Za-z0-9]{1,3}$/.test(trimmed)) return trimmed.toUpperCase();
  // Bounded: a price unit is a short text; a runaway one is judged by its start.
  const words = trimmed.slice(0, 100).toLowerCase();
  return UNIT_WORDS.find(([pattern]) => pattern.test(words))?.[1] ?? DEFAULT_UNIT;
}

/** [doc] a document reference: `{irn, issue_date}`. */
const REFERENCE: Table = { irn: "keep", issue_date: "keep" };
/** [doc] a postal address; ours also has `lga` and `state`, which no MBS example carries. */
const ADDRESS: Table = { street_name: "keep", city_name: "keep", postal_zone: "keep", country: "keep" };
/** [doc] a party, either in full or by the `id` of one made with `/invoice/party`. */
const PARTY: Table = {
  id: "keep",
  party_name: "keep",
  tin: "keep",
  email: "keep",
  telephone: "keep",
  business_description: "keep",
  postal_address: { fields: ADDRESS },
  postal_address_id: "keep",
};
/** [doc] an invoice line; [client] `isic_code` and `service_category` on service lines. */
const LINE: Table = {
  hsn_code: "keep",
  product_category: "keep",
  isic_code: "keep",
  service_category: "keep",
  discount_rate: "keep",
  discount_amount: "keep",
  fee_rate: "keep",
  fee_amount: "keep",
  invoiced_quantity: "keep",
  line_extension_amount: "keep",
  item: { fields: { name: "keep", description: "keep", sellers_item_identification: "keep" } },
  price: { fields: { price_amount: "keep", base_quantity: "keep", price_unit: mbsPriceUnit } },
};

/** B2B when the buyer has a TIN, else B2C: how this API derives it too when a client leaves it out. */
function invoiceKind(value: unknown, document: Record<string, unknown>): unknown {
  if (typeof value === "string" && value !== "") return value;
  const buyer = document.accounting_customer_party;
  return isObject(buyer) && typeof buyer.tin === "string" && buyer.tin !== "" ? "B2B" : "B2C";
}

/** The MBS invoice document, field by field: what MBS documents, and what becomes of ours. */
export const MBS_DOCUMENT: Table = {
  business_id: "keep",
  irn: "keep",
  issue_date: "keep",
  due_date: "keep",
  issue_time: "keep",
  // [recorded] a string code; [client] integers are refused.
  invoice_type_code: (v) => (typeof v === "number" ? String(v) : v),
  // [client] sent by 2026 integrators, required in one APP's schema; whether MBS needs it is unknown.
  invoice_kind: invoiceKind,
  // [doc] PENDING is MBS's default: made explicit.
  payment_status: (v) => v ?? "PENDING",
  note: "keep",
  tax_point_date: "keep",
  document_currency_code: "keep",
  // [doc] optional, [recorded] refused when missing: the document currency when ours has none.
  tax_currency_code: (v, doc) => v ?? doc.document_currency_code,
  // [doc] MBS-only fields a client may send (ours keeps them as unknown fields, with a warning).
  accounting_cost: "keep",
  buyer_reference: "keep",
  invoice_delivery_period: { fields: { start_date: "keep", end_date: "keep" } },
  order_reference: "keep",
  billing_reference: { fields: REFERENCE, list: true },
  dispatch_document_reference: { fields: REFERENCE },
  receipt_document_reference: { fields: REFERENCE },
  originator_document_reference: { fields: REFERENCE },
  contract_document_reference: { fields: REFERENCE },
  additional_document_reference: { fields: REFERENCE, list: true },
  accounting_supplier_party: { fields: PARTY },
  accounting_customer_party: { fields: PARTY },
  payee_party: { fields: PARTY },
  tax_representative_party: { fields: PARTY },
  actual_delivery_date: "keep",
  payment_means: { fields: { payment_means_code: "keep", payment_due_date: "keep" }, list: true },
  payment_terms_note: "keep",
  allowance_charge: { fields: { charge_indicator: "keep", amount: "keep" }, list: true },
  tax_total: {
    list: true,
    fields: {
      tax_amount: "keep",
      tax_subtotal: {
        list: true,
        fields: {
          taxable_amount: "keep",
          tax_amount: "keep",
          tax_category: { fields: { id: "keep", percent: "keep" } },
        },
      },
    },
  },
  legal_monetary_total: {
    fields: {
      line_extension_amount: "keep",
      tax_exclusive_amount: "keep",
      tax_inclusive_amount: "keep",
      payable_amount: "keep",
    },
  },
  invoice_line: { fields: LINE, list: true },
};

/** Fields the table computes even when ours lacks them (MBS wants them always). */
const ALWAYS = new Set(["invoice_kind", "payment_status", "tax_currency_code"]);

function mapObject(value: Record<string, unknown>, table: Table, root: Record<string, unknown>) {
  const mapped: Record<string, unknown> = {};
  for (const [field, rule] of Object.entries(table)) {
    const ours = value[field];
    if (ours === undefined && !(value === root && ALWAYS.has(field))) continue;
    const theirs = mapValue(ours, rule, root);
    if (theirs !== undefined) mapped[field] = theirs;
  }
  return mapped;
}

function mapValue(value: unknown, rule: Table[string], root: Record<string, unknown>): unknown {
  if (rule === "keep") return value;
  if (typeof rule === "function") return rule(value, root);
  const one = (v: unknown) => (isObject(v) ? mapObject(v, rule.fields, root) : v);
  if (rule.list) return Array.isArray(value) ? value.map(one) : value;
  return one(value);
}

/** The MBS document of one of our signed documents, by the table above. */
export function mbsDocument(document: Record<string, unknown>): Record<string, unknown> {
  return mapObject(document, MBS_DOCUMENT, document);
}

/** The body of MBS `PATCH update/{IRN}`: PARTIAL carries the payment's amount and date. */
export function mbsPaymentUpdate(update: PaymentUpdate): Record<string, unknown> {
  const body: Record<string, unknown> = { payment_status: update.payment_status };
  if (update.reference) body.reference = update.reference;
  if (update.payment_status === "PARTIAL") {
    body.amount = update.amount;
    body.payment_update_date = update.payment_update_date;
  }
  return body;
}

/** Our fiscalization report, as its fields are named in `report-fiscalization`. */
type OurReport = {
  irn?: unknown;
  agent_tin?: unknown;
  beneficiary_tin?: unknown;
  currency?: unknown;
  transaction_date?: unknown;
  base_amount?: unknown;
  vat_rate?: unknown;
  vat_calculated?: unknown;
  other_taxes?: unknown;
  total_amount?: unknown;
  vat_status?: unknown;
  item_description?: unknown;
  /** Set by the report service: the IRN, numbered for an invoice's second and later reports. */
  vendor_transaction_id?: unknown;
};

const amountText = (v: unknown) => (typeof v === "number" ? String(v) : typeof v === "string" ? v : "0");
const textOf = (v: unknown) => (v === undefined || v === null ? "" : String(v));

/**
 * [client] The VAT post-payment report as integrators send it, 2026 code among them: POST
 * `/api/v1/vat/postpayment` with the credential headers and a snake_case body of strings. Our
 * `report-fiscalization` fields are already these; `integrator_service_id` is the APP's service id,
 * here the one configured (EINVOICE_MBS_SERVICE_ID) or else the invoice's, from its IRN.
 */
export function mbsVatReportLive(report: OurReport, serviceId?: string): Record<string, unknown> {
  const irn = textOf(report.irn);
  return {
    agent_tin: textOf(report.agent_tin),
    beneficiary_tin: textOf(report.beneficiary_tin),
    currency: textOf(report.currency).toUpperCase(),
    irn,
    base_amount: amountText(report.base_amount),
    vat_rate: amountText(report.vat_rate),
    vat_calculated: amountText(report.vat_calculated),
    other_taxes: amountText(report.other_taxes),
    total_amount: amountText(report.total_amount),
    transaction_date: textOf(report.transaction_date),
    item_description: textOf(report.item_description),
    integrator_service_id: serviceId ?? irn.split("-")[1] ?? "",
    vat_status: textOf(report.vat_status),
  };
}

/**
 * [doc] The VAT post-payment report as the collection documents it (POST `/v1/vat/postPayment`,
 * recorded answering 404): camelCase, string amounts, the currency as its ISO 4217 number, and
 * `vatStatus` a number, 1 when VAT was charged (vat_calculated above zero), 0 when not. The vendor's
 * transaction id is the IRN (numbered for an invoice's second and later reports).
 */
export function mbsVatReport(report: OurReport): Record<string, unknown> {
  const currency =
    typeof report.currency === "string" ? currencyCodes.code(report.currency.toUpperCase()) : undefined;
  if (!currency) {
    throw new DeliveryError(
      `currency ${JSON.stringify(report.currency)} has no ISO 4217 number for MBS`,
      true,
    );
  }
  return {
    agentTin: textOf(report.agent_tin),
    beneficiaryTin: textOf(report.beneficiary_tin),
    currency: Number(currency.number),
    transDate: textOf(report.transaction_date),
    baseAmount: amountText(report.base_amount),
    vatRate: amountText(report.vat_rate),
    vatCalculated: amountText(report.vat_calculated),
    otherTaxes: amountText(report.other_taxes),
    totalAmount: amountText(report.total_amount),
    vatStatus: Number(amountText(report.vat_calculated)) > 0 ? 1 : 0,
    itemDescription: textOf(report.item_description),
    vendorTransactionId: textOf(report.vendor_transaction_id ?? report.irn),
  };
}

/** Both forms of one report: the live one is sent, the documented one only if MBS has no route for it. */
export function mbsVatReports(report: OurReport, serviceId?: string) {
  return {
    live: mbsVatReportLive(report, serviceId),
    get documented() {
      return mbsVatReport(report);
    },
  };
}
