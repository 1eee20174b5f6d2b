import { DomainError } from "../../errors.ts";
import { charsRefusal } from "../pdf/bounds.ts";
import { typeToUbl, vatToUbl } from "./codes.ts";
import { NS } from "./tree.ts";
import { type Children, decimal, serialize, Writer } from "./xml-writer.ts";

/**
 * A document of this API as a UBL 2.1 Invoice or CreditNote, by the mapping's table read backwards
 * (mapping.ts), in the schema's element order. What the signature adds rides in three additional
 * document references (BG-24), because EN 16931 has no term for them:
 * - `cbc:ID` the IRN, described `IRN`;
 * - `cbc:ID` `QR`, described by the authority's QR payload (the platform QR code's text);
 * - `cbc:ID` `SIGNATURE`, described `EdDSA kid=…; hash=…; value=…` (the record's signature).
 * The invoice's own `cbc:ID` is its IRN: what the authority and the buyer know it by.
 */

// A stored document was validated when it was signed: it is read here field by field, as JSON.
// biome-ignore lint/suspicious/noExplicitAny: the writer reads the document's JSON shape as it is
type Doc = Record<string, any>;
export type Signed = {
  irn: string;
  document: Doc;
  qr_code?: string | null;
  signature?: { kid: string; hash: string; value: string } | null;
};

function cannot(details: string): DomainError {
  return new DomainError("ubl_not_expressible", { message: "Invoice cannot be written as UBL", details });
}

/** The UNCL 5305 letter of a category, or the reason there is none. */
function letterOf(category: Doc | undefined, where: string): string {
  const letter = category ? vatToUbl(category as { id: string }) : undefined;
  if (!letter) {
    throw cannot(
      `${where}: tax category '${category?.id ?? "(none)"}' is not VAT, and a UBL (EN 16931) invoice states VAT only`,
    );
  }
  return letter;
}

/** The one category of a breakdown with one: what a line or allowance that names none bears. */
function soleCategory(doc: Doc): Doc | undefined {
  const subs: Doc[] = doc.tax_total?.[0]?.tax_subtotal ?? [];
  return subs.length === 1 ? subs[0]?.tax_category : undefined;
}

function taxCategory(
  w: Writer,
  parent: Children,
  name: string,
  category: Doc,
  where: string,
  exemption: boolean,
) {
  const node = w.agg(parent, name);
  const letter = letterOf(category, where);
  w.text(node, "cbc:ID", letter);
  if (letter !== "O") w.text(node, "cbc:Percent", decimal(Number(category.percent ?? 0)));
  if (exemption) {
    const code = category.exemption_reason_code;
    w.text(node, "cbc:TaxExemptionReasonCode", code);
    w.text(node, "cbc:TaxExemptionReason", category.exemption_reason);
  }
  w.text(w.agg(node, "cac:TaxScheme"), "cbc:ID", "VAT");
}

/**
 * A party. Its TIN is a VAT identifier (`NG` + TIN under TaxScheme VAT), except on an invoice that
 * is not subject to VAT (O), which EN 16931 forbids one (BR-O-02): there it is the seller's tax
 * registration (TaxScheme TAX), and its identifier (BT-29), which EN 16931 wants of a seller.
 */
function party(w: Writer, parent: Children, side: string, p: Doc | undefined, vat: boolean) {
  const node = w.agg(w.agg(parent, side), "cac:Party");
  if (!p) return;
  if (!vat && p.tin) w.text(w.agg(node, "cac:PartyIdentification"), "cbc:ID", p.tin);
  if (p.party_name) w.text(w.agg(node, "cac:PartyName"), "cbc:Name", p.party_name);
  const a = p.postal_address;
  if (a) {
    const address = w.agg(node, "cac:PostalAddress");
    w.text(address, "cbc:StreetName", a.street_name);
    w.text(address, "cbc:CityName", a.city_name);
    w.text(address, "cbc:PostalZone", a.postal_zone);
    w.text(address, "cbc:CountrySubentity", a.state);
    w.text(address, "cbc:District", a.lga);
    w.text(w.agg(address, "cac:Country"), "cbc:IdentificationCode", a.country);
  }
  if (p.tin) {
    const scheme = w.agg(node, "cac:PartyTaxScheme");
    // EN 16931 wants a VAT identifier to start with its country's code (BR-CO-09).
    w.text(scheme, "cbc:CompanyID", vat ? `NG${p.tin}` : p.tin);
    w.text(w.agg(scheme, "cac:TaxScheme"), "cbc:ID", vat ? "VAT" : "TAX");
  }
  const legal = w.agg(node, "cac:PartyLegalEntity");
  w.text(legal, "cbc:RegistrationName", p.party_name);
  w.text(legal, "cbc:CompanyLegalForm", p.business_description);
  if (p.telephone || p.email) {
    const contact = w.agg(node, "cac:Contact");
    w.text(contact, "cbc:Telephone", p.telephone);
    w.text(contact, "cbc:ElectronicMail", p.email);
  }
}

