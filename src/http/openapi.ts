import { type TSchema, Type } from "typebox";

/** The empty `data` (or `error`) array of the spec's envelopes. */
export const Empty = Type.Array(Type.Unknown(), { maxItems: 0 });

/** The error envelope of the spec, every failure's shape (`error` is an empty array on some). */
export const ErrorEnvelope = Type.Object(
  {
    status: Type.Optional(Type.Literal(false)),
    code: Type.Integer({ description: "repeats the HTTP status" }),
    message: Type.String(),
    data: Type.Null(),
    error: Type.Union([
      Type.Object({
        id: Type.Optional(Type.String({ description: "unique id of this error occurrence" })),
        handler: Type.Optional(Type.String({ description: "the operation that failed" })),
        details: Type.String({ description: "what exactly is wrong, naming the field" }),
        public_message: Type.Optional(Type.String()),
        violations: Type.Optional(
          Type.Array(
            Type.Object({
              path: Type.String({ description: "JSON path of the field, e.g. invoice_line[1].price" }),
              rule: Type.String(),
              message: Type.String(),
              expected: Type.Optional(Type.Unknown()),
              actual: Type.Optional(Type.Unknown()),
              related: Type.Optional(Type.Array(Type.String())),
            }),
            { description: "the first 200 violations" },
          ),
        ),
        violations_truncated: Type.Optional(
          Type.Literal(true, { description: "present when more than 200 violations were found" }),
        ),
        violations_total: Type.Optional(
          Type.Integer({ description: "how many violations were found, when more than 200" }),
        ),
      }),
      Empty,
    ]),
    timestamp: Type.Optional(Type.String({ format: "date-time" })),
  },
  { additionalProperties: true },
);

const FAILURES: Record<number, string> = {
  400: "the request or the document is not valid; `error.details` and `error.violations` say why",
  401: "API-KEY and API-SECRET are missing or not valid",
  404: "no such invoice for this business, or no such route",
  409: "a request with the same Idempotency-Key is still being processed; retry after `Retry-After` seconds",
  413: "the body is larger than the route accepts",
  415: "the body's Content-Type is not one the route reads (application/json, or application/xml where it takes UBL 2.1)",
  422: "the Idempotency-Key was used for another request (another body or route); nothing was done",
  429: "too many requests (with these credentials, failed authentications from this address, or requests without credentials from this address; `error.details` says which); retry after `Retry-After` seconds",
  503: "a transient fault (database or authority); retry after `Retry-After` seconds",
};

/**
 * The responses of a route for its documentation: its success schema, then the error envelope for
 * each failure it can answer. Documentation only: answers are serialized as they are built.
 */
export function responses(
  success: TSchema,
  description: string,
  failures: readonly number[] = [400, 401, 429, 503],
): Record<number, TSchema> {
  return { 200: { ...success, description }, ...errorResponses(failures) };
}

/** The error envelope for each of these statuses, described. */
export function errorResponses(statuses: readonly number[]): Record<number, TSchema> {
  return Object.fromEntries(
    statuses.map((status) => [status, { ...ErrorEnvelope, description: FAILURES[status] ?? "failure" }]),
  );
}

/** The spec's action envelope around `data`. */
export const Action = (data: TSchema, message: string) =>
  Type.Object({
    status: Type.Literal(true),
    code: Type.Literal(200),
    message: Type.String({ examples: [message] }),
    data,
    warnings: Type.Optional(
      Type.Array(Type.Unknown(), { description: "findings that did not block the request (the first 200)" }),
    ),
    warnings_truncated: Type.Optional(
      Type.Literal(true, { description: "present when more than 200 warnings were found" }),
    ),
    warnings_total: Type.Optional(Type.Integer({ description: "how many warnings, when more than 200" })),
  });

export const ReferenceEnvelope = (record: TSchema) =>
  Type.Object({ code: Type.Literal(200), data: Type.Array(record) });

/** For the documentation of sign and sign-transmit's 400: the header of a repeated sign. */
export const IdenticalDocumentHeader = {
  // IDENTICAL_DOCUMENT_HEADER (error-mapper.ts), as the documentation spells headers.
  "Einvoice-Identical-Document": {
    type: "string",
    pattern: "^signed-at=\\S+$",
    examples: ["signed-at=2026-11-15T14:30:05.123Z"],
    description:
      "on `IRN already exists.` only, when the IRN holds this very document (the same content whatever the key order; a retry whose first answer was lost): when it was signed. The body stays the spec's, with `error: []`; the client may count the invoice as signed. Absent, the IRN holds another document",
  },
};

/**
 * The answers of a route that serves a PDF: the document, described by its content type (it is not
 * JSON), and the error envelope for each failure it can answer.
 */
export function pdfResponses(description: string, failures: readonly number[]): Record<number, TSchema> {
  return {
    ...responses(Type.Object({}), "", failures),
    200: {
      description,
      content: { "application/pdf": { schema: { type: "string", format: "binary" } } },
    } as unknown as TSchema,
  };
}

/** The answers of a route that sends a UBL document: the XML, or the usual error envelopes. */
export function xmlResponses(description: string, failures: readonly number[]): Record<number, TSchema> {
  return {
    ...responses(Type.Object({}), "", failures),
    200: {
      description,
      content: {
        "application/xml": { schema: { type: "string", description: "UBL 2.1 Invoice or CreditNote" } },
      },
    } as unknown as TSchema,
  };
}
