import { randomUUID } from "node:crypto";

// Every text a client may match on lives here, once. The spec marks some as [doc] (the credential
// text, the 404 body, the validation example) and the rest as [unknown]: those are the simulator's
// own choice, kept in constants so a connector test can name them instead of copying them.

/** [doc] A bad or missing credential: HTTP 400, not 401. */
export const BAD_CREDENTIAL = "unable to validate api key";
/** [doc] Unknown paths answer this body with a 404, without the `error` object. */
export const NO_ROUTE = "no route found for this path. kindly check your request and try again";
/** [client] The public message of every validation failure; the reason is in `details`. */
export const VALIDATION_FAILED = "validation failed: unable to process your request";
/** [client] The phrases integrators match to retry; the simulator answers one of them. */
export const TRANSIENT_MESSAGES = [
  "try again later",
  "unable to complete this operation at this time",
] as const;
/** [client] The sign stands, the transmit must be retried later. */
export const PARTIAL_TRANSMIT =
  "Invoice is Signed but could not transmit. Accounting parties APP might be offline or busy";
/** [client] `NOT_ENABLED` rides in `error.sub_message`; the public message is ours. */
export const NOT_ENABLED_SUB_MESSAGE = "NOT_ENABLED";
export const NOT_ENABLED = "the buyer has not enabled receiving of e-invoices";
/** [unknown] The duplicate-IRN text is not published. */
export const DUPLICATE_IRN = "invoice with this irn already exists";
export const INVOICE_NOT_FOUND = "invoice not found";
export const NOT_TRANSMITTED = "invoice has not been transmitted";
export const INVALID_TRANSITION = "invalid payment status transition";
export const ENTITY_NOT_FOUND = "entity not found";
export const BUSINESS_NOT_FOUND = "business not found";
export const PARTY_NOT_FOUND = "party not found";
export const TIN_NOT_FOUND = "tin not found";
export const RESOURCE_NOT_FOUND = "resource not found";
export const INVALID_LOGIN = "invalid email or password";
export const BODY_TOO_LARGE = "request body is too large";
export const SERVER_ERRORS: Readonly<Record<500 | 502 | 503, string>> = {
  500: "internal server error",
  502: "bad gateway",
  503: "service unavailable",
};
export const SUCCESS = "Successful";

/**
 * [unknown] The sign answer: the spec says only "treat any 2xx as success". The simulator answers
 * 201 with `{irn, status: "SIGNED"}` and this message.
 */
export const SIGN_ANSWER = { code: 201, status: "SIGNED", message: "invoice signed" } as const;

export type SuccessBody = { code: number; data: unknown; message: string };

export type ErrorBody = {
  code: number;
  data: null;
  message: "error has occurred";
  error: { id: string; handler: string; details?: string; public_message: string; sub_message?: string };
};

export type Answer = { status: number; body: unknown };

export function ok(data: unknown, code = 200, message = SUCCESS): Answer {
  return { status: code, body: { code, data, message } satisfies SuccessBody };
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

/** A 400 validation failure whose `details` names what is wrong, as the authority's do. */
export function invalid(details: string): MbsError {
  return new MbsError(400, VALIDATION_FAILED, { details });
}

export function errorBody(err: MbsError, handler: string): ErrorBody {
  return {
    code: err.status,
    data: null,
    message: "error has occurred",
    error: {
      id: randomUUID(),
      handler: err.extra.handler ?? handler,
      ...(err.extra.details === undefined ? {} : { details: err.extra.details }),
      public_message: err.publicMessage,
      ...(err.extra.subMessage === undefined ? {} : { sub_message: err.extra.subMessage }),
    },
  };
}

/** [doc] The credential failure, with the spec's own `handler` value. */
export function badCredential(): MbsError {
  return new MbsError(400, BAD_CREDENTIAL, { handler: "handler" });
}

export function noRoute(): Answer {
  return { status: 404, body: { code: 404, data: null, message: NO_ROUTE } };
}

/** A sign of an IRN already registered; also the `duplicate` fault's answer. */
export function duplicateIrn(irn: string): MbsError {
  return new MbsError(400, DUPLICATE_IRN, { details: `irn ${irn} is already registered` });
}