function reference(w: Writer, parent: Children, name: string, ref: Doc | undefined) {
  if (!ref) return;
  const node = w.agg(parent, name);
  w.text(node, "cbc:ID", ref.irn);
  w.text(node, "cbc:IssueDate", ref.issue_date);
}

function additional(w: Writer, parent: Children, id: string, description: string) {
  const node = w.agg(parent, "cac:AdditionalDocumentReference");
  w.text(node, "cbc:ID", id);
  w.text(node, "cbc:DocumentDescription", description);
}

function allowance(
  w: Writer,
  parent: Children,
  entry: Doc,
  category: Doc | undefined,
  where: string,
  line: boolean,
) {
  const node = w.agg(parent, "cac:AllowanceCharge");
  const charge = entry.charge_indicator === true;
  w.text(node, "cbc:ChargeIndicator", String(charge));
  w.text(node, "cbc:AllowanceChargeReasonCode", entry.reason_code);
  // EN 16931 wants a reason or its code (BR-33, BR-38, BR-42, BR-44).
  w.text(
    node,
    "cbc:AllowanceChargeReason",
    entry.reason ?? (entry.reason_code ? undefined : charge ? "Charge" : "Discount"),
  );
  if (line && typeof entry.rate === "number")
    w.text(node, "cbc:MultiplierFactorNumeric", decimal(entry.rate));
  w.amount(node, "cbc:Amount", entry.amount);
  if (line && typeof entry.base === "number") w.amount(node, "cbc:BaseAmount", entry.base);
  if (!line) {
    if (!category)
      throw cannot(`${where}: the breakdown has several tax categories and this entry names none`);
    taxCategory(w, node, "cac:TaxCategory", category, where, false);
  }
}

/**
 * A signed (or received) invoice as UBL 2.1 XML text. A received document is whatever its supplier
 * sent: a shape the writer cannot follow is refused as not expressible, never a fault of the service.
 */
export function writeUbl(signed: Signed): string {
  try {
    return write(signed);
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw cannot(`the document's shape cannot be written as UBL (${(err as Error).message})`);
  }
}

