import { createCipheriv, createHash, randomBytes } from "node:crypto";
import { TEXTS, text } from "./checks.ts";
import { checkDocument, REJECT_PREFIX } from "./documents.ts";
import type { Endpoint, SimContext } from "./endpoint.ts";
import { BUSINESS_NOT_FOUND, HANDLERS, invalid, MbsError, notRegistered, ok, tryLater } from "./envelopes.ts";
import { SIGN_PREFIXES } from "./faults.ts";
import { IRN_REFUSED, invoiceNumberOf, irnFits, isRealDate, uuidProblem } from "./irn.ts";
import { isObject, pageOf, queryText } from "./paging.ts";
import { type InvoiceRecord, PAYMENT_STATUSES, type PaymentStatus, type PaymentUpdate } from "./registry.ts";

/**
 * [doc] `irn/validate`: the IRN against the business's template; [client] a mismatch is the one
 * template refusal. `invoice_reference` is [doc] the invoice-number part, but no refusal of a
 * different one is recorded, and integrators send the number as typed (`INV-000071` for an IRN
 * `INV000071-…`): it is required, not compared. The request's own field texts (`irnrequest.…`) are
 * the simulator's [unknown].
 */
function validateIrn(ctx: SimContext, body: unknown) {
  if (!isObject(body)) throw invalid(TEXTS.type("irnrequest", "a JSON object"));
  const businessId = text(body, "business_id", "irnrequest.businessid", true) as string;
  const problem = uuidProblem(businessId);
  if (problem) throw invalid(problem);
  text(body, "invoice_reference", "irnrequest.invoicereference", true);
  const irn = text(body, "irn", "irnrequest.irn", true) as string;
  const taxpayer = ctx.registry.taxpayer(businessId);
  if (!taxpayer) throw invalid("irnrequest.businessid must be a valid business, refer to the entity apis");
  // No issue date here: the date part is checked as a date only.
  if (!irnFits(irn, taxpayer.service_id, { sameDate: false })) throw invalid(IRN_REFUSED);
  return ok({ ok: true, irn });
}

/** The document checks; a failure caused by a REJECT invoice number counts as that fault. */
function checked(ctx: SimContext, body: unknown) {
  try {
    return checkDocument(body, { registry: ctx.registry, rules: ctx.rules(), codes: ctx.codes });
  } catch (err) {
    const irn = isObject(body) && typeof body.irn === "string" ? body.irn : "";
    if (invoiceNumberOf(irn).startsWith(REJECT_PREFIX)) ctx.faults.count("reject");
    throw err;
  }
}

/** [doc] `validate` registers nothing; [client] the `duplicate_at_validate` rule answers a held IRN as sign does. */
function validate(ctx: SimContext, body: unknown) {
  const { irn } = checked(ctx, body);
  if (ctx.rules().duplicate_at_validate && ctx.registry.invoice(irn)) throw tryLater();
  return ok({ ok: true, irn });
}

/**
 * [client] `sign` succeeds with 200; its `data` is [unknown]: `{ok: true, irn, status: "SIGNED"}` here
 * (integrators read `data.ok` from validate, sign and update [client]). A repeated IRN is the 400 with
 * "try again later" in `details`, counted in refusedSigns().
 */
function sign(ctx: SimContext, body: unknown) {
  const { taxpayer, irn, document } = checked(ctx, body);
  if (!ctx.registry.register(irn, taxpayer.business_id, document)) throw tryLater();
  return ok({ ok: true, irn, status: "SIGNED" });
}

/** A document's text field, or null. */
const textOf = (doc: Record<string, unknown>, name: string) =>
  typeof doc[name] === "string" ? (doc[name] as string) : null;

/**
 * [client] `confirm/{IRN}`: whether a sign landed, with `transmitted` and `delivered` (the receiver
 * acknowledged it) flags; integrators also read `issue_date`, `due_date`, `sync_date` (here: when it
 * was registered) and `payment_status`. The rest, and the status for an IRN not registered (a
 * rule), are [unknown].
 */
function confirm(ctx: SimContext, irn: string) {
  const record = ctx.registry.invoice(irn);
  if (!record) throw notRegistered(irn, ctx.rules().confirm_unregistered);
  const { business_id, entry_status, payment_status, transmitted, signed_at, document } = record;
  return ok({
    irn,
    business_id,
    issue_date: textOf(document, "issue_date"),
    due_date: textOf(document, "due_date"),
    sync_date: signed_at,
    entry_status,
    payment_status,
    transmitted,
    delivered: record.acknowledged,
    signed_at,
    transmitted_at: record.transmitted_at,
    delivered_at: record.acknowledged_at,
  });
}

