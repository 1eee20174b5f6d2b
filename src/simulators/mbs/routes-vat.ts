import { createHash } from "node:crypto";
import { date, type Fields, key, listed, minLength, present, TEXTS, text } from "./checks.ts";
import type { Endpoint, SimContext } from "./endpoint.ts";
import { HANDLERS, invalid, ok } from "./envelopes.ts";
import { isObject } from "./paging.ts";
import { MIN_TIN } from "./parties.ts";
import { TAX_CATEGORY_CODES } from "./resources.ts";

// The VAT post-payment report (the MBS spec, section 5), in its two forms. A repeated report (the
// same body in the integrators' form, which carries no id of its own: an invoice may have several
// reports; the same `vendorTransactionId` in the documented form) answers the first one again and
// is not recorded twice: what MBS does is [unknown]; this keeps a client that retries after a lost
// answer from reporting twice.

const AMOUNT = /^\d+(?:\.\d+)?$/;

/** An amount written as a string, e.g. "645000.00" (both forms send strings). */
function amountText(body: Fields, name: string, path: string): string {
  const value = text(body, name, path, true) as string;
  if (!AMOUNT.test(value)) throw invalid(`${path} must be an amount written as a string (e.g: "645000.00")`);
  return value;
}

/** 24 hex digits, as the documented answer's `id` and `userId` are [doc]. */
function hexId(seed: number, ...parts: string[]): string {
  return createHash("sha256")
    .update(["mbs-simulator", seed, ...parts].join("\u0000"))
    .digest("hex")
    .slice(0, 24);
}

/**
 * [client] The integrators' form: `POST /api/v1/vat/postpayment` with the credential headers and a
 * snake_case body of strings; `vat_status` a tax category id. Its answer is [unknown]: the report
 * as recorded, in the `{code, data}` envelope of every `/api/v1` call.
 */
function postPayment(ctx: SimContext, body: unknown) {
  if (!isObject(body)) throw invalid(TEXTS.type("vatpaymentrequest", "a JSON object"));
  const at = (name: string) => `vatpaymentrequest.${key(name)}`;
  const agentTin = text(body, "agent_tin", at("agent_tin"), true);
  minLength(agentTin, MIN_TIN, at("agent_tin"));
  const beneficiaryTin = text(body, "beneficiary_tin", at("beneficiary_tin"), true);
  minLength(beneficiaryTin, MIN_TIN, at("beneficiary_tin"));
  listed(body, "currency", at("currency"), {
    required: true,
    codes: ctx.codes.currencies,
    what: "currency code",
  });
  const irn = text(body, "irn", at("irn"), true) as string;
  for (const name of ["base_amount", "vat_rate", "vat_calculated", "other_taxes", "total_amount"]) {
    amountText(body, name, at(name));
  }
  date(body, "transaction_date", at("transaction_date"), true);
  text(body, "item_description", at("item_description"), true);
  text(body, "integrator_service_id", at("integrator_service_id"), true);
  listed(body, "vat_status", at("vat_status"), {
    required: true,
    codes: TAX_CATEGORY_CODES,
    what: "tax category",
  });
  // The same fields in any order are the same report.
  const fingerprint = createHash("sha256")
    .update(
      JSON.stringify(
        Object.keys(body)
          .sort()
          .map((name) => [name, body[name]]),
      ),
    )
    .digest("hex");
  const earlier = ctx.registry.vatReport(`body:${fingerprint}`);
  if (earlier) return ok(earlier);
  const report = {
    id: hexId(ctx.seed, "vat", irn, fingerprint),
    ...body,
    created_at: new Date().toISOString(),
  };
  ctx.registry.addVatReport(`body:${fingerprint}`, report);
  return ok(report);
}

/** [doc] The documented form's fields: camelCase, amounts as strings, currency and status as numbers. */
function checkDocumented(body: Fields): void {
  const at = (name: string) => `vatpaymentrequest.${name.toLowerCase()}`;
  for (const name of ["agentTin", "beneficiaryTin"]) text(body, name, at(name), true);
  for (const name of ["currency", "vatStatus"]) {
    const value = body[name];
    if (!present(value)) throw invalid(TEXTS.required(at(name)));
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
      throw invalid(TEXTS.type(at(name), "a whole number"));
    }
  }
  date(body, "transDate", at("transDate"), true);
  for (const name of ["baseAmount", "vatRate", "vatCalculated", "otherTaxes", "totalAmount"]) {
    amountText(body, name, at(name));
  }
  for (const name of ["itemDescription", "vendorTransactionId"]) text(body, name, at(name), true);
}

/**
 * [doc] The documented form: `POST /v1/vat/postPayment`, camelCase. [recorded] That path answered the
 * no-route 404, so it exists only under the `documented_vat_path` rule. Its documented answer is a
 * bare record, no envelope: the fields back as numbers, `transDate` a timestamp, `vatStatus` a
 * boolean, `vendorTransactionId` a number (not the value sent), `userId`, `createdAt`, `id`.
 */
function postPaymentDocumented(ctx: SimContext, body: unknown) {
  if (!isObject(body)) throw invalid(TEXTS.type("vatpaymentrequest", "a JSON object"));
  checkDocumented(body);
  const vendorId = body.vendorTransactionId as string;
  const earlier = ctx.registry.vatReport(`vendor:${vendorId}`);
  if (earlier) return { status: 200, body: earlier };
  const amount = (name: string) => Number(body[name]);
  const report = {
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
    vendorTransactionId: Number.parseInt(hexId(ctx.seed, "vendor", vendorId).slice(0, 8), 16) % 1_000_000,
    userId: hexId(ctx.seed, "user", ctx.credentials.user_id),
    createdAt: new Date().toISOString(),
    id: hexId(ctx.seed, "vat", vendorId),
  };
  ctx.registry.addVatReport(`vendor:${vendorId}`, report);
  return { status: 200, body: report };
}

export function vatEndpoints(ctx: SimContext): Endpoint[] {
  return [
    {
      method: "POST",
      url: "/api/v1/vat/postpayment",
      handler: HANDLERS.invoice,
      handle: (r) => postPayment(ctx, r.body),
    },
    {
      method: "POST",
      url: "/v1/vat/postPayment",
      handler: HANDLERS.invoice,
      enabled: (rules) => rules.documented_vat_path,
      handle: (r) => postPaymentDocumented(ctx, r.body),
    },
  ];
}
