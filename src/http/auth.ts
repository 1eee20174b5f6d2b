import type { FastifyReply, FastifyRequest } from "fastify";
import type { AuthFailure, Principal } from "../businesses/business-service.ts";
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

/** The principal, or why the credentials were refused (null: refused, counted as an unknown key). */
export type Authenticate = (
  apiKey: string | undefined,
  apiSecret: string | undefined,
) => Promise<Principal | AuthFailure | null>;

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
 * order that keeps a refusal cheap where it can: a request that brings no credentials from an
 * address past its failures, or an API key past its failures from that address, is refused before
 * anything is looked up or hashed; a credential's budget is spent only once verified. A key and
 * secret are always checked otherwise, so other clients' failures at one address (a NAT, a proxy
 * that is not trusted) never refuse good credentials.
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
    const apiKey = header(request.headers["api-key"]);
    const apiSecret = header(request.headers["api-secret"]);
    // Without both there is nothing that could pass: the address's failures decide alone.
    const presented = apiKey && apiSecret ? apiKey : undefined;
    limits.beforeAuthentication(request, presented);
    const principal = await authenticate(apiKey, apiSecret);
    if (principal === null || typeof principal === "string") {
      // A 429 instead once this failure is past its limit.
      limits.authenticationFailed(request, presented, principal ?? "unknown_key");
      throw unauthorized();
    }
    request.principal = principal;
    limits.credential(request, reply);
  };
}