/**
 * [doc] `download/{IRN}`: the registered invoice; its shape is [unknown]. [client] Two integrators
 * read `data.iv_hex`, `data.pub` and `data.data`, an AES-256-CFB encryption of the invoice: the
 * simulator gives them (`pub` the taxpayer's public key as `crypto_keys` serves it, `data` base64 of
 * the document encrypted with the SHA-256 of the taxpayer's certificate: its own choice of key), and
 * beside them the IRN, business, signing time and the document exactly as signed, in the clear.
 */
async function download(ctx: SimContext, irn: string) {
  const { business_id, signed_at, document } = ctx.registry.found(irn);
  const taxpayer = ctx.registry.taxpayer(business_id);
  const key = createHash("sha256")
    .update(Buffer.from(taxpayer?.certificate ?? "", "base64"))
    .digest();
  const iv = randomBytes(16);
  const cipher = createCipheriv("aes-256-cfb", key, iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(document), "utf8"), cipher.final()]);
  return ok({
    irn,
    business_id,
    signed_at,
    document,
    iv_hex: iv.toString("hex"),
    pub: Buffer.from((await taxpayer?.publicKeyPem()) ?? "").toString("base64"),
    data: sealed.toString("base64"),
  });
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
  const text = (name: string) => textOf(doc, name);
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
    // [client] integrators read `sync_date` from a search's items.
    sync_date: record.signed_at,
    created_at: record.signed_at,
  };
}

/** [doc] A business's invoices, with the collection's filters and paging. */
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

/**
 * `update/{IRN}`'s body [doc]; [client] PARTIAL (April 2026) needs the amount paid and when. The
 * request's field texts (`updaterequest.…`) are the simulator's [unknown].
 */
function paymentUpdateOf(body: unknown, canceled: boolean): PaymentUpdate {
  if (!isObject(body)) throw invalid(TEXTS.type("updaterequest", "a JSON object"));
  const allowed = PAYMENT_STATUSES.filter((s) => canceled || s !== "CANCELED");
  const status = text(body, "payment_status", "updaterequest.paymentstatus", true) as string;
  if (!(allowed as string[]).includes(status))
    throw invalid(TEXTS.oneOf("updaterequest.paymentstatus", allowed));
  const { reference, amount, payment_update_date: date } = body;
  if (reference !== undefined && typeof reference !== "string") {
    throw invalid(TEXTS.type("updaterequest.reference", "a string"));
  }
  if (amount !== undefined && !(typeof amount === "number" && Number.isFinite(amount) && amount > 0)) {
    throw invalid("updaterequest.amount must be a number above 0");
  }
  if (date !== undefined && !(typeof date === "string" && (isRealDate(date) || TIMESTAMP.test(date)))) {
    throw invalid("updaterequest.paymentupdatedate must be a valid date value yyyy-mm-dd (e.g: 2024-04-29)");
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

/** [client] Only signed invoices can be updated: an IRN not registered is the 404 of every lookup. */
function update(ctx: SimContext, irn: string, body: unknown) {
  ctx.registry.found(irn);
  const record = ctx.registry.updatePayment(irn, paymentUpdateOf(body, ctx.rules().canceled));
  return ok({ ok: true, irn, payment_status: record.payment_status, payments: record.payments });
}

/** The invoice endpoints: IRN check, validate, sign, confirm, download, search, payment update. */
export function invoiceEndpoints(ctx: SimContext): Endpoint[] {
  const handler = HANDLERS.invoice;
  return [
    { method: "POST", url: "/api/v1/invoice/irn/validate", handler, handle: (r) => validateIrn(ctx, r.body) },
    {
      method: "POST",
      url: "/api/v1/invoice/validate",
      handler,
      extra: ["try_later"],
      handle: (r) => validate(ctx, r.body),
    },
    {
      method: "POST",
      url: "/api/v1/invoice/sign",
      handler,
      extra: ["try_later", "duplicate"],
      prefixes: SIGN_PREFIXES,
      handle: (r) => sign(ctx, r.body),
    },
    {
      method: "GET",
      url: "/api/v1/invoice/confirm/:irn",
      handler,
      handle: (r) => confirm(ctx, r.params.irn ?? ""),
    },
    {
      method: "GET",
      url: "/api/v1/invoice/download/:irn",
      handler,
      handle: (r) => download(ctx, r.params.irn ?? ""),
    },
    {
      method: "GET",
      url: "/api/v1/invoice/:business_id",
      handler,
      handle: (r) => search(ctx, r.params.business_id ?? "", r.query),
    },
    {
      method: "PATCH",
      url: "/api/v1/invoice/update/:irn",
      handler,
      handle: (r) => update(ctx, r.params.irn ?? "", r.body),
    },
  ];
}
