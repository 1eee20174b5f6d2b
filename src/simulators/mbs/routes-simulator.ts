import type { Endpoint, SimContext } from "./endpoint.ts";
import { HANDLERS, INVALID_SIMULATOR_REQUEST, MbsError, ok } from "./envelopes.ts";
import { MAX_INBOUND } from "./inbound.ts";
import { irnParts, isRealDate } from "./irn.ts";
import { isObject } from "./paging.ts";
import { uuidOf } from "./taxpayers.ts";

// The simulator's own routes, beside MBS's: a test (or a demo) makes other APPs' sellers send
// invoices to the taxpayers while the simulator runs, and reads how each was acknowledged. They need
// the APP credential and take no injected fault (endpoint.ts, `control`); bad input is a 400 in the
// error envelope, handler `simulator`.

const problem = (details: string) =>
  new MbsError(400, INVALID_SIMULATOR_REQUEST, { handler: HANDLERS.simulator, details });

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/;
const COUNT_FIELDS = ["count", "buyer_tin", "wrong_total", "transmitted_at"];
const DOCUMENT_FIELDS = ["document", "transmitted_at"];

/** `transmitted_at`, an ISO 8601 timestamp with its offset; now when not given. */
function transmittedAtOf(body: Record<string, unknown>): string {
  const value = body.transmitted_at;
  if (value === undefined) return new Date().toISOString();
  if (
    typeof value !== "string" ||
    !TIMESTAMP.test(value) ||
    !isRealDate(value.slice(0, 10)) ||
    Number.isNaN(Date.parse(value))
  ) {
    throw problem("transmitted_at must be an ISO 8601 timestamp with its offset, e.g. 2026-11-15T09:30:00Z");
  }
  return new Date(value).toISOString();
}

/**
 * A caller's document, kept as it is (odd ones too: the buyer's side is under test), addressed by its
 * customer party's TIN. What MBS would have refused at sign is refused here: an IRN that is not
 * `{invoice number}-{service id}-{YYYYMMDD}`, or one registered already; and a seller that is one
 * of the simulator's taxpayers, whose invoices go through sign and transmit.
 */
function deliverDocument(ctx: SimContext, document: unknown, transmittedAt: string): string {
  if (!isObject(document)) throw problem("document must be a JSON object");
  const irn = document.irn;
  const parts = typeof irn === "string" ? irnParts(irn) : undefined;
  if (typeof irn !== "string" || !parts) {
    throw problem(
      "document.irn must be an IRN {invoice number}-{service id}-{YYYYMMDD}: upper-case letters and digits, 8 characters, a date",
    );
  }
  const customer = document.accounting_customer_party;
  const tin = isObject(customer) && typeof customer.tin === "string" ? customer.tin : "";
  if (!ctx.registry.taxpayerByTin(tin)) {
    throw problem(
      "document.accounting_customer_party.tin must be the TIN of one of the simulator's taxpayers",
    );
  }
  const businessId =
    typeof document.business_id === "string"
      ? document.business_id
      : uuidOf(ctx.seed, "foreign business", parts.serviceId);
  if (
    ctx.registry.taxpayer(businessId) ||
    ctx.registry.taxpayers.some((t) => t.service_id === parts.serviceId)
  ) {
    throw problem(
      "document is one of the simulator's taxpayers' own: sign and transmit it through the MBS API",
    );
  }
  if (!ctx.inbound.deliver(irn, businessId, document, transmittedAt)) {
    throw problem(`document.irn ${irn} is registered already`);
  }
  return irn;
}

/**
 * `{count, buyer_tin?, wrong_total?, transmitted_at?}`: `count` generated invoices (1 to 10,000), to
 * the taxpayer of `buyer_tin` or else spread over the taxpayers; or `{document, transmitted_at?}`:
 * a caller's document. Answers the IRNs registered, in order. Unknown fields are refused, so a
 * misspelt one cannot pass for nothing.
 */
export function injectInbound(ctx: SimContext, body: unknown): string[] {
  if (!isObject(body)) {
    throw problem(
      "the body must be a JSON object: {count, buyer_tin?, wrong_total?, transmitted_at?} or {document, transmitted_at?}",
    );
  }
  const known = "document" in body ? DOCUMENT_FIELDS : COUNT_FIELDS;
  const unknown = Object.keys(body).find((name) => !known.includes(name));
  if (unknown !== undefined) throw problem(`unknown field ${unknown} (known here: ${known.join(", ")})`);
  const transmittedAt = transmittedAtOf(body);
  if ("document" in body) return [deliverDocument(ctx, body.document, transmittedAt)];
  const { count, buyer_tin: buyerTin, wrong_total: wrongTotal } = body;
  if (typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > MAX_INBOUND) {
    throw problem(`count must be a whole number from 1 to ${MAX_INBOUND}`);
  }
  const buyer = typeof buyerTin === "string" ? ctx.registry.taxpayerByTin(buyerTin) : undefined;
  if (buyerTin !== undefined && !buyer) {
    throw problem("buyer_tin must be the TIN of one of the simulator's taxpayers");
  }
  if (wrongTotal !== undefined && typeof wrongTotal !== "boolean") {
    throw problem("wrong_total must be true or false");
  }
  return ctx.inbound.generate({
    count,
    transmittedAt,
    wrongTotal: wrongTotal === true,
    ...(buyer === undefined ? {} : { buyer }),
  });
}

/** Each inbound invoice: who sent it to whom, when, and how it was acknowledged (every PATCH counted). */
function inboundState(ctx: SimContext) {
  const counts = ctx.registry.acknowledgements();
  return ctx.registry.inbound().map((record) => ({
    ...ctx.inbound.summary(record.irn),
    acknowledged: record.acknowledged,
    acknowledged_at: record.acknowledged_at,
    acknowledgements: counts.get(record.irn) ?? 0,
  }));
}

/** `POST /_simulator/inbound` injects, `GET /_simulator/inbound` lists. */
export function simulatorEndpoints(ctx: SimContext): Endpoint[] {
  const handler = HANDLERS.simulator;
  return [
    {
      method: "POST",
      url: "/_simulator/inbound",
      handler,
      control: true,
      handle: (r) => ok({ irns: injectInbound(ctx, r.body) }),
    },
    {
      method: "GET",
      url: "/_simulator/inbound",
      handler,
      control: true,
      handle: () => ok(inboundState(ctx)),
    },
  ];
}
