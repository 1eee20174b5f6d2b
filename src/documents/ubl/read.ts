import { parseIrn } from "../../crypto/irn.ts";
import type { Violation } from "../../errors.ts";
import { typeFromUbl } from "./codes.ts";
import { HEADER, PARTY, PAYMENT, plainRows } from "./mapping.ts";
import { exemptionsOf, readAllowances, readLines, readTaxes, readTotals } from "./read-amounts.ts";
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

const HEADER_PLAIN = plainRows(HEADER).filter(
  (r) => !["irn", "note", "due_date"].includes(r.field as string),
);
const PARTY_PLAIN = plainRows(PARTY).filter((r) => r.field !== "party_name" && r.field !== "tin");

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
  if (typeof out.telephone === "string") {
    const read = telephone(out.telephone);
    out.telephone = read;
    // A number written without its country code cannot be made international by guessing one; it
    // is optional, so it is left out, said, and the rest of the party is read.
    const node = r.peek(r.peek(party, "cac:Contact"), "cbc:Telephone");
    if (node && !read.trim().startsWith("+")) {
      delete out.telephone;
      r.dropped(
        node,
        `the telephone '${node.text}'`,
        "it has no country code (+ and digits), which this API's telephone needs",
      );
    }
  }
  r.sources.set(`${field}.postal_address`, address?.path ?? `${party.path}/cac:PostalAddress`);
  return out;
}

const INTERNATIONAL = /^\+[1-9]\d{6,14}$/;

/**
 * A telephone number as this API writes it (E.164, `+2348031234567`): UBL's is free text, and
 * Nigerian ERPs write the local form (`0803 123 4567`) as often as the international one. Spaces,
 * dots, hyphens and brackets are dropped, and a Nigerian number's leading 0 is its +234. Anything
 * else is kept as written: with a leading + for the validation to report on its element, without
 * one to be left out by the party's reader.
 */
export function telephone(text: string): string {
  const compact = text.replace(/[\s.()-]/g, "");
  if (/^0[789]\d{9}$/.test(compact)) return `+234${compact.slice(1)}`;
  if (/^00[1-9]\d{6,14}$/.test(compact)) return `+${compact.slice(2)}`;
  return INTERNATIONAL.test(compact) ? compact : text;
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
