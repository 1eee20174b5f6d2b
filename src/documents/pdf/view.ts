import { CURRENCIES } from "../../reference/currencies.ts";
import { INVOICE_TYPES, PAYMENT_MEANS, STATES, TAX_CATEGORIES } from "../../reference/data.ts";
import { LGAS } from "../../reference/lgas.ts";
import { CAP, field, list, money, num, paragraph, path, percent, price, quantity, text } from "./fields.ts";

/** What the buyer's copy is made from: the stored record, its QR texts and its signature. */
export type InvoicePdfInput = {
  irn: string;
  status: string;
  /** The stored invoice document, as signed. */
  document: Record<string, unknown>;
  /** The platform QR text (the authority's encrypted payload). */
  qrText: string;
  /** The verification QR text: a compact JWS, or a URL carrying one. */
  verificationText: string;
  signature: { kid: string; hash: string } | null;
  signedAt: string;
};

/**
 * What a received invoice's copy is made from: the supplier's document as received. This service did
 * not sign it: no platform QR code, no verification QR code, no signature block; a line says where
 * it came from instead.
 */
export type ReceivedPdfInput = {
  irn: string;
  /** The buyer's decision: RECEIVED, ACKNOWLEDGED or REJECTED. */
  status: string;
  /** The document as received. */
  document: Record<string, unknown>;
  received: {
    supplierTin: string | null;
    supplierName: string | null;
    /** When this service received it (ISO 8601). */
    at: string;
    /** mbs: pulled from the tax authority; builtin: signed by another business of this service. */
    source: string;
  };
};

/** Either copy: one this service signed, or one a business of it received. */
export type PdfInput = InvoicePdfInput | ReceivedPdfInput;

export type Pair = [label: string, value: string];
export type Party = { role: string; name: string; lines: string[] };
export type Line = {
  position: string;
  name: string;
  detail: string;
  code: string;
  quantity: string;
  unit: string;
  unitPrice: string;
  discount: string;
  amount: string;
};
export type Total = { label: string; value: string; strong?: boolean };

/** The invoice as printed: every value already a string, every absent field already left out. */
export type InvoiceView = {
  title: string;
  number: string;
  irn: string;
  meta: Pair[];
  seller: Party;
  buyer: Party;
  lines: Line[];
  allowanceCharges: string[][];
  taxes: string[][];
  totals: Total[];
  payment: Pair[];
  terms: string | undefined;
  note: string | undefined;
  /** The two QR codes of an invoice this service signed; none on a received one. */
  codes: { platform: string; verification: string } | undefined;
  /** Where a received invoice came from, and its status; undefined on one this service signed. */
  receipt: string | undefined;
  /** The footer's text, the same on every page. */
  signature: string;
  /** The file's date: when it was signed, or received. */
  signedAt: Date;
};

const byCode = <T extends { code: string }>(rows: readonly T[]) => new Map(rows.map((r) => [r.code, r]));
const invoiceTypes = byCode(INVOICE_TYPES);
const paymentMeans = byCode(PAYMENT_MEANS);
const taxCategories = byCode(TAX_CATEGORIES);
const states = byCode(STATES);
const lgas = byCode(LGAS);
const currencies = byCode(CURRENCIES);
let regions: Intl.DisplayNames | undefined;

function countryName(code: string): string {
  try {
    regions ??= new Intl.DisplayNames(["en"], { type: "region" });
    return regions.of(code.toUpperCase()) ?? code;
  } catch {
    // Not a region code at all (Intl refuses it): print what the document says.
    return code;
  }
}

const present = (pairs: [string, string | undefined][]): Pair[] =>
  pairs.filter((pair): pair is Pair => pair[1] !== undefined && pair[1] !== "");

function party(role: string, value: unknown): Party {
  const address = field(value, "postal_address");
  const at = (key: string) => text(field(address, key));
  const lgaCode = at("lga");
  const stateCode = at("state");
  const lga = lgaCode && (lgas.get(lgaCode)?.name ?? lgaCode);
  const state = stateCode && (states.get(stateCode)?.name ?? stateCode);
  const country = at("country");
  const lines = [
    text(field(value, "tin")) && `TIN: ${text(field(value, "tin"))}`,
    text(field(value, "email")),
    text(field(value, "telephone")) && `Tel: ${text(field(value, "telephone"))}`,
    at("street_name"),
    [at("city_name"), at("postal_zone")].filter(Boolean).join(" "),
    [lga && `${lga} LGA`, state && `${state} State`].filter(Boolean).join(", "),
    country && countryName(country),
  ];
  return {
    role,
    name: text(field(value, "party_name"), CAP.name) ?? "—",
    lines: lines.filter((line): line is string => typeof line === "string" && line !== ""),
  };
}

