import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { type DomainCode, DomainError } from "../errors.ts";
import { config, DASHBOARD, type DashboardApp, PAGE, send } from "./page.ts";
import { NEXT } from "./session.ts";
import { errorPage } from "./views.ts";

type SignedIn = (request: FastifyRequest) => boolean;

/**
 * The HTTP statuses and the reading of Fastify's own errors are http/'s, and only a routes.ts may
 * import http/: the dashboard's routes.ts hands them in.
 */
type ErrorMapping = {
  statusOf: Readonly<Record<DomainCode, number>>;
  fromFrameworkError: (err: FastifyError, request: FastifyRequest) => DomainError;
};

/** A failure on a page is shown as a page, with the status the API would give it, not as JSON. */
export function htmlErrorHandler(deps: ErrorMapping & { signedIn: SignedIn }) {
  const { statusOf, fromFrameworkError, signedIn } = deps;
  return (err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const domain = err instanceof DomainError ? err : fromFrameworkError(err as FastifyError, request);
    if (domain.code === "internal") request.log.error({ err }, "unhandled error");
    if (domain.retryAfter !== undefined) void reply.header("retry-after", String(domain.retryAfter));
    const status = statusOf[domain.code];
    return send(reply, errorPage(domain, status, signedIn(request), request.id), status);
  };
}

export async function refuseForeignForms(request: FastifyRequest) {
  if (request.method !== "POST") return;
  const origin = request.headers.origin;
  // request.host is the Host header, or X-Forwarded-Host from a proxy named in EINVOICE_TRUST_PROXY.
  if (origin !== undefined && originHost(origin) !== request.host) {
    throw new DomainError("form_refused", {
      message: "Form refused",
      details: `a form posted from ${origin} cannot act on this dashboard`,
    });
  }
}

export function requireSignIn(signedIn: SignedIn) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const route = request.routeOptions.url;
    if (route === `${DASHBOARD}/login` || route === `${DASHBOARD}/style.css` || signedIn(request)) return;
    if (request.method === "GET") {
      const next = request.url.length <= 2000 && NEXT.test(request.url) ? request.url : DASHBOARD;
      return reply.redirect(`${DASHBOARD}/login?${new URLSearchParams({ next })}`, 303);
    }
    throw new DomainError("signed_out", {
      message: "Signed out",
      details: "sign in to the dashboard again: the session has ended",
    });
  };
}

export async function cleanFields(request: FastifyRequest) {
  // A form's empty field arrives as "": the same as not filtering by it.
  const query = request.query as Record<string, unknown>;
  for (const [name, value] of Object.entries(query)) if (value === "") delete query[name];
  // As for the API's bodies: no text column can hold a NUL, and no field has a use for one.
  const fields = Object.entries((request.body ?? {}) as Record<string, unknown>);
  const nul = fields.find(([, value]) => typeof value === "string" && value.includes("\0"));
  if (nul) {
    throw new DomainError("invalid_request", {
      message: "Invalid request",
      details: `the field ${nul[0]} contains a NUL character, which no field accepts`,
    });
  }
}

/** Off until an operator password is set: every page says how to turn it on instead of being unknown. */
export function dashboardOff(app: DashboardApp): void {
  const off = async () => {
    throw new DomainError("page_not_found", {
      message: "The operator dashboard is off",
      details: "set EINVOICE_OPERATOR_PASSWORD (at least 16 characters) to turn the operator dashboard on",
    });
  };
  app.get(DASHBOARD, { schema: PAGE, config: config("off") }, off);
  app.get(`${DASHBOARD}/*`, { schema: PAGE, config: config("off") }, off);
}

export function unknownPages(app: DashboardApp): void {
  app.get(`${DASHBOARD}/*`, { schema: PAGE, config: config("unknown") }, async (request) => {
    throw new DomainError("page_not_found", {
      message: "No such page",
      details: `the dashboard has no page at ${request.url.split("?")[0]}`,
    });
  });
}

function originHost(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}
