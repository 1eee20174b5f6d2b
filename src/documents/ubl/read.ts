import { parseIrn } from "../../crypto/irn.ts";
import type { Violation } from "../../errors.ts";
import { NOT_SUBJECT, typeFromUbl, vatFromUbl } from "./codes.ts";
import { ALLOWANCE, HEADER, LINE, PARTY, PAYMENT, type Row, TOTALS } from "./mapping.ts";
import { Reading, setPath } from "./reading.ts";
import { type UblNode, unused } from "./tree.ts";

/** What the business signing supplies that the UBL does not say. */
export type Signer = { businessId: string; serviceId: string; irn?: string | undefined };

export type UblRead = {
  document: Record<string, unknown>;
  /** Not carried, each naming its XPath. */
  warnings: Violation[];
  /** What the document cannot carry without changing an amount or a meaning: the document is refused. */
  refusals: Violation[];
  /** This API's field path → the XPath it came from (or would), for findings on the document. */
  sources: ReadonlyMap<string, string>;
};

/** Rows copied as they are: one element, one field, no rule of their own. */
const plain = (rows: readonly Row[]) =>
  rows.filter(
    (r) =>
      r.field && !r.refuse && /^[a-z]+:[A-Za-z]+(\/[a-z]+:[A-Za-z]+)*$/.test(r.ubl) && !/[[(]/.test(r.field),
  );

const HEADER_PLAIN = plain(HEADER).filter((r) => !["irn", "note", "due_date"].includes(r.field as string));
const PARTY_PLAIN = plain(PARTY).filter((r) => r.field !== "party_name" && r.field !== "tin");
const LINE_PLAIN = plain(LINE);
const TOTALS_PLAIN = plain(TOTALS);

/**
 * The invoice number made an IRN segment: its letters and digits, in order (`INV/2026/0042` is
 * `INV20260042`). Deterministic, so the same number always gives the same IRN, and two numbers that
 * give the same one meet the sign's refusal of an IRN already registered, never each other's record.
 */
export function irnFor(number: string, serviceId: string, issueDate: string): string | undefined {
  const segment = number.replace(/[^A-Za-z0-9]/g, "");
  if (segment === "" || !/^\d{4}-\d{2}-\d{2}$/.test(issueDate)) return undefined;
  return `${segment}-${serviceId}-${issueDate.replaceAll("-", "")}`;
}

/** An IRN of this business already (UBL out writes the IRN as the invoice's ID): kept as it is. */
function isOwnIrn(text: string, serviceId: string): boolean {
  const parsed = parseIrn(text);
  return !("error" in parsed) && parsed.serviceId === serviceId;
}

/** A UBL Invoice or CreditNote (its root, copied by tree.ts) as this API's invoice document. */
export function readUbl(root: UblNode, signer: Signer): UblRead {
  const r = new Reading();
  const doc: Record<string, unknown> = { business_id: signer.businessId };
  const credit = root.name === "CreditNote";
  r.sources.set("(body)", root.path);
  // Which specification and profile the document follows: read to know it is UBL, not content.
  for (const name of ["cbc:UBLVersionID", "cbc:CustomizationID", "cbc:ProfileID"]) r.at(root, name);

  for (const row of HEADER_PLAIN)
    r.put(doc, row.field as string, row.field as string, root, row.ubl, row.kind);
  if (doc.tax_currency_code === undefined && doc.document_currency_code !== undefined)
    doc.tax_currency_code = doc.document_currency_code;
  readIdentity(r, root, doc, signer, credit);
  const notes = r
    .all(root, "cbc:Note")
    .map((n) => n.text)
    .filter((t) => t !== "");
  if (notes.length > 0) doc.note = notes.join("\n");
  r.sources.set("note", r.peek(root, "cbc:Note")?.path ?? `${root.path}/cbc:Note`);
  readReferences(r, root, doc, signer);

  for (const [side, field] of [
    ["cac:AccountingSupplierParty", "accounting_supplier_party"],
    ["cac:AccountingCustomerParty", "accounting_customer_party"],
  ] as const) {
    const party = r.at(root, `${side}/cac:Party`);
    r.sources.set(field, party?.path ?? `${root.path}/${side}`);
    if (party) doc[field] = readParty(r, party, field);
  }
  const customerTin = (doc.accounting_customer_party as { tin?: unknown } | undefined)?.tin;
  doc.invoice_kind = customerTin === undefined ? "B2C" : "B2B";

  readPayment(r, root, doc, credit);
  readAllowances(r, root, doc);
  readTaxes(r, root, doc);
  readTotals(r, root, doc);
  readLines(r, root, doc, credit);
  exemptionsOf(doc);
  ownReferences(r, root, doc);

  for (const path of unused(root, r.readAttrs)) {
    r.warnings.push({
      path: "(ubl)",
      rule: "ubl_not_carried",
      message: "not carried: this API's document has no field for it",
      xpath: path,
    });
  }
  return { document: doc, warnings: r.warnings, refusals: r.refusals, sources: r.sources };
}

function readIdentity(
  r: Reading,
  root: UblNode,
  doc: Record<string, unknown>,
  signer: Signer,
  credit: boolean,
) {
  const id = r.at(root, "cbc:ID");
  r.sources.set("irn", id?.path ?? `${root.path}/cbc:ID`);
  if (signer.irn !== undefined) doc.irn = signer.irn;
  else if (id && isOwnIrn(id.text, signer.serviceId)) doc.irn = id.text;
  else if (id) {
    const irn = irnFor(id.text, signer.serviceId, String(doc.issue_date ?? ""));
    if (irn) doc.irn = irn;
    else {
      r.refuse(
        id.path,
        `the invoice number '${id.text}' has no letter or digit to make an IRN of: give the IRN in the 'irn' query parameter`,
        id.text,
      );
    }
  }
  const type = r.at(root, credit ? "cbc:CreditNoteTypeCode" : "cbc:InvoiceTypeCode");
  r.sources.set("invoice_type_code", type?.path ?? `${root.path}/cbc:InvoiceTypeCode`);
  if (type) {
    const found = typeFromUbl(type.text);
    if ("refused" in found) r.refuse(type.path, found.refused, type.text);
    else doc.invoice_type_code = found.ours;
  }
  if (!credit) r.put(doc, "due_date", "due_date", root, "cbc:DueDate", "date");
}

/** A document reference of this API is to a signed invoice: an IRN and its issue date. */
function readReferences(r: Reading, root: UblNode, doc: Record<string, unknown>, signer: Signer) {
  const billing = r.all(root, "cac:BillingReference");
  const refs: Record<string, unknown>[] = [];
  for (const node of billing) {
    const invoice = r.at(node, "cac:InvoiceDocumentReference");
    if (!invoice) continue;
    const at = `billing_reference[${refs.length}]`;
    r.sources.set(at, invoice.path);
    const ref: Record<string, unknown> = {};
    const id = r.put(ref, "irn", `${at}.irn`, invoice, "cbc:ID", "text");
    const date = r.put(ref, "issue_date", `${at}.issue_date`, invoice, "cbc:IssueDate", "date");
    if (typeof id === "string" && "error" in parseIrn(id) && typeof date === "string") {
      ref.irn = irnFor(id, signer.serviceId, date) ?? id;
    }
    refs.push(ref);
  }
  if (refs.length > 0) doc.billing_reference = refs;
  for (const [element, field] of [
    ["cac:DespatchDocumentReference", "dispatch_document_reference"],
    ["cac:ReceiptDocumentReference", "receipt_document_reference"],
    ["cac:OriginatorDocumentReference", "originator_document_reference"],
    ["cac:ContractDocumentReference", "contract_document_reference"],
  ] as const) {
    const node = r.peek(root, element);
    const id = r.peek(node, "cbc:ID")?.text;
    const date = r.peek(node, "cbc:IssueDate")?.text;
    // Only a reference to a signed invoice is this API's; another stays unused, and is listed.
    if (!node || id === undefined || date === undefined || "error" in parseIrn(id)) continue;
    r.at(root, element);
    r.sources.set(field, node.path);
    const ref: Record<string, unknown> = {};
    r.put(ref, "irn", `${field}.irn`, node, "cbc:ID", "text");
    r.put(ref, "issue_date", `${field}.issue_date`, node, "cbc:IssueDate", "date");
    doc[field] = ref;
  }
}

function readParty(r: Reading, party: UblNode, field: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const legal = r.peek(r.peek(party, "cac:PartyLegalEntity"), "cbc:RegistrationName");
  r.put(
    out,
    "party_name",
    `${field}.party_name`,
    party,
    legal ? "cac:PartyLegalEntity/cbc:RegistrationName" : "cac:PartyName/cbc:Name",
    "text",
  );
  // A trading name that is the legal name says nothing more; another one is listed as not carried.
  if (r.peek(r.peek(party, "cac:PartyName"), "cbc:Name")?.text === out.party_name)
    r.at(party, "cac:PartyName/cbc:Name");
  for (const scheme of r.all(party, "cac:PartyTaxScheme")) {
    const company = r.at(scheme, "cbc:CompanyID");
    r.at(scheme, "cac:TaxScheme/cbc:ID");
    if (!company || out.tin !== undefined) continue;
    const prefix = /^([A-Za-z]{2})\s*-?\s*(.*)$/.exec(company.text);
    if (prefix && prefix[1]?.toUpperCase() !== "NG") {
      company.used = false;
      continue;
    }
    out.tin = prefix ? prefix[2] : company.text;
    r.sources.set(`${field}.tin`, company.path);
  }
  if (!r.sources.has(`${field}.tin`))
    r.sources.set(`${field}.tin`, `${party.path}/cac:PartyTaxScheme/cbc:CompanyID`);
  const address = r.peek(party, "cac:PostalAddress");
  const streets = address
    ? [
        r.at(address, "cbc:StreetName")?.text,
        r.at(address, "cbc:AdditionalStreetName")?.text,
        ...r.all(address, "cac:AddressLine").map((line) => r.at(line, "cbc:Line")?.text),
      ].filter((s): s is string => s !== undefined && s !== "")
    : [];
  if (streets.length > 0) setPath(out, "postal_address.street_name", streets.join(", "));
  r.sources.set(`${field}.postal_address.street_name`, `${party.path}/cac:PostalAddress/cbc:StreetName`);
  for (const row of PARTY_PLAIN)
    r.put(out, row.field as string, `${field}.${row.field}`, party, row.ubl, row.kind);
  if (typeof out.telephone === "string") out.telephone = telephone(out.telephone);
  r.sources.set(`${field}.postal_address`, address?.path ?? `${party.path}/cac:PostalAddress`);
  return out;
}

/**
 * A telephone number as this API writes it (E.164, `+2348031234567`): UBL's is free text, and
 * Nigerian ERPs write the local form (`0803 123 4567`) as often as the international one. Spaces,
 * dots, hyphens and brackets are dropped, and a Nigerian number's leading 0 is its +234. Anything
 * else is kept as written, for the validation to report on its element.
 */
export function telephone(text: string): string {
  const compact = text.replace(/[\s.()-]/g, "");
  if (/^0[789]\d{9}$/.test(compact)) return `+234${compact.slice(1)}`;
  if (/^00[1-9]\d{6,14}$/.test(compact)) return `+${compact.slice(2)}`;
  return /^\+[1-9]\d{6,14}$/.test(compact) ? compact : text;
}

function readPayment(r: Reading, root: UblNode, doc: Record<string, unknown>, credit: boolean) {
  const means = r.all(root, "cac:PaymentMeans").map((node, i) => {
    const entry: Record<string, unknown> = {};
    r.sources.set(`payment_means[${i}]`, node.path);
    for (const row of PAYMENT) {
      const field = (row.field as string).replace("payment_means[].", "");
      r.put(entry, field, `payment_means[${i}].${field}`, node, row.ubl, row.kind);
    }
    return entry;
  });
  if (means.length > 0) doc.payment_means = means;
  // A credit note has no cbc:DueDate: Peppol puts its due date in the payment means.
  const due = means.find((m) => m.payment_due_date !== undefined)?.payment_due_date;
  if (credit && due !== undefined) doc.due_date = due;
  const terms = r.all(root, "cac:PaymentTerms");
  const notes = terms.map((t) => r.at(t, "cbc:Note")?.text).filter((t): t is string => !!t);
  if (notes.length > 0) doc.payment_terms_note = notes.join("\n");
  r.sources.set("payment_terms_note", terms[0]?.path ?? `${root.path}/cac:PaymentTerms`);
}

/** A category of UNCL 5305 and its percent, as this API's tax category; undefined when refused. */
/**
 * The additional document references this service writes on UBL out (write.ts): the IRN, the QR
 * payload and the signature. Read back, they are this document's own, not something lost.
 */
function ownReferences(r: Reading, root: UblNode, doc: Record<string, unknown>): void {
  for (const node of root.children) {
    if (node.name !== "cac:AdditionalDocumentReference") continue;
    const id = r.peek(node, "cbc:ID")?.text;
    if (id !== doc.irn && id !== "QR" && id !== "SIGNATURE") continue;
    node.used = true;
    for (const child of node.children) child.used = true;
  }
}

/** The UNCL 5305 letter each category read came from: Z and E are both ZERO_VAT at 0%. */
const LETTERS = new WeakMap<object, string>();

/**
 * A line's or an allowance's exempt category takes the exemption of the breakdown's category of
 * the same letter and rate: EN 16931 states the reason once, in the breakdown, and UBL out must
 * write E (not Z) on the line again.
 */
function exemptionsOf(doc: Record<string, unknown>): void {
  const total = (
    doc.tax_total as { tax_subtotal?: { tax_category?: Record<string, unknown> }[] }[] | undefined
  )?.[0];
  const breakdown = (total?.tax_subtotal ?? []).map((s) => s.tax_category).filter((c) => c !== undefined);
  const holders = [
    ...((doc.invoice_line ?? []) as Record<string, unknown>[]),
    ...((doc.allowance_charge ?? []) as Record<string, unknown>[]),
  ];
  for (const holder of holders) {
    const own = holder.tax_category as Record<string, unknown> | undefined;
    const letter = own ? LETTERS.get(own) : undefined;
    if (!own || letter !== "E") continue;
    const match = breakdown.find((b) => LETTERS.get(b) === letter && b.percent === own.percent);
    for (const key of ["exemption_reason_code", "exemption_reason"]) {
      if (own[key] === undefined && match?.[key] !== undefined) own[key] = match[key];
    }
  }
}

function category(r: Reading, node: UblNode | undefined, at: string, exemption: boolean) {
  if (!node) return undefined;
  r.sources.set(at, node.path);
  const letter = r.at(node, "cbc:ID");
  r.at(node, "cac:TaxScheme/cbc:ID");
  if (!letter) return undefined;
  const found = vatFromUbl(letter.text);
  if ("refused" in found) {
    r.refuse(letter.path, found.refused, letter.text);
    return undefined;
  }
  const out: Record<string, unknown> = { id: found.ours };
  r.sources.set(`${at}.id`, letter.path);
  r.put(out, "percent", `${at}.percent`, node, "cbc:Percent", "number");
  if (out.percent === undefined) out.percent = 0;
  if (exemption) {
    r.put(
      out,
      "exemption_reason_code",
      `${at}.exemption_reason_code`,
      node,
      "cbc:TaxExemptionReasonCode",
      "code",
    );
    r.put(out, "exemption_reason", `${at}.exemption_reason`, node, "cbc:TaxExemptionReason", "text");
  }
  if (found.ubl === "O") out.exemption_reason_code = NOT_SUBJECT;
  LETTERS.set(out, found.ubl);
  return out;
}

function readAllowances(r: Reading, root: UblNode, doc: Record<string, unknown>) {
  const entries = r.all(root, "cac:AllowanceCharge").map((node, i) => {
    const at = `allowance_charge[${i}]`;
    r.sources.set(at, node.path);
    const entry: Record<string, unknown> = {};
    for (const row of ALLOWANCE.filter((row) => row.field !== "tax_category.(id, percent)")) {
      r.put(entry, row.field as string, `${at}.${row.field}`, node, row.ubl, row.kind);
    }
    entry.charge_indicator = entry.charge_indicator === "true";
    const tax = category(r, r.at(node, "cac:TaxCategory"), `${at}.tax_category`, false);
    if (tax) entry.tax_category = tax;
    return entry;
  });
  if (entries.length > 0) doc.allowance_charge = entries;
}

function readTaxes(r: Reading, root: UblNode, doc: Record<string, unknown>) {
  const currency = doc.document_currency_code;
  const totals = r.all(root, "cac:TaxTotal");
  const own = totals.find((t) => r.peek(t, "cbc:TaxAmount")?.attrs.currencyID === currency) ?? totals[0];
  for (const other of totals) if (other !== own) other.used = false;
  // BT-111: the VAT total in the tax currency, when that is not the document's.
  const accounting = totals.find(
    (t) =>
      t !== own &&
      doc.tax_currency_code !== currency &&
      r.peek(t, "cbc:TaxAmount")?.attrs.currencyID === doc.tax_currency_code,
  );
  if (accounting) {
    accounting.used = true;
    r.put(
      doc,
      "tax_amount_in_tax_currency",
      "tax_amount_in_tax_currency",
      accounting,
      "cbc:TaxAmount",
      "amount",
    );
  }
  if (!own) return;
  r.sources.set("tax_total[0]", own.path);
  const total: Record<string, unknown> = {};
  r.put(total, "tax_amount", "tax_total[0].tax_amount", own, "cbc:TaxAmount", "amount");
  total.tax_subtotal = r.all(own, "cac:TaxSubtotal").map((node, i) => {
    const at = `tax_total[0].tax_subtotal[${i}]`;
    r.sources.set(at, node.path);
    const sub: Record<string, unknown> = {};
    r.put(sub, "taxable_amount", `${at}.taxable_amount`, node, "cbc:TaxableAmount", "amount");
    r.put(sub, "tax_amount", `${at}.tax_amount`, node, "cbc:TaxAmount", "amount");
    const tax = category(r, r.at(node, "cac:TaxCategory"), `${at}.tax_category`, true);
    if (tax) sub.tax_category = tax;
    return sub;
  });
  doc.tax_total = [total];
}

function readTotals(r: Reading, root: UblNode, doc: Record<string, unknown>) {
  const totals = r.at(root, "cac:LegalMonetaryTotal");
  r.sources.set("legal_monetary_total", totals?.path ?? `${root.path}/cac:LegalMonetaryTotal`);
  for (const row of TOTALS_PLAIN)
    r.put(doc, row.field as string, row.field as string, totals, row.ubl, row.kind);
  for (const row of TOTALS.filter((t) => t.refuse)) {
    const node = r.at(totals, row.ubl);
    if (node && Number(node.text) !== 0)
      r.refuse(node.path, `${row.ubl} ${node.text}: ${row.refuse}`, node.text);
  }
  const entries = (doc.allowance_charge ?? []) as { charge_indicator: boolean; amount?: unknown }[];
  for (const [element, charge] of [
    ["cbc:AllowanceTotalAmount", false],
    ["cbc:ChargeTotalAmount", true],
  ] as const) {
    const node = r.at(totals, element);
    if (!node) continue;
    const sum = entries
      .filter((e) => e.charge_indicator === charge)
      .reduce((s, e) => s + (typeof e.amount === "number" ? e.amount : 0), 0);
    if (Math.abs(sum - Number(node.text)) > 0.005) {
      r.refuse(
        node.path,
        `${element} ${node.text} is not the sum of the document's ${charge ? "charges" : "allowances"}, ${sum.toFixed(2)}: this document carries the ${charge ? "charges" : "allowances"}, not their total`,
        node.text,
      );
    }
  }
}

function readLines(r: Reading, root: UblNode, doc: Record<string, unknown>, credit: boolean) {
  const lines = r.all(root, credit ? "cac:CreditNoteLine" : "cac:InvoiceLine");
  doc.invoice_line = lines.map((node, i) => {
    const at = `invoice_line[${i}]`;
    r.sources.set(at, node.path);
    r.at(node, "cbc:ID");
    const line: Record<string, unknown> = {};
    const quantity = r.at(node, credit ? "cbc:CreditedQuantity" : "cbc:InvoicedQuantity");
    r.sources.set(`${at}.invoiced_quantity`, quantity?.path ?? `${node.path}/cbc:InvoicedQuantity`);
    if (quantity) line.invoiced_quantity = r.convert(quantity, "number");
    for (const row of LINE_PLAIN)
      r.put(line, row.field as string, `${at}.${row.field}`, node, row.ubl, row.kind);
    const unit = quantity ? r.attr(quantity, "unitCode") : undefined;
    if (
      (line.price as { price_unit?: unknown } | undefined)?.price_unit === undefined &&
      unit &&
      unit !== "C62"
    ) {
      setPath(line, "price.price_unit", unit);
    }
    readLineAllowances(r, node, line, at);
    // The base quantity's unit is the quantity's (EN 16931 BT-150 is BT-130).
    const base = r.peek(r.peek(node, "cac:Price"), "cbc:BaseQuantity");
    if (base) r.attr(base, "unitCode");
    const item = r.peek(node, "cac:Item");
    const hs = item?.children
      .filter((c) => c.name === "cac:CommodityClassification")
      .map((c) => r.peek(c, "cbc:ItemClassificationCode"))
      .find((code) => code?.attrs.listID === "HS");
    const hsAt = `${item?.path ?? node.path}/cac:CommodityClassification/cbc:ItemClassificationCode[@listID='HS']`;
    r.sources.set(`${at}.hsn_code`, hs?.path ?? hsAt);
    r.sources.set(`${at}.product_category`, hs ? `${hs.path}/@name` : `${hsAt}/@name`);
    if (hs) {
      r.at(item, "cac:CommodityClassification");
      for (const c of item?.children ?? [])
        if (c.name === "cac:CommodityClassification" && r.peek(c, "cbc:ItemClassificationCode") === hs) {
          c.used = true;
          hs.used = true;
        }
      r.attr(hs, "listID");
      line.hsn_code = /^\d{6}$/.test(hs.text) ? `${hs.text.slice(0, 4)}.${hs.text.slice(4)}` : hs.text;
      const name = r.attr(hs, "name");
      if (name) line.product_category = name;
    }
    const tax = category(r, r.at(item, "cac:ClassifiedTaxCategory"), `${at}.tax_category`, false);
    if (tax) line.tax_category = tax;
    return line;
  });
}

/** A line's allowances as its discount, its charges as its fee: this document has one of each. */
function readLineAllowances(r: Reading, node: UblNode, line: Record<string, unknown>, at: string) {
  const entries = r.all(node, "cac:AllowanceCharge");
  for (const [charge, kind] of [
    [false, "discount"],
    [true, "fee"],
  ] as const) {
    const mine = entries.filter((e) => r.peek(e, "cbc:ChargeIndicator")?.text === String(charge));
    if (mine.length === 0) continue;
    let sum = 0;
    for (const entry of mine) {
      r.at(entry, "cbc:ChargeIndicator");
      const amount = r.at(entry, "cbc:Amount");
      sum += amount ? Number(amount.text) : 0;
      r.sources.set(`${at}.${kind}_amount`, amount?.path ?? entry.path);
    }
    line[`${kind}_amount`] = Math.round(sum * 1e6) / 1e6;
    const only = mine.length === 1 ? mine[0] : undefined;
    const rate = only ? r.at(only, "cbc:MultiplierFactorNumeric") : undefined;
    if (rate && rate.text !== "") {
      line[`${kind}_rate`] = Number(rate.text);
      r.sources.set(`${at}.${kind}_rate`, rate.path);
      r.at(only, "cbc:BaseAmount");
    }
  }
}