function write(signed: Signed): string {
  const doc = signed.document;
  const type = typeToUbl(String(doc.invoice_type_code ?? ""));
  if ("refused" in type) throw cannot(type.refused);
  const credit = type.root === "CreditNote";
  const w = new Writer(String(doc.document_currency_code ?? ""));
  const root: Children = [];
  w.text(root, "cbc:CustomizationID", "urn:cen.eu:en16931:2017");
  w.text(root, "cbc:ID", signed.irn);
  w.text(root, "cbc:IssueDate", doc.issue_date);
  w.text(root, "cbc:IssueTime", doc.issue_time);
  if (!credit) w.text(root, "cbc:DueDate", doc.due_date);
  if (credit) w.text(root, "cbc:TaxPointDate", doc.tax_point_date);
  w.text(root, credit ? "cbc:CreditNoteTypeCode" : "cbc:InvoiceTypeCode", type.ubl);
  w.text(root, "cbc:Note", doc.note);
  if (!credit) w.text(root, "cbc:TaxPointDate", doc.tax_point_date);
  w.text(root, "cbc:DocumentCurrencyCode", doc.document_currency_code);
  if (doc.tax_currency_code !== doc.document_currency_code)
    w.text(root, "cbc:TaxCurrencyCode", doc.tax_currency_code);
  const period = doc.invoice_delivery_period;
  if (period) {
    const node = w.agg(root, "cac:InvoicePeriod");
    w.text(node, "cbc:StartDate", period.start_date);
    w.text(node, "cbc:EndDate", period.end_date);
  }
  if (doc.order_reference) w.text(w.agg(root, "cac:OrderReference"), "cbc:ID", doc.order_reference);
  for (const ref of doc.billing_reference ?? [])
    reference(w, w.agg(root, "cac:BillingReference"), "cac:InvoiceDocumentReference", ref);
  reference(w, root, "cac:DespatchDocumentReference", doc.dispatch_document_reference);
  reference(w, root, "cac:ReceiptDocumentReference", doc.receipt_document_reference);
  if (credit) reference(w, root, "cac:ContractDocumentReference", doc.contract_document_reference);
  if (!credit) reference(w, root, "cac:OriginatorDocumentReference", doc.originator_document_reference);
  if (!credit) reference(w, root, "cac:ContractDocumentReference", doc.contract_document_reference);
  additional(w, root, signed.irn, "IRN");
  if (signed.qr_code) additional(w, root, "QR", signed.qr_code);
  if (signed.signature) {
    const s = signed.signature;
    additional(w, root, "SIGNATURE", `EdDSA kid=${s.kid}; hash=${s.hash}; value=${s.value}`);
  }
  if (credit) reference(w, root, "cac:OriginatorDocumentReference", doc.originator_document_reference);
  const subs = (doc.tax_total?.[0]?.tax_subtotal ?? []) as Doc[];
  const vat = !subs.some((sub) => sub.tax_category && vatToUbl(sub.tax_category) === "O");
  party(w, root, "cac:AccountingSupplierParty", doc.accounting_supplier_party, vat);
  party(w, root, "cac:AccountingCustomerParty", doc.accounting_customer_party, vat);
  if (doc.actual_delivery_date)
    w.text(w.agg(root, "cac:Delivery"), "cbc:ActualDeliveryDate", doc.actual_delivery_date);
  for (const means of doc.payment_means ?? []) paymentMeans(w, root, means);
  if (doc.payment_terms_note) w.text(w.agg(root, "cac:PaymentTerms"), "cbc:Note", doc.payment_terms_note);
  const sole = soleCategory(doc);
  const allowances = (doc.allowance_charge ?? []) as Doc[];
  allowances.forEach((entry, i) => {
    allowance(w, root, entry, entry.tax_category ?? sole, `allowance_charge[${i}]`, false);
  });
  taxesAndTotals(w, root, doc, allowances);
  ((doc.invoice_line ?? []) as Doc[]).forEach((line, i) => {
    writeLine(w, root, line, i, credit, line.tax_category ?? sole);
  });
  const attrs = { xmlns: NS[type.root], "xmlns:cac": NS.cac, "xmlns:cbc": NS.cbc };
  return `<?xml version="1.0" encoding="UTF-8"?>\n${serialize({ name: type.root, attrs, children: root }, "")}`;
}

const round2 = (value: number) => Math.round(value * 100) / 100;

function paymentMeans(w: Writer, root: Children, means: Doc): void {
  const node = w.agg(root, "cac:PaymentMeans");
  w.text(node, "cbc:PaymentMeansCode", means.payment_means_code);
  w.text(node, "cbc:PaymentDueDate", means.payment_due_date);
  const account = means.payee_financial_account;
  if (account) {
    const accountNode = w.agg(node, "cac:PayeeFinancialAccount");
    w.text(accountNode, "cbc:ID", account.id);
    w.text(accountNode, "cbc:Name", account.name);
    if (account.institution)
      w.text(w.agg(accountNode, "cac:FinancialInstitutionBranch"), "cbc:ID", account.institution);
  }
}

/** The VAT breakdown (and the VAT in the tax currency), then the totals. */
function taxesAndTotals(w: Writer, root: Children, doc: Doc, allowances: Doc[]): void {
  for (const total of (doc.tax_total ?? []).slice(0, 1)) {
    const node = w.agg(root, "cac:TaxTotal");
    w.amount(node, "cbc:TaxAmount", total.tax_amount);
    (total.tax_subtotal as Doc[]).forEach((sub, j) => {
      const subNode = w.agg(node, "cac:TaxSubtotal");
      w.amount(subNode, "cbc:TaxableAmount", sub.taxable_amount);
      w.amount(subNode, "cbc:TaxAmount", sub.tax_amount);
      taxCategory(w, subNode, "cac:TaxCategory", sub.tax_category, `tax_total[0].tax_subtotal[${j}]`, true);
    });
  }
  if (
    typeof doc.tax_amount_in_tax_currency === "number" &&
    doc.tax_currency_code !== doc.document_currency_code
  ) {
    const node = w.agg(root, "cac:TaxTotal");
    w.amount(node, "cbc:TaxAmount", doc.tax_amount_in_tax_currency, doc.tax_currency_code);
  }
  const totals = doc.legal_monetary_total ?? {};
  const node = w.agg(root, "cac:LegalMonetaryTotal");
  w.amount(node, "cbc:LineExtensionAmount", totals.line_extension_amount);
  w.amount(node, "cbc:TaxExclusiveAmount", totals.tax_exclusive_amount);
  w.amount(node, "cbc:TaxInclusiveAmount", totals.tax_inclusive_amount);
  const sum = (charge: boolean) =>
    allowances.filter((a) => a.charge_indicator === charge).reduce((s, a) => s + Number(a.amount ?? 0), 0);
  if (allowances.some((a) => a.charge_indicator === false))
    w.amount(node, "cbc:AllowanceTotalAmount", round2(sum(false)));
  if (allowances.some((a) => a.charge_indicator === true))
    w.amount(node, "cbc:ChargeTotalAmount", round2(sum(true)));
  w.amount(node, "cbc:PayableAmount", totals.payable_amount);
}

