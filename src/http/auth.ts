import type { FastifyReply, FastifyRequest } from "fastify";
import type { Principal } from "../businesses/service.ts";
import { DomainError } from "../errors.ts";
import { unauthorized } from "./error-mapper.ts";
import type { RateLimits } from "./rate-limit.ts";

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** Answered without credentials (published keys). */
    public?: boolean;
  }
}

export type Authenticate = (
  apiKey: string | undefined,
  apiSecret: string | undefined,
) => Promise<Principal | null>;

/** Where the interactive documentation lives: its pages and assets need no credentials. */
export const DOCS = "/docs";

export const nulRefused = (details: string) =>
  new DomainError("invalid_request", { message: "Invalid request", details });

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/**
 * The first thing every request meets (an onRequest hook). Every endpoint of the spec, the health
 * check included, answers 401 without valid credentials (the spec lists a 401 for each); unknown
 * routes answer 404 whatever the credentials; published keys, operations routes, the documentation
 * and the dashboard's pages need none. Each kind of request is counted by its own limit, in an
 * order that keeps a refusal cheap: an address past its failed authentications is refused before
 * its credentials cost a lookup and an HMAC, and a credential's budget is spent only once verified.
 */
export function guard(deps: { authenticate: Authenticate; limits: RateLimits }) {
  const { authenticate, limits } = deps;
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (/%00/i.test(request.url)) throw nulRefused("the URL contains a NUL character (%00)");
    const route = request.routeOptions.url;
    if (
      request.is404 ||
      request.routeOptions.config?.public ||
      route === DOCS ||
      route?.startsWith(`${DOCS}/`)
    ) {
      limits.anonymous(request);
      return;
    }
    limits.beforeAuthentication(request);
    const principal = await authenticate(
      header(request.headers["api-key"]),
      header(request.headers["api-secret"]),
    );
    if (!principal) {
      limits.authenticationFailed(request);
      throw unauthorized();
    }
    request.principal = principal;
    limits.credential(request, reply);
  };
}
