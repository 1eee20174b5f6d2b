import { parseIrn } from "../crypto/irn.ts";
import { MAX_LINES } from "../documents/schema.ts";
import type { RuleContext } from "../documents/validation/rules/types.ts";
import type { ValidationResult } from "../documents/validation/validation.ts";
import { lineCount, validateInvoice } from "../documents/validation/validation.ts";
import type { Violation } from "../errors.ts";
import { amountFinding, amountOf } from "./amount.ts";

/** Runs this service's validation rules over a document: in place, or on the validation thread. */
export type Validate = (body: unknown, ctx: RuleContext) => ValidationResult | Promise<ValidationResult>;

/** An invoice as a source hands it over: its document, and what the source says of it besides. */
export type Incoming = {
  document: Record<string, unknown>;
  /** The IRN the source lists it under, when the document does not carry one. */
  irn?: string;
  /** The buyer's TIN as the source says it, when the document references its party by id only. */
  customerTin?: string;
  supplierTin?: string;
  /** When the source says it was transmitted, as it says it. */
  transmittedAt?: string;
  /** Why the source could not read this entry (it breaks a bound): reported, never stored. */
  setAside?: string;
};

/** What the checks make of an incoming invoice: whose it is, under which IRN, and what is wrong with it. */
export type Checked =
  | {
      accepted: true;
      irn: string;
      businessId: string;
      customerTin: string;
      supplierTin: string | null;
      supplierName: string | null;
      issueDate: string | null;
      invoiceTypeCode: string | null;
      currency: string | null;
      payableAmount: string | null;
      /** The supplier's mistakes, each named by its rule: reported, never a reason to drop the invoice. */
      warnings: Violation[];
    }
  /** Nothing to file it under: no usable IRN, or no business of this service is its buyer. */
  | { accepted: false; irn: string | null; reason: string };

/** The most findings kept for one received invoice: the first ones name the problem. */
export const MAX_RECEIVED_FINDINGS = 50;
/** Longer than any IRN (at most 50 characters in one APP's schema): the rest is not read. */
const MAX_IRN = 100;
/**
 * How much of a finding's `actual` value is kept: enough to see the mistake. A supplier's 1 MB
 * field kept whole in each finding made 50 invoices a 551 MB database.
 */
export const MAX_ACTUAL = 200;

/** A finding's `actual`, kept whole when short, else an excerpt that says it is one. */
export function excerpt(actual: unknown): unknown {
  if (actual === undefined || actual === null || typeof actual === "number" || typeof actual === "boolean")
    return actual;
  let text: string;
  try {
    text = typeof actual === "string" ? actual : (JSON.stringify(actual) ?? "");
  } catch {
    return "(not shown)";
  }
  if (text.length <= MAX_ACTUAL) return actual;
  return `${text.slice(0, MAX_ACTUAL)}… (${text.length.toLocaleString("en-US")} characters)`;
}

/** A finding as it is kept: its values bounded. */
const bounded = (finding: Violation): Violation => {
  const kept = { ...finding, message: finding.message.slice(0, 1000) };
  if ("actual" in finding) kept.actual = excerpt(finding.actual);
  if ("expected" in finding) kept.expected = excerpt(finding.expected);
  return kept;
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const text = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v.trim() : null);
/** TINs compare without spaces and case, as the validation's supplier rule compares them. */
export const plainTin = (tin: string) => tin.replace(/\s+/g, "").toUpperCase();

/** `invoice_line[3].hsn_code` → the line it is on. */
function lineOf(path: string, doc: Record<string, unknown>): Record<string, unknown> | undefined {
  const match = /^invoice_line\[(\d+)\]\./.exec(path);
  const lines = doc.invoice_line;
  if (!match || !Array.isArray(lines)) return undefined;
  const line: unknown = lines[Number(match[1])];
  return isObject(line) ? line : undefined;
}

/**
 * Whether a finding of this service's rules is a mistake of the supplier's, rather than a way MBS's
 * document differs from this API's. MBS documents fields this API does not have (a service line's
 * `isic_code` and `service_category` [doc]): unknown to this API's schema, not wrong; and a line
 * that names its ISIC class needs no HS code there.
 */
function theSuppliers(finding: Violation, doc: Record<string, unknown>): boolean {
  if (finding.rule === "unknown_field") return false;
  if (finding.rule === "required" && finding.path.endsWith(".hsn_code"))
    return lineOf(finding.path, doc)?.isic_code === undefined;
  return true;
}

/**
 * The checks of an invoice received from a supplier, as far as the evidence allows (the buyer's side
 * of the access point). It must have an IRN and be addressed, by its customer's TIN, to one of this
 * service's businesses (`buyers`: plain TIN → business id): otherwise there is no inbox to file it in.
 * Everything else is the supplier's: the IRN's template, the arithmetic, the codes and dates are
 * checked by this service's own validation rules, and every finding, error or warning there, is a
 * warning here, named by its rule.
 */