function writeLine(
  w: Writer,
  root: Children,
  line: Doc,
  i: number,
  credit: boolean,
  category: Doc | undefined,
) {
  const where = `invoice_line[${i}]`;
  const node = w.agg(root, credit ? "cac:CreditNoteLine" : "cac:InvoiceLine");
  w.text(node, "cbc:ID", String(i + 1));
  const price = line.price ?? {};
  // A unit of UN/ECE Rec. 20 is the quantity's; any other text is the price's type (mapping.ts).
  const unitCode =
    typeof price.price_unit === "string" && /^[A-Z0-9]{2,3}$/.test(price.price_unit)
      ? price.price_unit
      : "C62";
  w.text(
    node,
    credit ? "cbc:CreditedQuantity" : "cbc:InvoicedQuantity",
    decimal(Number(line.invoiced_quantity)),
    { unitCode },
  );
  w.amount(node, "cbc:LineExtensionAmount", line.line_extension_amount);
  const entries: Doc[] = [];
  if (typeof line.discount_amount === "number" && line.discount_amount !== 0)
    entries.push({
      charge_indicator: false,
      amount: line.discount_amount,
      rate: line.discount_rate,
      reason: "Discount",
    });
  if (typeof line.fee_amount === "number" && line.fee_amount !== 0)
    entries.push({ charge_indicator: true, amount: line.fee_amount, rate: line.fee_rate, reason: "Fee" });
  const gross =
    (Number(line.invoiced_quantity) * Number(price.price_amount)) / Number(price.base_quantity ?? 1);
  for (const entry of entries) {
    if (typeof entry.rate === "number") entry.base = round2(gross);
    allowance(w, node, entry, undefined, where, true);
  }
  const item = w.agg(node, "cac:Item");
  w.text(item, "cbc:Description", line.item?.description);
  w.text(item, "cbc:Name", line.item?.name);
  if (line.item?.sellers_item_identification)
    w.text(w.agg(item, "cac:SellersItemIdentification"), "cbc:ID", line.item.sellers_item_identification);
  if (line.hsn_code) {
    const attrs: Record<string, string> = { listID: "HS" };
    if (line.product_category) attrs.name = line.product_category;
    w.text(w.agg(item, "cac:CommodityClassification"), "cbc:ItemClassificationCode", line.hsn_code, attrs);
  }
  if (!category) throw cannot(`${where}: the breakdown has several tax categories and this line names none`);
  taxCategory(w, item, "cac:ClassifiedTaxCategory", category, where, false);
  const priceNode = w.agg(node, "cac:Price");
  w.amount(priceNode, "cbc:PriceAmount", price.price_amount);
  if (price.base_quantity !== undefined)
    w.text(priceNode, "cbc:BaseQuantity", decimal(Number(price.base_quantity)), { unitCode });
  if (typeof price.price_unit === "string" && price.price_unit !== unitCode)
    w.text(priceNode, "cbc:PriceType", price.price_unit);
  if (typeof price.price_unit === "string" && price.price_unit === unitCode && unitCode !== "C62")
    w.text(priceNode, "cbc:PriceType", price.price_unit);
}

/**
 * A received invoice as UBL, measured before its document is parsed (as its PDF is): one past the
 * printed bound is refused as too large, with the count and the bound.
 */
export function receivedUbl(found: {
  row: { irn: string };
  chars: number;
  open(): Signed["document"];
}): string {
  const refusal = charsRefusal(found.chars);
  if (refusal) {
    throw new DomainError("too_large_to_print", {
      message: "Invoice too large to write as UBL",
      details: refusal.replace("a PDF is printed", "UBL is written"),
    });
  }
  return writeUbl({ irn: found.row.irn, document: found.open() });
}
