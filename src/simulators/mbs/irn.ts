// The IRN and its template (the MBS spec, section 6), and the date formats the checks share.

/** [client] The one refusal of an IRN that does not follow the business's template, whatever is wrong. */
export const IRN_REFUSED = "irn validation failed for this business, refer to the template and try again";

/**
 * [recorded] How the entity's business announces its template: the service id literal in the middle,
 * the example date the recorded session's day.
 */
export function irnTemplate(serviceId: string): string {
  return `{{invoice_id(e.g:INV00XXX)}}-${serviceId}-{{YYYYMMDD(e.g:20250629)}}`;
}

/**
 * [doc] `{invoice number}-{service id}-{YYYYMMDD}`; [client] the invoice number upper-case letters
 * and digits only (a hyphen would make the parts ambiguous); [doc][recorded] an 8-character service id.
 */
const IRN_SHAPE = /^([A-Z0-9]+)-([A-Z0-9]{8})-(\d{8})$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A calendar date that exists, written YYYY-MM-DD (2026-02-30 does not). */
export function isRealDate(text: string): boolean {
  const m = ISO_DATE.exec(text);
  if (!m) return false;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return date.toISOString().slice(0, 10) === text;
}

export type IrnParts = { invoiceNumber: string; serviceId: string; date: string };

/** The parts of a well-formed IRN whose date exists; undefined for anything else. */
export function irnParts(irn: string): IrnParts | undefined {
  const m = IRN_SHAPE.exec(irn);
  if (!m) return undefined;
  const [, invoiceNumber = "", serviceId = "", digits = ""] = m;
  const date = `${digits.slice(0, 4)}-${digits.slice(4, 6)}-${digits.slice(6)}`;
  return isRealDate(date) ? { invoiceNumber, serviceId, date } : undefined;
}

/**
 * Whether an IRN follows a business's template. The date part must equal the issue date only when
 * asked (`irn_date_is_issue_date`): [doc] the authority's own example breaks it, so by default not.
 */
export function irnFits(
  irn: string,
  serviceId: string,
  options: { issueDate?: string | undefined; invoiceReference?: string | undefined; sameDate: boolean },
): boolean {
  const parts = irnParts(irn);
  if (!parts || parts.serviceId !== serviceId) return false;
  if (options.invoiceReference !== undefined && parts.invoiceNumber !== options.invoiceReference)
    return false;
  return !(options.sameDate && options.issueDate !== undefined && parts.date !== options.issueDate);
}

/** The invoice-number part of an IRN, for the fault prefixes (TRANSIENT…, REJECT…). */
export function invoiceNumberOf(irn: string): string {
  return irn.split("-")[0] ?? "";
}

/**
 * [client] A `business_id` that is not a UUID is answered with the UUID parser's own words, e.g.
 * `invalid UUID length: 35`; a UUID-long text that is not one, `invalid UUID format`.
 */
export function uuidProblem(text: string): string | undefined {
  const plain = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
  if (plain.test(text)) return undefined;
  // The lengths the parser takes: 36 (plain), 38 ({…}), 45 (urn:uuid:…), 32 (hex only).
  return [32, 36, 38, 45].includes(text.length)
    ? "invalid UUID format"
    : `invalid UUID length: ${text.length}`;
}
