import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from "fastify";
import type { AuthFailure } from "../businesses/business-service.ts";
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
  /**
   * Failed authentications per minute: per client address for requests without an existing API key,
   * per address and API key for an existing key with the wrong secret.
   */
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
 * - on failed authentications, per address for requests that bring no credentials or an API key
 *   that does not exist, per address and API key for an existing key with the wrong secret. Past
 *   its limit an address's requests without credentials, and a key's requests from that address,
 *   are refused before anything is looked up or hashed; any other key and secret from the address
 *   is still checked (an unknown key answers 429 once checked), so clients sharing an address (a
 *   NAT, a proxy that is not trusted) cannot lock each other's good credentials out;
 * - per address, on every route that needs no credentials (health, metrics, documents, keys,
 *   dashboard pages) and on unknown paths.
 * Addresses are request.ip, which honours EINVOICE_TRUST_PROXY; IPv6 ones by their /64. Requests
 * that carry X-Forwarded-For while no proxy is trusted are reported once (a warning): behind a
 * proxy, every client would count as the proxy's one address.
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
  let forwardedReported = false;
  const address = (request: FastifyRequest) => {
    // request.ips is only there when Fastify trusts a proxy (EINVOICE_TRUST_PROXY).
    if (!forwardedReported && request.headers["x-forwarded-for"] !== undefined && request.ips === undefined) {
      forwardedReported = true;
      log.warn(
        { remoteAddress: request.ip },
        "requests arrive with X-Forwarded-For but no proxy is trusted: the rate limits count every client behind a proxy as the proxy's one address; set EINVOICE_TRUST_PROXY to the proxies' addresses (e.g. 10.0.0.0/8,127.0.0.1), or to true when nothing else can connect",
      );
    }
    return addressKey(request.ip);
  };
  const failuresOf = (request: FastifyRequest, apiKey: string | undefined) =>
    apiKey === undefined
      ? { key: `auth-failures:${address(request)}`, what: "from this address" }
      : // An address holds no "@": the key is what comes before the last one.
        { key: `key-failures:${apiKey}@${address(request)}`, what: "from this address with this API key" };
  const failureLimit = (verdict: Verdict, what: string) =>
    refuse(verdict, `more than ${settings.authFailuresPerMin} failed authentications in a minute ${what}`);

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

    /**
     * Before the credentials are checked, refused unread: without an API key and secret, an address
     * past its failures; with them, that key past its failures from this address. Another key from
     * an address past its failures is checked: it may be a good one.
     */
    beforeAuthentication(request: FastifyRequest, apiKey: string | undefined): void {
      const { key, what } = failuresOf(request, apiKey);
      const verdict = counter.peek(key, settings.authFailuresPerMin);
      if (!verdict.allowed) failureLimit(verdict, what);
    },

    /**
     * Counts a failure: an existing key's wrong secret for that key at this address, anything else
     * for the address. Throws the 429 when this failure is past the limit.
     */
    authenticationFailed(request: FastifyRequest, apiKey: string | undefined, failure: AuthFailure): void {
      const { key, what } = failuresOf(request, failure === "wrong_secret" ? apiKey : undefined);
      const verdict = counter.hit(key, settings.authFailuresPerMin);
      if (!verdict.allowed) failureLimit(verdict, what);
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