/**
 * Whose an incoming invoice is, as the checks below decide it (its buyer and its IRN), without
 * checking it: a pull that goes on where one stopped skips what is stored already.
 */
export function addressOf(
  incoming: Incoming,
  buyers: ReadonlyMap<string, string>,
): { businessId: string; irn: string } | undefined {
  const doc = incoming.document;
  const irn = text(doc.irn) ?? text(incoming.irn);
  const customer = isObject(doc.accounting_customer_party) ? doc.accounting_customer_party : {};
  const customerTin = text(customer.tin) ?? text(incoming.customerTin);
  if (irn === null || irn.length > MAX_IRN || customerTin === null) return undefined;
  const businessId = buyers.get(plainTin(customerTin));
  return businessId === undefined ? undefined : { businessId, irn };
}

export async function checkReceived(
  incoming: Incoming,
  buyers: ReadonlyMap<string, string>,
  validate: Validate = validateInvoice,
): Promise<Checked> {
  const doc = incoming.document;
  const irn = text(doc.irn) ?? text(incoming.irn);
  if (irn === null) return { accepted: false, irn: null, reason: "the invoice has no IRN" };
  if (irn.length > MAX_IRN)
    return { accepted: false, irn: irn.slice(0, MAX_IRN), reason: `its IRN is over ${MAX_IRN} characters` };
  const customer = isObject(doc.accounting_customer_party) ? doc.accounting_customer_party : {};
  const supplier = isObject(doc.accounting_supplier_party) ? doc.accounting_supplier_party : {};
  const customerTin = text(customer.tin) ?? text(incoming.customerTin);
  if (customerTin === null)
    return { accepted: false, irn, reason: "the invoice names no customer TIN: no buyer to file it for" };
  const businessId = buyers.get(plainTin(customerTin));
  if (businessId === undefined)
    return {
      accepted: false,
      irn,
      reason: `its customer TIN ${customerTin.slice(0, 40)} is not the TIN of a business of this service`,
    };
  const supplierTin = text(supplier.tin) ?? text(incoming.supplierTin);
  const warnings: Violation[] = [];
  const parsed = parseIrn(irn);
  if ("error" in parsed)
    warnings.push({ path: "irn", rule: "irn_template", message: parsed.error, actual: excerpt(irn) });
  const lines = lineCount(doc);
  if (lines > MAX_LINES) {
    // Beyond what a signed invoice may hold: kept for its buyer, with the reason, and not checked
    // line by line (the checks' cost grows with the lines; a signed invoice never costs more).
    warnings.push({
      path: "invoice_line",
      rule: "document_bounds",
      message: `the invoice has ${lines.toLocaleString("en-US")} lines; a signed invoice has at most ${MAX_LINES.toLocaleString("en-US")}, so its lines were not checked`,
    });
  } else {
    // The rules' context is the supplier's: its IRN is checked against its own service id, its TIN
    // against itself (a received invoice is not this service's business signing).
    const findings = await validate(
      { ...doc, irn },
      {
        business: {
          id: typeof doc.business_id === "string" ? doc.business_id : "",
          service_id: "error" in parsed ? "" : parsed.serviceId,
          ...(supplierTin === null ? {} : { tin: supplierTin }),
        },
      },
    );
    for (const finding of [...findings.errors, ...findings.warnings]) {
      if (warnings.length >= MAX_RECEIVED_FINDINGS) break;
      // The IRN's own shape is reported once, above.
      if (finding.rule === "irn_template" || !theSuppliers(finding, doc)) continue;
      warnings.push(bounded(finding));
    }
    const beyond =
      findings.errors.length + findings.warnings.length + findings.errorsBeyond - warnings.length;
    if (beyond > 0 && warnings.length >= MAX_RECEIVED_FINDINGS)
      warnings.push({
        path: "(document)",
        rule: "more_findings",
        message: `${beyond} more findings not listed`,
      });
  }
  const totals = isObject(doc.legal_monetary_total) ? doc.legal_monetary_total : {};
  const payable = amountOf(totals.payable_amount);
  if (payable.problem !== undefined)
    warnings.push(amountFinding("legal_monetary_total.payable_amount", payable));
  return {
    accepted: true,
    irn,
    businessId,
    customerTin,
    supplierTin,
    supplierName: text(supplier.party_name)?.slice(0, 300) ?? null,
    issueDate: text(doc.issue_date)?.slice(0, 40) ?? null,
    invoiceTypeCode: text(doc.invoice_type_code)?.slice(0, 40) ?? null,
    currency: text(doc.document_currency_code)?.slice(0, 10) ?? null,
    payableAmount: payable.kept,
    warnings,
  };
}
