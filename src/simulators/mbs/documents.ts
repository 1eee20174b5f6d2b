import { date, type Fields, key, listed, object, objects, oneOf, TEXTS, text } from "./checks.ts";
import { invalid } from "./envelopes.ts";
import { IRN_REFUSED, invoiceNumberOf, irnFits, uuidProblem } from "./irn.ts";
import { checkLines, checkTaxTotals, checkTotals, documentStatuses, taxCategoryRefusal } from "./lines.ts";
import { isObject } from "./paging.ts";
import { checkParty } from "./parties.ts";
import type { Registry } from "./registry.ts";
import type { ReferenceCodes } from "./resources.ts";
import type { Rules } from "./rules.ts";
import type { Taxpayer } from "./taxpayers.ts";

// The checks of `validate` and `sign` (the MBS spec, section 3), in the order of the document's
// fields; the first rule broken is the answer [client]. Then the business and its IRN template.

const DOC = "invoicerequest.invoice";
const at = (name: string) => `${DOC}.${key(name)}`;

/** The word that marks an invoice number for a permanent validation failure (see faults.ts). */
export const REJECT_PREFIX = "REJECT";

/** [client] `invoice_kind`: B2B, B2C or B2G; required only with the `invoice_kind_required` rule. */
export const INVOICE_KINDS = ["B2B", "B2C", "B2G"] as const;

const TIME = /^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/;

/** [doc] A reference to another invoice: `{irn, issue_date}`. */
function checkReference(reference: Fields, path: string): void {
  text(reference, "irn", `${path}.irn`, true);
  date(reference, "issue_date", `${path}.issuedate`, true);
}

function checkReferences(doc: Fields): void {
  for (const name of ["billing_reference", "additional_document_reference"]) {
    objects(doc, name, at(name), { required: false }).forEach((r, i) => {
      checkReference(r, `${at(name)}[${i}]`);
    });
  }
  for (const name of [
    "dispatch_document_reference",
    "receipt_document_reference",
    "originator_document_reference",
    "contract_document_reference",
  ]) {
    const reference = object(doc, name, at(name), false);
    if (reference) checkReference(reference, at(name));
  }
}

/** The header: dates, type, status, currencies, kind. */
function checkHeader(doc: Fields, rules: Rules, codes: ReferenceCodes): void {
  text(doc, "irn", at("irn"), true);
  date(doc, "issue_date", at("issue_date"), true);
  date(doc, "due_date", at("due_date"), false);
  const time = text(doc, "issue_time", at("issue_time"), false);
  if (time !== undefined && !TIME.test(time)) {
    throw invalid(`${at("issue_time")} must be a valid time value hh:mm:ss (e.g: 17:59:04)`);
  }
  // [recorded] a string code from the invoice-types list; [client] an integer is refused.
  listed(doc, "invoice_type_code", at("invoice_type_code"), {
    required: true,
    codes: codes.invoiceTypes,
    what: "invoice type code",
  });
  oneOf(
    text(doc, "payment_status", at("payment_status"), false),
    documentStatuses(rules),
    at("payment_status"),
  );
  text(doc, "note", at("note"), false);
  // [client] "…taxpointdate must be a valid date value yyyy-mm-dd (e.g: 2024-04-29)".
  date(doc, "tax_point_date", at("tax_point_date"), false);
  listed(doc, "document_currency_code", at("document_currency_code"), {
    required: true,
    codes: codes.currencies,
    what: "currency code",
  });
  // [recorded][client] "…taxcurrencycode is required", although the collection marks it optional [doc].
  listed(doc, "tax_currency_code", at("tax_currency_code"), {
    required: true,
    codes: codes.currencies,
    what: "currency code",
  });
  const kind = text(doc, "invoice_kind", at("invoice_kind"), rules.invoice_kind_required);
  oneOf(kind, INVOICE_KINDS, at("invoice_kind"));
  for (const name of ["accounting_cost", "buyer_reference", "order_reference", "payment_terms_note"]) {
    text(doc, name, at(name), false);
  }
  checkReferences(doc);
}

/** [client] A business id must parse as a UUID (`invalid UUID length: 35`): checked first. */
function businessIdOf(doc: Fields): string {
  const businessId = text(doc, "business_id", at("business_id"), true) as string;
  const problem = uuidProblem(businessId);
  if (problem) throw invalid(problem);
  return businessId;
}

/** The business a well-formed id names, looked up once the document's fields pass. */
function businessOf(businessId: string, registry: Registry): Taxpayer {
  const taxpayer = registry.taxpayer(businessId);
  // [unknown] a well-formed id of no business: the simulator's text, in MBS's style.
  if (!taxpayer) throw invalid(`${at("business_id")} must be a valid business, refer to the entity apis`);
  return taxpayer;
}

export type Checked = { taxpayer: Taxpayer; irn: string; document: Record<string, unknown> };

/** The codes are those of the lists the simulator serves (the real ones when it was given them). */
export type CheckContext = { registry: Registry; rules: Rules; codes: ReferenceCodes };

/**
 * Checks a document for `validate` and `sign` and throws the first problem. An invoice number
 * starting with REJECT fails every time, with the quoted tax-category refusal, once the rest passes.
 */
export function checkDocument(body: unknown, context: CheckContext): Checked {
  const { registry, rules, codes } = context;
  if (!isObject(body)) throw invalid(TEXTS.type(DOC, "a JSON object"));
  const businessId = businessIdOf(body);
  checkHeader(body, rules, codes);
  for (const name of ["accounting_supplier_party", "accounting_customer_party"]) {
    checkParty(body, name, { registry, rules, countries: codes.countries, required: true });
  }
  for (const name of ["payee_party", "tax_representative_party"]) {
    checkParty(body, name, { registry, rules, countries: codes.countries, required: false });
  }
  objects(body, "payment_means", at("payment_means"), { required: false }).forEach((means, i) => {
    text(means, "payment_means_code", `${at("payment_means")}[${i}].paymentmeanscode`, true);
    date(means, "payment_due_date", `${at("payment_means")}[${i}].paymentduedate`, false);
  });
  checkTaxTotals(body);
  checkTotals(body);
  checkLines(body, rules);
  const taxpayer = businessOf(businessId, registry);
  const irn = body.irn as string;
  const sameDate = rules.irn_date_is_issue_date;
  if (!irnFits(irn, taxpayer.service_id, { issueDate: body.issue_date as string, sameDate })) {
    throw invalid(IRN_REFUSED);
  }
  if (invoiceNumberOf(irn).startsWith(REJECT_PREFIX)) throw invalid(taxCategoryRefusal());
  return { taxpayer, irn, document: body };
}
