/**
 * IRN template: `{invoice number}-{service id}-{YYYYMMDD}`: an alphanumeric invoice number, the
 * business's 8-character service id, and the issue date as a real calendar date.
 */
const IRN_SHAPE = /^([A-Za-z0-9]+)-([A-Za-z0-9]+)-(\d{8})$/;

export type ParsedIrn = { invoiceNumber: string; serviceId: string; date: string };

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function isRealDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number));
}

/** Returns the parsed IRN, or the reason it does not fit the template. */
export function parseIrn(irn: string): ParsedIrn | { error: string } {
  const m = IRN_SHAPE.exec(irn);
  if (!m) {
    return {
      error: `IRN '${irn}' must look like {invoice number}-{service id}-{YYYYMMDD}, e.g. INV0001-94ND90NR-20240611`,
    };
  }
  const [, invoiceNumber = "", serviceId = "", compact = ""] = m;
  if (!/^[A-Z0-9]{8}$/.test(serviceId)) {
    return {
      error: `IRN '${irn}': the service id segment '${serviceId}' must be 8 uppercase letters or digits`,
    };
  }
  const date = `${compact.slice(0, 4)}-${compact.slice(4, 6)}-${compact.slice(6)}`;
  if (!isRealDate(date))
    return { error: `IRN '${irn}': the date segment '${compact}' is not a real calendar date` };
  return { invoiceNumber, serviceId, date };
}

/** Checks an IRN against the template of the business with `serviceId`; null when it fits. */
export function irnProblem(irn: string, serviceId: string): string | null {
  const parsed = parseIrn(irn);
  if ("error" in parsed) return parsed.error;
  if (parsed.serviceId !== serviceId) {
    return `IRN '${irn}': the service id segment '${parsed.serviceId}' is not this business's service id '${serviceId}'`;
  }
  return null;
}
