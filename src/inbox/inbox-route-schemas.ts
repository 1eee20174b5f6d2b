import { Type } from "typebox";
import { INBOX_MAX_LENGTH } from "./inbox-service.ts";

/** The inbox's routes' schemas: one per route, as the invoices' are. */

const Tin = Type.String({ minLength: 1, maxLength: 40 });
const Day = Type.String({ format: "date", description: "YYYY-MM-DD" });
const ReceivedStatus = Type.Union(
  [Type.Literal("RECEIVED"), Type.Literal("ACKNOWLEDGED"), Type.Literal("REJECTED")],
  { description: "RECEIVED until the buyer acknowledges or rejects it" },
);
const Acknowledgement = Type.Union(
  [
    Type.Literal("none"),
    Type.Literal("queued"),
    Type.Literal("sent"),
    Type.Literal("failed"),
    Type.Literal("not_needed"),
  ],
  {
    description:
      "telling the authority of the acknowledgement: not asked (none), on its way (queued), done (sent), failed for good (failed), or not needed (the supplier is a business of this service)",
  },
);
const Nullable = (schema: ReturnType<typeof Type.String>) => Type.Union([schema, Type.Null()]);

export const InboxIrnParams = Type.Object({ irn: Type.String({ minLength: 1, maxLength: 100 }) });

export const InboxQuery = Type.Object(
  {
    supplier_tin: Type.Optional(Tin),
    from: Type.Optional({ ...Day, description: "received on or after this day (UTC)" }),
    to: Type.Optional({ ...Day, description: "received on or before this day (UTC)" }),
    status: Type.Optional(ReceivedStatus),
    start: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0, description: "offset" })),
    length: Type.Optional(
      Type.Integer({ minimum: 1, maximum: INBOX_MAX_LENGTH, default: 50, description: "page size" }),
    ),
  },
  { additionalProperties: false },
);

export const RejectBody = Type.Object(
  {
    reason: Type.String({ minLength: 1, maxLength: 1000, description: "why the buyer rejects the invoice" }),
  },
  { additionalProperties: false, examples: [{ reason: "goods not delivered" }] },
);

const Finding = Type.Object(
  {
    path: Type.String(),
    rule: Type.String({ description: "the rule that found it, e.g. arithmetic, irn_template" }),
    message: Type.String(),
  },
  { additionalProperties: true },
);

export const ReceivedSummary = Type.Object({
  irn: Type.String(),
  source: Type.String({
    description: "mbs (pulled from the authority) or builtin (from a business of this service)",
  }),
  supplier: Type.Object(
    { tin: Nullable(Type.String()), name: Nullable(Type.String()) },
    {
      description:
        "as the document names it; from a business of this service (builtin), that business as registered, whatever the document names (a finding supplier_not_signer says when they differ)",
    },
  ),
  customer_tin: Type.String(),
  issue_date: Nullable(Type.String()),
  invoice_type_code: Nullable(Type.String()),
  currency: Nullable(Type.String()),
  payable_amount: Nullable(
    Type.String({
      description:
        "its exact decimal value as the supplier wrote it, without a leading + or zeros or an exponent; null when there is none, or it is not a decimal number or longer than 40 characters (a finding, amount_not_decimal or amount_too_long, says so)",
    }),
  ),
  status: ReceivedStatus,
  acknowledgement: Acknowledgement,
  reason: Nullable(Type.String()),
  warnings: Type.Integer({ description: "how many findings the checks made" }),
  received_at: Type.String(),
  decided_at: Nullable(Type.String()),
});

export const InboxPage = Type.Object({
  total: Type.Integer(),
  start: Type.Integer(),
  length: Type.Integer(),
  items: Type.Array(ReceivedSummary),
});

export const ReceivedRecord = Type.Object({
  ...ReceivedSummary.properties,
  checks: Type.Array(Finding, {
    description: "what the checks found: the supplier's mistakes, reported as warnings, never dropped",
  }),
  document: Type.Object({}, { additionalProperties: true, description: "the invoice as received" }),
  history: Type.Array(
    Type.Object({
      at: Type.String(),
      type: Type.String(),
      actor: Type.String(),
      detail: Type.Object({}, { additionalProperties: true }),
    }),
  ),
});