function line(value: unknown, index: number, digits: number): Line {
  const hs = text(field(value, "hsn_code"));
  const isic = text(field(value, "isic_code"));
  const discountAmount = field(value, "discount_amount");
  const discountRate = field(value, "discount_rate");
  let discount = "";
  if (discountAmount !== undefined && discountAmount !== null) discount = money(discountAmount, digits);
  else if (discountRate !== undefined && discountRate !== null) discount = percent(discountRate);
  return {
    position: String(index + 1),
    name: text(path(value, "item", "name"), CAP.line) ?? "",
    detail: text(path(value, "item", "description"), CAP.line) ?? "",
    code: hs ? `HS ${hs}` : isic ? `ISIC ${isic}` : "",
    quantity: quantity(field(value, "invoiced_quantity")),
    unit: text(path(value, "price", "price_unit")) ?? "",
    unitPrice: price(path(value, "price", "price_amount"), digits),
    discount,
    amount: money(field(value, "line_extension_amount"), digits),
  };
}

function allowanceCharge(value: unknown, digits: number): string[] {
  const indicator = field(value, "charge_indicator");
  const kind =
    indicator === true || indicator === "true"
      ? "Charge"
      : indicator === false || indicator === "false"
        ? "Allowance"
        : "Allowance or charge";
  const reason = text(field(value, "allowance_charge_reason") ?? field(value, "reason"), CAP.name);
  return [kind, reason ?? "", money(field(value, "amount"), digits)];
}

function taxSubtotals(document: unknown, digits: number): string[][] {
  return list(field(document, "tax_total")).flatMap((total) =>
    list(field(total, "tax_subtotal")).map((subtotal) => {
      const code = text(path(subtotal, "tax_category", "id"));
      const name = code && taxCategories.get(code)?.value;
      return [
        name ? `${name} (${code})` : (code ?? ""),
        percent(path(subtotal, "tax_category", "percent")),
        money(field(subtotal, "taxable_amount"), digits),
        money(field(subtotal, "tax_amount"), digits),
      ];
    }),
  );
}

function totals(document: unknown, currency: string | undefined, digits: number): Total[] {
  const sums = field(document, "legal_monetary_total");
  const amount = (key: string) => {
    const value = field(sums, key);
    return value === undefined || value === null ? undefined : money(value, digits);
  };
  // The first tax total is in the document's currency; a second one, if any, is in the tax currency.
  const taxValue = field(list(field(document, "tax_total"))[0], "tax_amount");
  const rows: [string, string | undefined][] = [
    ["Sum of line amounts", amount("line_extension_amount")],
    ["Allowances", amount("allowance_total_amount")],
    ["Charges", amount("charge_total_amount")],
    ["Total excluding tax", amount("tax_exclusive_amount")],
    ["Tax", taxValue === undefined || taxValue === null ? undefined : money(taxValue, digits)],
    ["Total including tax", amount("tax_inclusive_amount")],
    ["Prepaid", amount("prepaid_amount")],
    ["Rounding", amount("payable_rounding_amount")],
  ];
  const shown: Total[] = present(rows).map(([label, value]) => ({ label, value }));
  const payable = amount("payable_amount");
  if (payable !== undefined) {
    shown.push({
      label: currency ? `Amount payable (${currency})` : "Amount payable",
      value: payable,
      strong: true,
    });
  }
  return shown;
}

function payment(document: unknown): Pair[] {
  return list(field(document, "payment_means")).flatMap((means): Pair[] => {
    const code = text(field(means, "payment_means_code"));
    const label = code && paymentMeans.get(code)?.value;
    const due = text(field(means, "payment_due_date"));
    return present([
      ["Payment means", label ? `${label} (code ${code})` : code],
      ["Payment due", due],
    ]);
  });
}

function title(code: string | undefined): string {
  return (code && invoiceTypes.get(code)?.value) ?? "Invoice";
}

function currencyLabel(code: string | undefined): string | undefined {
  const known = code ? currencies.get(code) : undefined;
  return known ? `${code} (${known.name}, ${known.symbol_native})` : code;
}

