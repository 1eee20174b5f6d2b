import { checkDocument, invoiceNumberOf, irnProblems, isRealDate, REJECT_PREFIX } from "./documents.ts";
import type { Endpoint, SimContext } from "./endpoint.ts";
import { BUSINESS_NOT_FOUND, duplicateIrn, invalid, MbsError, ok, SIGN_ANSWER } from "./envelopes.ts";
import { SIGN_PREFIXES } from "./faults.ts";
import { isObject, pageOf, queryText } from "./paging.ts";
import { type InvoiceRecord, PAYMENT_STATUSES, type PaymentStatus, type PaymentUpdate } from "./registry.ts";

/** `irn/validate`: the IRN against the business's template, its number equal to `invoice_reference`. */
function validateIrn(ctx: SimContext, body: unknown) {
  if (!isObject(body)) throw invalid("irnrequest must be a JSON object");
  const problems: string[] = [];
  const text = (name: string) => {
    const value = body[name];
    if (typeof value === "string" && value !== "") return value;
    problems.push(`irnrequest.${name.replaceAll("_", "")} is required`);
    return undefined;
  };
  const businessId = text("business_id");
  const reference = text("invoice_reference");
  const irn = text("irn");
  const taxpayer = businessId === undefined ? undefined : ctx.registry.taxpayer(businessId);
  if (businessId !== undefined && !taxpayer) problems.push("irnrequest.businessid is invalid");
  if (irn !== undefined && taxpayer) {
    const { parts, problems: found } = irnProblems(irn, taxpayer.service_id, "irnrequest.irn");
    problems.push(...found);
    if (parts && reference !== undefined && parts.invoiceNumber !== reference) {
      problems.push("irnrequest.irn does not carry the invoice reference as its invoice number");
    }
  }
  if (problems.length > 0) throw invalid(problems.join("; "));
  return ok({ irn, valid: true });
}

/** The document checks; a failure caused by a REJECT invoice number counts as that fault. */
function checked(ctx: SimContext, body: unknown) {
  try {
    return checkDocument(body, ctx.registry);
  } catch (err) {
    const irn = isObject(body) && typeof body.irn === "string" ? body.irn : "";
    if (invoiceNumberOf(irn).startsWith(REJECT_PREFIX)) ctx.faults.count("reject");
    throw err;
  }
}

function sign(ctx: SimContext, body: unknown) {
  const { taxpayer, irn, document } = checked(ctx, body);
  if (!ctx.registry.register(irn, taxpayer.business_id, document)) throw duplicateIrn(irn);
  return ok({ irn, status: SIGN_ANSWER.status }, SIGN_ANSWER.code, SIGN_ANSWER.message);
}

/** `confirm/{IRN}`: whether an earlier sign landed, and where the invoice stands since. */
function confirmation(record: InvoiceRecord) {
  const { irn, business_id, entry_status, payment_status, transmitted, acknowledged, signed_at } = record;
  return { irn, business_id, entry_status, payment_status, transmitted, acknowledged, signed_at };
}

const FILTERS = [
  "irn",
  "payment_status",
  "entry_status",
  "invoice_type_code",
  "issue_date",
  "due_date",
  "tax_currency_code",
  "document_currency_code",
] as const;

function summary(record: InvoiceRecord) {
  const doc = record.document;
  const text = (name: string) => (typeof doc[name] === "string" ? (doc[name] as string) : null);
  return {
    irn: record.irn,
    business_id: record.business_id,
    invoice_type_code: text("invoice_type_code"),
    issue_date: text("issue_date"),
    due_date: text("due_date"),
    document_currency_code: text("document_currency_code"),
    tax_currency_code: text("tax_currency_code"),
    payment_status: record.payment_status,
    entry_status: record.entry_status,
    created_at: record.signed_at,
  };
}

