import { invalid, MbsError, VALIDATION_FAILED } from "./envelopes.ts";
import { isObject } from "./paging.ts";
import type { Registry } from "./registry.ts";
import { INVOICE_TYPE_CODES } from "./resources.ts";
import type { Taxpayer } from "./taxpayers.ts";

// The checks of `validate` and `sign`: the fields the spec names as required, each reported as the
// authority does (`invoicerequest.invoice.taxcurrencycode is required`: the lower-cased dotted path
// without underscores). Whether the sandbox checks arithmetic is [unknown] in the spec, so the totals
// are not checked: a connector must not learn to rely on the simulator catching a wrong sum.

/** `{{invoice_number}}-<SERVICE_ID>-{{YYYYMMDD}}`: how the entity's business announces its template. */
export function irnTemplate(serviceId: string): string {
  return `{{invoice_number}}-${serviceId}-{{YYYYMMDD}}`;
}

const IRN_SHAPE = /^([A-Za-z0-9]+)-([A-Za-z0-9]+)-(\d{8})$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A calendar date that exists (2026-02-30 does not). */
export function isRealDate(text: string): boolean {
  const m = ISO_DATE.exec(text);
  if (!m) return false;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return date.toISOString().slice(0, 10) === text;
}

/** The word that marks an invoice number for a permanent validation failure (see faults.ts). */
export const REJECT_PREFIX = "REJECT";

export function invoiceNumberOf(irn: string): string {
  return irn.split("-")[0] ?? "";
}

export type IrnParts = { invoiceNumber: string; serviceId: string; date: string };

/**
 * The problems of an IRN against the business's template: `{invoice number}-{service id}-{YYYYMMDD}`,
 * the number alphanumeric (a hyphen would make the parts ambiguous), the date a real one.
 */
export function irnProblems(
  irn: string,
  serviceId: string,
  path: string,
): { parts?: IrnParts; problems: string[] } {
  const m = IRN_SHAPE.exec(irn);
  const template = `does not match the irn template ${irnTemplate(serviceId)}`;
  if (!m) return { problems: [`${path} ${template}`] };
  const [, invoiceNumber = "", service = "", digits = ""] = m;
  const date = `${digits.slice(0, 4)}-${digits.slice(4, 6)}-${digits.slice(6)}`;
  const problems: string[] = [];
  if (service !== serviceId) problems.push(`${path} ${template}: the service id is not the business's`);
  if (!isRealDate(date)) problems.push(`${path} has an invalid date ${digits}`);
  return { parts: { invoiceNumber, serviceId: service, date }, problems };
}

const field = (name: string) => `invoicerequest.invoice.${name.replaceAll("_", "")}`;

function requiredText(doc: Record<string, unknown>, name: string, problems: string[]): string | undefined {
  const value = doc[name];
  if (value === undefined || value === null || value === "") problems.push(`${field(name)} is required`);
  else if (typeof value !== "string") problems.push(`${field(name)} must be a string`);
  else return value;
  return undefined;
}

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

/** A party is either a reference (`id` of a party created with `/invoice/party`) or carries tin and email. */
function partyProblems(value: unknown, name: string, registry: Registry): string[] {
  const path = field(name);
  if (value === undefined || value === null) return [`${path} is required`];
  if (!isObject(value)) return [`${path} must be an object`];
  if (value.id !== undefined) {
    return typeof value.id === "string" && registry.party(value.id) ? [] : [`${path}.id is invalid`];
  }
  const problems: string[] = [];
  if (typeof value.tin !== "string" || value.tin.trim() === "") problems.push(`${path}.tin is required`);
  if (value.email === undefined || value.email === "") problems.push(`${path}.email is required`);
  else if (typeof value.email !== "string" || !EMAIL.test(value.email))
    problems.push(`${path}.email is invalid`);
  return problems;
}

function headerProblems(doc: Record<string, unknown>, problems: string[]): void {
  const issueDate = requiredText(doc, "issue_date", problems);
  if (issueDate !== undefined && !isRealDate(issueDate)) problems.push(`${field("issue_date")} is invalid`);
  const type = doc.invoice_type_code;
  // Integrators report that an integer code is refused: the code is a string.
  if (type === undefined || type === null || type === "")
    problems.push(`${field("invoice_type_code")} is required`);
  else if (typeof type !== "string") problems.push(`${field("invoice_type_code")} must be a string`);
  else if (!(INVOICE_TYPE_CODES as readonly string[]).includes(type)) {
    problems.push(`${field("invoice_type_code")} is invalid`);
  }
  for (const name of ["document_currency_code", "tax_currency_code"]) {
    const code = requiredText(doc, name, problems);
    if (code !== undefined && !/^[A-Z]{3}$/.test(code)) problems.push(`${field(name)} is invalid`);
  }
}

function irnOfDocument(doc: Record<string, unknown>, taxpayer: Taxpayer | undefined, problems: string[]) {
  const irn = requiredText(doc, "irn", problems);
  if (irn === undefined || taxpayer === undefined) return irn;
  const { parts, problems: found } = irnProblems(irn, taxpayer.service_id, field("irn"));
  problems.push(...found);
  const issueDate = typeof doc.issue_date === "string" ? doc.issue_date : undefined;
  if (parts && issueDate && isRealDate(issueDate) && parts.date !== issueDate) {
    problems.push(`${field("irn")} date must be the issue date ${issueDate.replaceAll("-", "")}`);
  }
  return irn;
}

export type Checked = { taxpayer: Taxpayer; irn: string; document: Record<string, unknown> };

/**
 * Checks a document for `validate` and `sign`; every problem found is reported, joined by "; ", in one
 * 400. An invoice number starting with REJECT fails here every time, with the problems it may also have.
 */
export function checkDocument(body: unknown, registry: Registry): Checked {
  if (!isObject(body)) throw invalid("invoicerequest.invoice must be a JSON object");
  const problems: string[] = [];
  const businessId = requiredText(body, "business_id", problems);
  const taxpayer = businessId === undefined ? undefined : registry.taxpayer(businessId);
  if (businessId !== undefined && !taxpayer) problems.push(`${field("business_id")} is invalid`);
  const irn = irnOfDocument(body, taxpayer, problems);
  headerProblems(body, problems);
  problems.push(...partyProblems(body.accounting_supplier_party, "accounting_supplier_party", registry));
  problems.push(...partyProblems(body.accounting_customer_party, "accounting_customer_party", registry));
  if (body.legal_monetary_total === undefined) problems.push(`${field("legal_monetary_total")} is required`);
  else if (!isObject(body.legal_monetary_total))
    problems.push(`${field("legal_monetary_total")} must be an object`);
  const lines = body.invoice_line;
  if (lines === undefined) problems.push(`${field("invoice_line")} is required`);
  else if (!Array.isArray(lines) || lines.length === 0 || !lines.every(isObject)) {
    problems.push(`${field("invoice_line")} must be a non-empty list of lines`);
  }
  if (irn !== undefined && invoiceNumberOf(irn).startsWith(REJECT_PREFIX)) {
    problems.push(`${field("invoice_line")} is invalid`);
  }
  if (problems.length > 0 || !taxpayer || irn === undefined) {
    throw new MbsError(400, VALIDATION_FAILED, { details: problems.join("; ") });
  }
  return { taxpayer, irn, document: body };
}
