import { randomUUID } from "node:crypto";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { isTransientDatabaseError } from "../db/database.ts";
import { type DomainCode, DomainError, summarize } from "../errors.ts";
import { schemaViolations } from "../schema/violations.ts";
import { BODY_LIMIT } from "./limits.ts";

/** The HTTP status of each domain error: the only place that decides it. */
export const ERROR_STATUS: Record<DomainCode, number> = {
  invalid_request: 400,
  validation_failed: 400,
  irn_exists: 400,
  irn_invalid: 400,
  invoice_not_found: 404,
  business_not_found: 404,
  page_not_found: 404,
  resource_not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  transmission_refused: 400,
  // Signed and queued: the spec's 503 for a transmission not confirmed yet.
  transmission_queued: 503,
  requeue_refused: 400,
  payment_transition_refused: 400,
  batch_refused: 400,
  report_refused: 400,
  inbox_decision_refused: 409,
  qr_code_invalid: 400,
  qr_code_refused: 400,
  idempotency_key_reused: 422,
  request_in_progress: 409,
  idempotency_answer_not_kept: 409,
  idempotency_quota_exceeded: 429,
  unauthenticated: 401,
  form_refused: 403,
  signed_out: 401,
  payload_too_large: 413,
  // Not 413, which says the request's own content is too large: this GET has none, and no retry
  // or smaller request can change the invoice it names. 422: understood, and refused for good.
  too_large_to_print: 422,
  unsupported_media_type: 415,
  ubl_not_expressible: 422,
  rate_limited: 429,
  forward_queue_full: 429,
  service_unavailable: 503,
  internal: 500,
};

const UNAUTHORIZED_DETAILS =
  "API credentials are invalid or missing: send the API-KEY and API-SECRET headers";

type ErrorBody = {
  status: false;
  code: number;
  message: string;
  data: null;
  error?: Record<string, unknown> | [];
  timestamp: string;
};

/** The single place where any failure becomes the spec's error envelope. */
export function toErrorBody(err: DomainError, handler: string): ErrorBody {
  const head = { status: false as const, code: ERROR_STATUS[err.code], message: err.message, data: null };
  const timestamp = new Date().toISOString();
  switch (err.code) {
    case "unauthenticated":
    case "signed_out":
      return { ...head, error: { details: err.details }, timestamp };
    case "irn_exists":
      // The spec's empty array, always: that the very document is signed is said by a header.
      return { ...head, error: [], timestamp };
    case "route_not_found":
      return { ...head, timestamp };
    default:
      return {
        ...head,
        error: {
          id: randomUUID(),
          handler,
          details: err.details,
          public_message: err.publicMessage ?? err.details,
          ...(err.violations ? { violations: err.violations } : {}),
          ...(err.violations &&
          err.violationsTotal !== undefined &&
          err.violationsTotal > err.violations.length
            ? { violations_truncated: true, violations_total: err.violationsTotal }
            : {}),
        },
        timestamp,
      };
  }
}

export function unauthorized(): DomainError {
  return new DomainError("unauthenticated", { message: "Unauthorized", details: UNAUTHORIZED_DETAILS });
}

export function routeNotFound(method: string, url: string): DomainError {
  const path = url.split("?")[0] ?? url;
  return new DomainError("route_not_found", {
    message: `Route ${method}:${path} not found: no route was found for this method and path`,
    details: "no route",
  });
}

/** A body over `limit` bytes, read or only declared. */
export function payloadTooLarge(limit: number): DomainError {
  return new DomainError("payload_too_large", {
    message: "Request body too large",
    details: `the request body exceeds the limit of ${limit / (1024 * 1024)} MiB`,
  });
}

/** Framework and parser failures, translated into domain errors with a precise reason. */
export function fromFrameworkError(err: FastifyError, request: FastifyRequest): DomainError {
  if (err instanceof DomainError) return err;
  const failureMessage = request.routeOptions.config?.failureMessage ?? "Invalid request";
  if (err.validation) {
    const where = err.validationContext === "body" ? "" : (err.validationContext ?? "");
    const violations = schemaViolations(err.validation, where);
    return new DomainError("invalid_request", {
      message: failureMessage,
      details: summarize(violations),
      violations,
    });
  }
  switch (err.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return payloadTooLarge(request.routeOptions.bodyLimit ?? BODY_LIMIT);
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new DomainError("unsupported_media_type", {
        message: "Unsupported media type",
        details: `Content-Type '${request.headers["content-type"] ?? ""}' is not supported: send application/json`,
      });
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new DomainError("invalid_request", {
        message: failureMessage,
        details: "the request body is empty: send a JSON object",
      });
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new DomainError("invalid_request", {
        message: failureMessage,
        details: `the request body is not valid JSON: ${err.message}`,
      });
  }
  if (err instanceof SyntaxError) {
    return new DomainError("invalid_request", {
      message: failureMessage,
      details: `the request body is not valid JSON: ${err.message}`,
    });
  }
  if (isTransientDatabaseError(err)) {
    return new DomainError("service_unavailable", {
      message: "Service temporarily unavailable",
      details:
        "the database is unavailable for a moment; nothing was changed, retry after the indicated delay",
      retryAfter: 2,
    });
  }
  const status = err.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return new DomainError(
      status === 404 ? "resource_not_found" : status === 413 ? "payload_too_large" : "invalid_request",
      {
        message: failureMessage,
        details: err.message,
      },
    );
  }
  return new DomainError("internal", {
    message: "Internal server error",
    details: "an unexpected error occurred; it has been logged with this error id",
  });
}

/**
 * On a sign's `IRN already exists.` when the IRN holds this very document (a retry whose first
 * answer was lost): `signed-at=<ISO 8601 time it was signed>`. The client may count the invoice as
 * signed; without the header, the IRN holds another document. The body stays the spec's.
 */
export const IDENTICAL_DOCUMENT_HEADER = "einvoice-identical-document";

export function sendError(reply: FastifyReply, err: DomainError, handler: string): FastifyReply {
  const body = toErrorBody(err, handler);
  if (err.retryAfter !== undefined) void reply.header("retry-after", String(err.retryAfter));
  if (err.code === "irn_exists" && err.identicalSignedAt !== undefined)
    void reply.header(IDENTICAL_DOCUMENT_HEADER, `signed-at=${err.identicalSignedAt}`);
  if (body.code >= 500) {
    const id = body.error && !Array.isArray(body.error) ? body.error.id : undefined;
    // A full queue's 503 is load, not a fault: at warn, with what was refused.
    if (err.busy) reply.request.log.warn({ errorId: id, details: err.details }, "request refused: busy");
    else reply.request.log.error({ errorId: id }, "request failed");
  }
  return reply.code(body.code).type("application/json; charset=utf-8").send(body);
}
