import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from "fastify";
import { DomainError } from "../errors.ts";
import {
  addressKey,
  type RateCounter,
  rateCounter,
  type SharedCounts,
  type Verdict,
} from "./rate-counter.ts";

declare module "fastify" {
  interface FastifyContextConfig {
    /** A route's own per-address limit, on top of the public one (the dashboard's sign-in). */
    addressLimit?: { name: string; perMin: number; what: string };
  }
}

export type RateLimitSettings = {
  /** Requests per minute per authenticated credential (API key). */
  perCredentialPerMin: number;
  /** Failed authentications per minute per client address, before its requests are refused unread. */
  authFailuresPerMin: number;
  /** Requests per minute per client address to the routes that need no credentials. */
  publicPerMin: number;
  /** PostgreSQL: the counts every process shares; without it each process counts its own. */
  shared?: SharedCounts;
  /** How often this process exchanges its counts with `shared`. */
  syncMs?: number;
};

/**
 * The service's three limits, each a sliding minute (src/http/rate-counter.ts):
 * - per authenticated credential, counted only once the credential is verified, so a request that
 *   merely names another business's API key (keys are not secret) spends nothing of its budget;
 * - per address, on failed authentications: past the limit the address is refused before its
 *   credentials are looked up or hashed, so a flood of bad credentials costs a map lookup each;
 * - per address, on every route that needs no credentials (health, metrics, documents, keys,
 *   dashboard pages) and on unknown paths.
 * Addresses are request.ip, which honours EINVOICE_TRUST_PROXY; IPv6 ones by their /64.
 */
export function rateLimits(settings: RateLimitSettings, log: FastifyBaseLogger) {
  let reported = 0;
  const counter: RateCounter = rateCounter({
    shared: settings.shared,
    syncMs: settings.syncMs,
    onSyncError: (err) => {
      // Counting goes on in this process meanwhile; a database that stays away is reported once a
      // minute, not once a second.
      if (Date.now() - reported < 60_000) return;
      reported = Date.now();
      log.warn({ err }, "rate limits: the shared counts could not be exchanged; counting per process");
    },
  });

  const refuse = (verdict: Verdict, details: string): never => {
    throw new DomainError("rate_limited", {
      message: "Too many requests",
      details: `${details}; retry after ${verdict.retryAfter} s`,
      retryAfter: verdict.retryAfter,
    });
  };
  const address = (request: FastifyRequest) => addressKey(request.ip);

  return {
    counter,
    start: () => counter.start(),
    stop: () => counter.stop(),

    /** A route without credentials, or an unknown path. */
    anonymous(request: FastifyRequest): void {
      const verdict = counter.hit(`public:${address(request)}`, settings.publicPerMin);
      if (!verdict.allowed) {
        refuse(
          verdict,
          `more than ${settings.publicPerMin} requests in a minute from this address to routes without credentials`,
        );
      }
      const own = request.routeOptions.config?.addressLimit;
      if (own) {
        const routeVerdict = counter.hit(`${own.name}:${address(request)}`, own.perMin);
        if (!routeVerdict.allowed) {
          refuse(routeVerdict, `more than ${own.perMin} ${own.what} in a minute from this address`);
        }
      }
    },

    /** Before the credentials are checked: an address past its failures is refused unread. */
    beforeAuthentication(request: FastifyRequest): void {
      const verdict = counter.peek(`auth-failures:${address(request)}`, settings.authFailuresPerMin);
      if (!verdict.allowed) {
        refuse(
          verdict,
          `more than ${settings.authFailuresPerMin} failed authentications in a minute from this address`,
        );
      }
    },

    authenticationFailed(request: FastifyRequest): void {
      counter.hit(`auth-failures:${address(request)}`, settings.authFailuresPerMin);
    },

    /** After authentication: the verified credential's budget. */
    credential(request: FastifyRequest, reply: FastifyReply): void {
      const max = settings.perCredentialPerMin;
      const verdict = counter.hit(`credential:${request.principal.apiKey}`, max);
      void reply.header("x-ratelimit-limit", max);
      void reply.header("x-ratelimit-remaining", verdict.remaining);
      if (!verdict.allowed) refuse(verdict, `more than ${max} requests in a minute with these credentials`);
    },
  };
}

export type RateLimits = ReturnType<typeof rateLimits>;
