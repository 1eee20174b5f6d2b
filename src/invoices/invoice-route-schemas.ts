import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { type Static, type TSchema, Type } from "typebox";
import { PAYMENT_STATUSES } from "../reference/data.ts";
import { INVOICE_STATUSES } from "./lifecycle.ts";

// The bodies and answers of the invoice routes, as routes.ts declares them and openapi.json shows them.

/** The app the invoice routes are declared on. */
export type InvoiceApp = Parameters<FastifyPluginAsyncTypebox>[0];
export const PREFIX = "/api/v1/einvoice";
/** The refusals of a route that finds an invoice by its IRN. */
export const BY_IRN = [400, 401, 404, 429, 503];

export const IrnParams = Type.Object({ irn: Type.String({ minLength: 1, maxLength: 100 }) });
export const UpdateBody = Type.Object(
  {
    payment_status: Type.Union(PAYMENT_STATUSES.map((s) => Type.Literal(s))),
    reference: Type.Optional(
      Type.String({
        maxLength: 500,
        description:
          "payment reference or note; a PARTIAL with the reference and amount of a payment already recorded is a retry, recorded once",
      }),
    ),
    amount: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 1e15,
        description:
          "this payment, in the document currency: required for PARTIAL; for PAID, the outstanding balance (left out, PAID settles it)",
      }),
    ),
    payment_update_date: Type.Optional(
      Type.String({
        format: "date",
        description: "when it was paid: not before the issue date nor after tomorrow (UTC); default today",
      }),
    ),
  },
  // Its examples are given where the route is declared (invoice-routes.ts), from src/http/examples.ts.
);
export const IrnValidateBody = Type.Object({
  irn: Type.String({ minLength: 1, maxLength: 100 }),
  business_id: Type.String({ minLength: 1, maxLength: 100 }),
});

export const Status = Type.Union(INVOICE_STATUSES.map((v) => Type.Literal(v)));
export const Payment = Type.Union(PAYMENT_STATUSES.map((v) => Type.Literal(v)));
const Nullable = (schema: TSchema) => Type.Union([schema, Type.Null()]);
/** What the lookup and the full record both say of an invoice's state. */
const State = {
  irn: Type.String(),
  business_id: Type.String(),
  status: Status,
  payment_status: Payment,
  payment_reference: Nullable(Type.String()),
  amount_paid: Type.Number({ description: "paid so far, in the document currency" }),
  amount_outstanding: Type.Number({ description: "payable amount less amount_paid" }),
  signed_at: Type.String({ format: "date-time" }),
  transmitted_at: Nullable(Type.String({ format: "date-time" })),
  authority_reference: Nullable(Type.String()),
};
export const Lookup = Type.Object({
  ...State,
  authority_state: Nullable(
    Type.Union(
      [Type.Literal("REGISTERED"), Type.Literal("AWAITING_BUYER"), Type.Literal("AWAITING_OPERATOR")],
      {
        description:
          "where an invoice not yet delivered stands at the authority, as its last attempt found it: REGISTERED (signed there, its transmission being retried), AWAITING_BUYER (the buyer has not enabled receiving), AWAITING_OPERATOR (the authority refused this service's credentials or address)",
      },
    ),
  ),
  authority_error: Nullable(
    Type.Object(
      {
        status: Type.Integer(),
        id: Type.Optional(Type.String()),
        handler: Type.Optional(Type.String()),
        details: Type.Optional(Type.String()),
        public_message: Type.Optional(Type.String()),
        sub_message: Type.Optional(Type.String()),
      },
      { description: "the authority's own words about the last refusal, verbatim" },
    ),
  ),
  attempts: Type.Array(Type.Object({ at: Type.String() }, { additionalProperties: true }), {
    description: "each delivery attempt to the tax authority",
  }),
});
const HistoryEntry = Type.Object({
  at: Type.String({ format: "date-time" }),
  type: Type.String(),
  actor: Type.String({ description: "key:<API key>, outbox:<worker>, cli, …" }),
  detail: Type.Object({}, { additionalProperties: true }),
});
export const FullRecord = Type.Object({
  ...State,
  invoice_type_code: Type.String(),
  issue_date: Type.String({ format: "date" }),
  updated_at: Type.String({ format: "date-time" }),
  qr_code: Type.String({ description: "base64 of the RSA-encrypted QR payload" }),
  verification_qr: Type.String({
    description:
      "the verification QR's text: a JWS (EdDSA, kid of a key in /.well-known/jwks.json) of the IRN, seller TIN, issue date, payable amount, currency and signed hash, or {EINVOICE_PUBLIC_URL}/verify?t=<JWS>",
  }),
  previous_hash: Nullable(Type.String({ description: "hash of the business's previous invoice" })),
  document: Type.Object(
    {},
    {
      additionalProperties: true,
      description:
        "the invoice as submitted, in canonical form: business_id in lower case, floating-point noise taken out of amounts",
    },
  ),
  signature: Nullable(
    Type.Object({
      alg: Type.Literal("EdDSA"),
      kid: Type.String(),
      hash: Type.String(),
      value: Type.String(),
    }),
  ),
  history: Type.Array(HistoryEntry),
});

/** One document's outcome in a batch, at its position in the request. */
export const BatchResult = Type.Object({
  index: Type.Integer({ description: "the document's position in the request" }),
  irn: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union([Type.Literal("signed"), Type.Literal("duplicate"), Type.Literal("invalid")]),
  transmission: Type.Optional(Type.Literal("queued")),
  message: Type.Optional(Type.String()),
  details: Type.Optional(Type.String()),
  violations: Type.Optional(Type.Array(Type.Unknown(), { description: "the first 20" })),
  violations_truncated: Type.Optional(Type.Literal(true)),
  violations_total: Type.Optional(Type.Integer()),
  warnings: Type.Optional(Type.Array(Type.Unknown(), { description: "the first 20" })),
  warnings_truncated: Type.Optional(Type.Literal(true)),
  warnings_total: Type.Optional(Type.Integer()),
});
export type BatchResult = Static<typeof BatchResult>;

/** The IRN of a UBL invoice, when its number should not make it (see the UBL mapping's BT-1). */
export const UblQuery = Type.Object({
  irn: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 100,
      description:
        "UBL bodies only: the IRN to sign under, instead of the one made from cbc:ID (its letters and digits), the service id and the issue date",
    }),
  ),
});

/** What `ubl/convert` answers: the document that would be signed, and what was not carried. */
export const Converted = Type.Object({
  document: Type.Record(Type.String(), Type.Unknown(), { description: "this API's invoice document" }),
  not_carried: Type.Array(Type.Object({ xpath: Type.String(), message: Type.String() }), {
    description: "what the UBL says that the document does not keep, by XPath",
  }),
});
