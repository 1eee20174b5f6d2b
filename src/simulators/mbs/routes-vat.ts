import { isRealDate } from "./documents.ts";
import type { Endpoint, SimContext } from "./endpoint.ts";
import { invalid, MbsError, ok, VALIDATION_FAILED } from "./envelopes.ts";
import { isObject } from "./paging.ts";
import { uuidOf } from "./taxpayers.ts";

// The VAT post-payment report (spec section 5): camelCase, amounts as strings in the request and as
// numbers in the answer, `transDate` answered as a timestamp, `vatStatus` as a boolean.

const AMOUNTS = ["baseAmount", "vatRate", "vatCalculated", "otherTaxes", "totalAmount"] as const;
const TEXTS = ["agentTin", "beneficiaryTin", "itemDescription", "vendorTransactionId"] as const;
const AMOUNT = /^\d+(?:\.\d+)?$/;

const path = (name: string) => `vatpaymentrequest.${name.toLowerCase()}`;

function problemsOf(body: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const missing = (name: string) => body[name] === undefined || body[name] === null || body[name] === "";
  for (const name of TEXTS) {
    if (missing(name)) problems.push(`${path(name)} is required`);
    else if (typeof body[name] !== "string") problems.push(`${path(name)} must be a string`);
  }
  for (const name of AMOUNTS) {
    const value = body[name];
    if (missing(name)) problems.push(`${path(name)} is required`);
    else if (typeof value !== "string" || !AMOUNT.test(value)) {
      problems.push(`${path(name)} must be an amount written as a string, e.g. "645000.00"`);
    }
  }
  for (const name of ["currency", "vatStatus"]) {
    const value = body[name];
    if (missing(name)) problems.push(`${path(name)} is required`);
    else if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
      problems.push(`${path(name)} must be a whole number`);
    }
  }
  const date = body.transDate;
  if (missing("transDate")) problems.push(`${path("transDate")} is required`);
  else if (typeof date !== "string" || !isRealDate(date))
    problems.push(`${path("transDate")} must be YYYY-MM-DD`);
  if (body.integrator_service_id !== undefined && typeof body.integrator_service_id !== "string") {
    problems.push("vatpaymentrequest.integrator_service_id must be a string");
  }
  return problems;
}

/**
 * A report is answered once per `vendorTransactionId`: a repeat answers the first report again, even
 * when its other fields differ. The spec does not say what the authority does; this is the
 * simulator's assumption, chosen so that a client retrying after a lost answer does not report twice.
 */
function postPayment(ctx: SimContext, body: unknown) {
  if (!isObject(body)) throw invalid("vatpaymentrequest must be a JSON object");
  const problems = problemsOf(body);
  if (problems.length > 0) throw new MbsError(400, VALIDATION_FAILED, { details: problems.join("; ") });
  const vendorTransactionId = body.vendorTransactionId as string;
  const earlier = ctx.registry.vatReport(vendorTransactionId);
  if (earlier) return ok(earlier);
  const amount = (name: string) => Number(body[name]);
  const report = {
    id: uuidOf(ctx.seed, "vat", vendorTransactionId),
    agentTin: body.agentTin,
    beneficiaryTin: body.beneficiaryTin,
    currency: body.currency,
    transDate: `${body.transDate as string}T00:00:00.000Z`,
    baseAmount: amount("baseAmount"),
    vatRate: amount("vatRate"),
    vatCalculated: amount("vatCalculated"),
    otherTaxes: amount("otherTaxes"),
    totalAmount: amount("totalAmount"),
    vatStatus: body.vatStatus !== 0,
    itemDescription: body.itemDescription,
    vendorTransactionId,
    ...(body.integrator_service_id === undefined
      ? {}
      : { integrator_service_id: body.integrator_service_id }),
    userId: ctx.credentials.user_id,
    createdAt: new Date().toISOString(),
  };
  ctx.registry.addVatReport(vendorTransactionId, report);
  return ok(report);
}

/** The collection's path (no `/api`, camelCase) and the one integrators also call. */
export function vatEndpoints(ctx: SimContext): Endpoint[] {
  return ["/v1/vat/postPayment", "/api/v1/vat/postpayment"].map((url) => ({
    method: "POST" as const,
    url,
    handler: "vat_post_payment",
    handle: (r) => postPayment(ctx, r.body),
  }));
}