function meta(input: PdfInput, irn: string, number: string, document: unknown): Pair[] {
  const at = (key: string) => text(field(document, key));
  const currency = at("document_currency_code");
  const taxCurrency = at("tax_currency_code");
  const start = text(path(document, "invoice_delivery_period", "start_date"));
  const end = text(path(document, "invoice_delivery_period", "end_date"));
  const period = start && end ? `${start} to ${end}` : (start ?? end);
  const billing = list(field(document, "billing_reference"))
    .slice(0, 5)
    .map((reference) => text(field(reference, "irn")))
    .filter(Boolean);
  return present([
    ["Invoice number", number],
    ["IRN", irn],
    ["Status", text(input.status)],
    ["Issue date", [at("issue_date"), at("issue_time")].filter(Boolean).join(" ")],
    ["Due date", at("due_date")],
    ["Currency", currencyLabel(currency)],
    ["Tax currency", taxCurrency !== currency ? currencyLabel(taxCurrency) : undefined],
    ["Order reference", at("order_reference")],
    ["Billing reference", billing.join(", ")],
    ["Delivery", period ?? at("actual_delivery_date")],
  ]);
}

const SOURCES: Record<string, string> = {
  mbs: "via the tax authority (MBS)",
  builtin: "via this service, from another business of it",
};

/** "2026-11-16 09:30 UTC" from an ISO time; what was given when it is none. */
function dayTime(iso: unknown): string | undefined {
  const value = text(iso);
  const at = value === undefined ? Number.NaN : Date.parse(value);
  return Number.isNaN(at) ? value : `${new Date(at).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** The line under a received invoice's title: from whom, when, how, and where it stands. */
function receipt(input: ReceivedPdfInput): string {
  const { received } = input;
  const name = text(received.supplierName, CAP.name);
  const tin = text(received.supplierTin);
  const supplier = [name ?? "the supplier", tin && `(TIN ${tin})`].filter(Boolean).join(" ");
  const source = text(received.source);
  const via = (source && SOURCES[source]) ?? (source ? `via ${source}` : undefined);
  const on = dayTime(received.at);
  const status = text(input.status);
  return [
    ["Received from", supplier, on && `on ${on}`, via].filter(Boolean).join(" "),
    status && `status ${status}`,
  ]
    .filter(Boolean)
    .join("  ·  ");
}

function receivedFooter(input: ReceivedPdfInput): string {
  const on = dayTime(input.received.at);
  return [on && `Received ${on}`, "the supplier's invoice as received: not signed by this service"]
    .filter(Boolean)
    .join("  ·  ");
}

function footer(input: InvoicePdfInput): string {
  const signed = text(input.signedAt);
  const kid = text(field(input.signature, "kid"), CAP.name);
  const hash = text(field(input.signature, "hash"), CAP.name);
  if (!kid && !hash) return signed ? `Issued ${signed}  ·  no signature` : "No signature";
  const parts = [signed && `Signed ${signed}`, kid && `key id ${kid}`, hash && `hash ${hash}`];
  return parts.filter(Boolean).join("  ·  ");
}

/** The printed form of a stored or received invoice; throws on nothing the document may hold. */
export function invoiceView(input: PdfInput): InvoiceView {
  const document: unknown = input.document;
  const received = "received" in input ? input : undefined;
  const sent = "received" in input ? undefined : input;
  const irn = text(input.irn) ?? text(field(document, "irn")) ?? "";
  const number = irn.split("-")[0] ?? "";
  const currency = text(field(document, "document_currency_code"));
  const digits = Math.min(Math.max(num(currency && currencies.get(currency)?.decimal_digits) ?? 2, 0), 4);
  const dated = received ? received.received.at : sent?.signedAt;
  const signedAt = new Date(typeof dated === "string" ? dated : Number.NaN);
  return {
    title: title(text(field(document, "invoice_type_code"))),
    number,
    irn,
    meta: meta(input, irn, number, document),
    seller: party("Seller", field(document, "accounting_supplier_party")),
    buyer: party("Buyer", field(document, "accounting_customer_party")),
    lines: list(field(document, "invoice_line")).map((value, index) => line(value, index, digits)),
    allowanceCharges: list(field(document, "allowance_charge")).map((value) =>
      allowanceCharge(value, digits),
    ),
    taxes: taxSubtotals(document, digits),
    totals: totals(document, currency, digits),
    payment: payment(document),
    terms: paragraph(field(document, "payment_terms_note")),
    note: paragraph(field(document, "note")),
    codes: sent && {
      platform: typeof sent.qrText === "string" ? sent.qrText : "",
      verification: typeof sent.verificationText === "string" ? sent.verificationText : "",
    },
    receipt: received && receipt(received),
    signature: received ? receivedFooter(received) : sent ? footer(sent) : "",
    // A fixed date keeps the file the same for the same record (pdfkit derives the file id from it).
    signedAt: Number.isNaN(signedAt.getTime()) ? new Date(0) : signedAt,
  };
}
