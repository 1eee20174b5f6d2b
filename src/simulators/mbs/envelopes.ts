import { randomUUID } from "node:crypto";

// Every text a client may match on lives here, once, with the evidence mark of the MBS spec
// (`firs-mbs-api.md`): [recorded] real sandbox answers, [doc] the authority's collection, [client]
// integrators quoting MBS, [unknown] the simulator's own choice (kept in a constant so a connector
// test can name it instead of copying it).

/** [recorded] A bad or missing credential: HTTP 400, not 401, handler `handler`. */
export const BAD_CREDENTIAL = "unable to validate api key";
/** [recorded] Unknown paths answer this body with a 404, without the `error` object. */
export const NO_ROUTE = "no route found for this path. kindly check your request and try again";
/** [recorded] The `message` of every error envelope. */
export const ERROR_MESSAGE = "error has occurred";
/** [recorded][client] The public message of every validation failure; the reason is only in `details`. */
export const VALIDATION_FAILED =
  "validation failed: we are unable to process your request. also confirm this is not a duplicate request";
/**
 * [client] The `details` of a repeated sign (a duplicate IRN), under VALIDATION_FAILED: it does not
 * mean transient. The `try_later` fault answers the same, having registered nothing.
 */
export const TRY_LATER = "unable to complete this operation at this time, kindly try again later";
/** [client] The sign stands, the transmit must be retried later. */
export const PARTIAL_TRANSMIT =
  "Invoice is Signed but could not transmit. Accounting parties APP might be offline or busy";
/** [client] `NOT_ENABLED` rides in `error.sub_message`; the public message is ours [unknown]. */
export const NOT_ENABLED_SUB_MESSAGE = "NOT_ENABLED";
export const NOT_ENABLED = "the buyer has not enabled receiving of e-invoices";
/** [recorded][client] Transmission needs the APP's webhook set up; status and handler are [unknown]. */
export const WEBHOOK_NOT_SETUP = "webhook url is not setup";
/** [doc] The taxpayer log-in answer's sample texts. */
export const LOGGED_IN = { message: "User logged in", status: "200 OK" } as const;
/** [doc] The `verify-tin` answer's sample texts. */
export const TIN_INFORMATION = { message: "TIN Information", status: "200 OK" } as const;

// [unknown] The texts of answers no source shows, in the style of the ones that are known.
export const INVOICE_NOT_FOUND = "invoice not found";
export const NOT_TRANSMITTED = "invoice has not been transmitted";
export const ENTITY_NOT_FOUND = "entity not found";
export const BUSINESS_NOT_FOUND = "business not found";
export const PARTY_NOT_FOUND = "party not found";
export const TIN_NOT_FOUND = "tin not found";
export const RESOURCE_NOT_FOUND = "resource not found";
export const INVALID_LOGIN = "invalid email or password";
export const BODY_TOO_LARGE = "request body is too large";
/** [unknown] Status-transient answers (the `transient`, `5xx` and `down` faults). */
export const SERVER_ERRORS: Readonly<Record<408 | 429 | 500 | 502 | 503 | 504, string>> = {
  408: "request timeout",
  429: "too many requests",
  500: "internal server error",
  502: "bad gateway",
  503: "service unavailable",
  504: "gateway timeout",
};

/**
 * `error.handler` [recorded][client]: `handler` on credential failures, `invoice_actions` on invoice
 * calls, `entity_actions` on entity calls. Utilities go with entities and the VAT report with
 * invoices: the simulator's choice [unknown].
 */
export const HANDLERS = {
  credential: "handler",
  invoice: "invoice_actions",
  entity: "entity_actions",
  /** The simulator's own routes (`/_simulator/…`, and a refused `x-simulator-fault`): not MBS's. */
  simulator: "simulator",
} as const;

/** The public message of a request to a simulator's own route that it cannot act on. */
export const INVALID_SIMULATOR_REQUEST = "invalid simulator request";

/** The handler of a path, for errors raised before a route is known (bad JSON, body too large). */
export function handlerOf(url: string): string {
  if (/^\/_simulator\b/.test(url)) return HANDLERS.simulator;
  return /^\/api\/v1\/(?:entity|utilities)\b/.test(url) ? HANDLERS.entity : HANDLERS.invoice;
}

/** [recorded][doc] A success: `{code, data}` and nothing else, no top-level `message`. */
export type SuccessBody = { code: number; data: unknown };

export type ErrorBody = {
  code: number;
  data: null;
  message: typeof ERROR_MESSAGE;
  error: { id: string; handler: string; details?: string; public_message: string; sub_message?: string };
};

export type Answer = { status: number; body: unknown };

export function ok(data: unknown, code = 200): Answer {
  return { status: code, body: { code, data } satisfies SuccessBody };
}

/** An answer in the error envelope; thrown by handlers, turned into a body by the server. */
export class MbsError extends Error {
  constructor(
    readonly status: number,
    readonly publicMessage: string,
    readonly extra: { details?: string; subMessage?: string; handler?: string } = {},
  ) {
    super(extra.details ? `${publicMessage}: ${extra.details}` : publicMessage);
  }
}

/** [recorded][client] A 400 validation failure: the one public message, one reason in `details`. */
export function invalid(details: string): MbsError {
  return new MbsError(400, VALIDATION_FAILED, { details });
}

/** [recorded] The error envelope: `{code, data: null, message, error: {id, handler, details?, public_message}}`. */
export function errorBody(err: MbsError, handler: string): ErrorBody {
  return {
    code: err.status,
    data: null,
    message: ERROR_MESSAGE,
    error: {
      id: randomUUID(),
      handler: err.extra.handler ?? handler,
      ...(err.extra.details === undefined ? {} : { details: err.extra.details }),
      public_message: err.publicMessage,
      ...(err.extra.subMessage === undefined ? {} : { sub_message: err.extra.subMessage }),
    },
  };
}

/** [recorded] The credential failure, exactly: no `details`, handler `handler`. */
export function badCredential(): MbsError {
  return new MbsError(400, BAD_CREDENTIAL, { handler: HANDLERS.credential });
}

/** [recorded] The 404 of a path MBS has no route for. */
export function noRoute(): Answer {
  return { status: 404, body: { code: 404, data: null, message: NO_ROUTE } };
}

/**
 * [client] A sign of an IRN registered already, and the `duplicate` and `try_later` faults: 400,
 * `invoice_actions`, the validation public message, "try again later" in `details`.
 */
export function tryLater(): MbsError {
  return new MbsError(400, VALIDATION_FAILED, { details: TRY_LATER, handler: HANDLERS.invoice });
}

/** [unknown] An IRN the registry does not hold: 404 by default (the `confirm_unregistered` rule may say 400). */
export function notRegistered(irn: string, status: 400 | 404 = 404): MbsError {
  return new MbsError(status, INVOICE_NOT_FOUND, { details: `irn ${irn} is not registered` });
}
