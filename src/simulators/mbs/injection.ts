import type { Endpoint, SimRequest } from "./endpoint.ts";
import {
  badCredential,
  HANDLERS,
  MbsError,
  NOT_ENABLED,
  NOT_ENABLED_SUB_MESSAGE,
  PARTIAL_TRANSMIT,
  SERVER_ERRORS,
  tryLater,
  WEBHOOK_NOT_SETUP,
} from "./envelopes.ts";
import { COMMON_CLASSES, type Decision, type FaultClass, type FaultPlanner } from "./faults.ts";
import { isObject } from "./paging.ts";

/**
 * Forces one fault class on one request; the class must be one its endpoint takes. Health and the
 * resource lists take no injected fault but downtime, so there the header is ignored.
 */
export const FAULT_HEADER = "x-simulator-fault";

/** What a request is about, for counting its calls: its path parameters, else its body's key field. */
function keyOf(request: SimRequest, url: string): string {
  const params = Object.values(request.params);
  if (params.length > 0) return params.join("/");
  const body = request.body;
  if (isObject(body)) {
    for (const name of ["irn", "vendorTransactionId", "tin", "email"]) {
      if (typeof body[name] === "string") return body[name] as string;
    }
  }
  return url;
}

function irnOf(request: SimRequest): string | undefined {
  if (request.params.irn !== undefined) return request.params.irn;
  return isObject(request.body) && typeof request.body.irn === "string" ? request.body.irn : undefined;
}

function forcedClass(endpoint: Endpoint, request: SimRequest): FaultClass | undefined {
  const header = request.headers[FAULT_HEADER];
  if (header === undefined) return undefined;
  const takes: FaultClass[] = [...COMMON_CLASSES, ...(endpoint.extra ?? []), "down"];
  const wanted = Array.isArray(header) ? header.join(",") : header.trim();
  if ((takes as string[]).includes(wanted)) return wanted as FaultClass;
  // Refused loudly: a test that names a class the endpoint ignores would otherwise pass for nothing.
  throw new MbsError(400, "unknown simulator fault", {
    handler: "simulator",
    details: `${FAULT_HEADER} must be one of ${takes.join(", ")} on ${endpoint.method} ${endpoint.url}`,
  });
}

/** The fault this request gets, if any: its header first, then its invoice number, then the rates. */
export function decideFault(
  planner: FaultPlanner,
  endpoint: Endpoint,
  request: SimRequest,
  url: string,
): Decision | undefined {
  const forced = forcedClass(endpoint, request);
  const irn = irnOf(request);
  return planner.decide({
    route: `${endpoint.method} ${endpoint.url}`,
    key: keyOf(request, url),
    classes: [...COMMON_CLASSES.slice(0, 3), ...(endpoint.extra ?? []), ...COMMON_CLASSES.slice(3)],
    prefixes: endpoint.prefixes ?? [],
    ...(irn === undefined ? {} : { irn }),
    ...(forced === undefined ? {} : { forced }),
  });
}

/**
 * The answer of a fault that stops the request before it has any effect; undefined for the faults
 * that let the request through (drop, slow, duplicate), which the server applies afterwards.
 * `transient`, `5xx` and `try_later` are answered before any effect: nothing is registered.
 */
export function refusalOf(decision: Decision): MbsError | undefined {
  const pick = <T>(options: readonly T[]): T => options[Math.floor(decision.variant * options.length)] as T;
  switch (decision.fault) {
    // [recorded] the credential answer, exactly.
    case "credential":
      return badCredential();
    // [client] clients retry 408, 429 and 5xx; the texts are [unknown].
    case "transient": {
      const status = pick([408, 429, 500, 502, 503, 504] as const);
      return new MbsError(status, SERVER_ERRORS[status]);
    }
    case "5xx": {
      const status = pick([500, 502, 503] as const);
      return new MbsError(status, SERVER_ERRORS[status]);
    }
    case "down":
      return new MbsError(503, SERVER_ERRORS[503]);
    // [client] the duplicate's words, having registered nothing: only `confirm` tells them apart.
    case "try_later":
      return tryLater();
    // [client] NOT_ENABLED in `sub_message`.
    case "not_enabled":
      return new MbsError(400, NOT_ENABLED, { subMessage: NOT_ENABLED_SUB_MESSAGE });
    // [client] the partial-success text, as a 400 here (one integrator met it inside a 2xx, via an APP).
    case "partial":
      return new MbsError(400, PARTIAL_TRANSMIT);
    // [recorded][client] the text; status 400 and handler `invoice_actions` are [unknown].
    case "no_webhook":
      return new MbsError(400, WEBHOOK_NOT_SETUP, { handler: HANDLERS.invoice });
    default:
      return undefined;
  }
}