function search(ctx: SimContext, businessId: string, query: Record<string, unknown>) {
  if (!ctx.registry.taxpayer(businessId)) throw new MbsError(404, BUSINESS_NOT_FOUND);
  const wanted = FILTERS.flatMap((name) => {
    const value = queryText(query, name);
    return value === undefined ? [] : [[name, value] as const];
  });
  const items = ctx.registry
    .invoices()
    .filter((r) => r.business_id === businessId)
    .map(summary)
    .filter((s) => wanted.every(([name, value]) => s[name] === value));
  return ok(
    pageOf(items, query, ["created_at", "irn", "issue_date", "due_date", "payment_status", "entry_status"]),
  );
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/;

/** `update/{IRN}`'s body; PARTIAL (April 2026) needs the amount paid and when. */
function paymentUpdateOf(body: unknown): PaymentUpdate {
  if (!isObject(body)) throw invalid("updaterequest must be a JSON object");
  const status = body.payment_status;
  if (status === undefined || status === "") throw invalid("updaterequest.paymentstatus is required");
  if (typeof status !== "string" || !(PAYMENT_STATUSES as readonly string[]).includes(status)) {
    throw invalid(`updaterequest.paymentstatus must be one of ${PAYMENT_STATUSES.join(", ")}`);
  }
  const { reference, amount, payment_update_date: date } = body;
  if (reference !== undefined && typeof reference !== "string")
    throw invalid("updaterequest.reference is invalid");
  if (amount !== undefined && !(typeof amount === "number" && Number.isFinite(amount) && amount > 0)) {
    throw invalid("updaterequest.amount must be a number above 0");
  }
  if (date !== undefined && !(typeof date === "string" && (isRealDate(date) || TIMESTAMP.test(date)))) {
    throw invalid("updaterequest.paymentupdatedate must be a date (YYYY-MM-DD) or a timestamp");
  }
  if (status === "PARTIAL" && amount === undefined)
    throw invalid("updaterequest.amount is required for PARTIAL");
  if (status === "PARTIAL" && date === undefined) {
    throw invalid("updaterequest.paymentupdatedate is required for PARTIAL");
  }
  return {
    payment_status: status as PaymentStatus,
    ...(reference === undefined ? {} : { reference }),
    ...(amount === undefined ? {} : { amount }),
    ...(date === undefined ? {} : { payment_update_date: date }),
  };
}

function update(ctx: SimContext, irn: string, body: unknown) {
  ctx.registry.found(irn);
  const record = ctx.registry.updatePayment(irn, paymentUpdateOf(body));
  return ok({ irn, payment_status: record.payment_status, payments: record.payments });
}

/** The invoice endpoints: IRN check, validate, sign, confirm, download, search, payment update. */
export function invoiceEndpoints(ctx: SimContext): Endpoint[] {
  const { registry } = ctx;
  return [
    {
      method: "POST",
      url: "/api/v1/invoice/irn/validate",
      handler: "validate_irn",
      handle: (r) => validateIrn(ctx, r.body),
    },
    {
      method: "POST",
      url: "/api/v1/invoice/validate",
      handler: "validate_invoice",
      handle: (r) => ok({ irn: checked(ctx, r.body).irn, valid: true }),
    },
    {
      method: "POST",
      url: "/api/v1/invoice/sign",
      handler: "sign_invoice",
      extra: ["duplicate"],
      prefixes: SIGN_PREFIXES,
      handle: (r) => sign(ctx, r.body),
    },
    {
      method: "GET",
      url: "/api/v1/invoice/confirm/:irn",
      handler: "confirm_invoice",
      handle: (r) => ok(confirmation(registry.found(r.params.irn ?? ""))),
    },
    {
      method: "GET",
      url: "/api/v1/invoice/download/:irn",
      handler: "download_invoice",
      handle: (r) => {
        const { irn, business_id, signed_at, document } = registry.found(r.params.irn ?? "");
        return ok({ irn, business_id, signed_at, document });
      },
    },
    {
      method: "GET",
      url: "/api/v1/invoice/:business_id",
      handler: "search_invoices",
      handle: (r) => search(ctx, r.params.business_id ?? "", r.query),
    },
    {
      method: "PATCH",
      url: "/api/v1/invoice/update/:irn",
      handler: "update_invoice",
      handle: (r) => update(ctx, r.params.irn ?? "", r.body),
    },
  ];
}
