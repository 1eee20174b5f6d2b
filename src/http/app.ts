import { randomUUID } from "node:crypto";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyPluginAsync,
  type FastifyRequest,
} from "fastify";
import { DomainError } from "../errors.ts";
import { compileOnce, errorsText } from "../schema/ajv.ts";
import { type Authenticate, guard } from "./auth.ts";
import { registerDocs } from "./docs.ts";
import { fromFrameworkError, routeNotFound, sendError } from "./error-mapper.ts";
import { expectContinue } from "./expect-continue.ts";
import { useBoundedJsonParser } from "./json-body.ts";
import { BODY_LIMIT } from "./limits.ts";
import { lingeringClose } from "./lingering-close.ts";
import type { ServiceMetrics } from "./metrics.ts";
import { operationalRoutes } from "./operational-routes.ts";
import { type RateLimitSettings, rateLimits } from "./rate-limit.ts";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Names the operation in `error.handler`. */
    handler?: string;
    /** The envelope `message` when the request itself is malformed. */
    failureMessage?: string;
    /** A JSON object body may reach the handler unparsed, as a JsonText (json-text.ts). */
    deferredJson?: boolean;
    /**
     * An Idempotency-Key sent with such a body is claimed by the handler, once the body is
     * checked (`claimAfterCheck` in idempotency/hook.ts), not before it runs.
     */
    claimAfterCheck?: boolean;
  }
}

export type AppDeps = {
  logger: FastifyBaseLogger;
  authenticate: Authenticate;
  routes: FastifyPluginAsync[];
  rateLimits: RateLimitSettings;
  requestTimeoutMs: number;
  /** Which proxies' X-Forwarded-For and X-Forwarded-Proto to believe (Fastify's `trustProxy`). */
  trustProxy?: boolean | string;
  /** Resolves when the database answers; for the readiness probe. */
  ready(): Promise<void>;
  metrics?: Pick<ServiceMetrics, "request">;
  /** Check each answer against its route's response schema (outside production: it costs a walk of the answer). */
  checkAnswers?: boolean;
  /**
   * Values for the examples' placeholders (`BUSINESS_ID` for `{{BUSINESS_ID}}`) in the document
   * /docs shows: the sandbox's demo business, so "Try it out" works as it stands. /openapi.json
   * keeps the placeholders.
   */
  docsExampleValues?: () => Record<string, string> | undefined;
};

/** A caller's request id is kept when it is a plain token; anything else gets a fresh one. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export async function buildApp(deps: AppDeps) {
  const app = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: BODY_LIMIT,
    // The caller's `x-request-id` ties its logs to ours; every answer carries the id back.
    genReqId: (request) => {
      const given = header(request.headers["x-request-id"]);
      return given !== undefined && REQUEST_ID.test(given) ? given : randomUUID();
    },
    requestTimeout: deps.requestTimeoutMs,
    trustProxy: deps.trustProxy ?? false,
    routerOptions: { maxParamLength: 200, ignoreTrailingSlash: true },
    // Failures the router meets before any route runs get the same envelope as every other error.
    frameworkErrors: (error, _request, reply) =>
      sendError(
        reply,
        new DomainError("invalid_request", {
          message: "Invalid request",
          details:
            error.code === "FST_ERR_MAX_PARAM_LENGTH"
              ? "a path parameter is longer than 200 characters"
              : "the URL is not valid: a percent-encoding is broken or encodes invalid UTF-8",
        }),
        "router",
      ),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Every body of this API is JSON; anything else is a 415, not a string the schema then rejects.
  app.removeContentTypeParser("text/plain");

  // Bodies are measured before they are parsed (nesting, objects, values) and checked after.
  useBoundedJsonParser(app);

  // Before the routes, /docs included: every route's early answers get them.
  lingeringClose(app);
  expectContinue(app);

  // Set before any plugin registers routes: each plugin keeps the handler it was registered under
  // (/docs included, whose pages a rate limit may refuse).
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const domain = err instanceof DomainError ? err : fromFrameworkError(err, request);
    if (domain.code === "internal") request.log.error({ err }, "unhandled error");
    return sendError(reply, domain, request.routeOptions.config?.handler ?? "einvoice");
  });

  // The route schemas describe the API (OpenAPI 3.1 at /openapi.json) and, outside production, every
  // answer is checked against its route's response schema: one that does not match is our bug, an
  // error (500, logged), so the test suite proves the document describes the answers. Answers are
  // serialized as built rather than by the schema (fast-json-stringify), which would drop an
  // undeclared field or coerce a mistyped one in silence: a drift would become a changed answer.
  app.setSerializerCompiler(({ schema, method, url, httpStatus }) => {
    if (!deps.checkAnswers) return (data) => JSON.stringify(data);
    const check = compileOnce("answer", schema as object);
    return (data) => {
      if (!check(data)) {
        throw new Error(
          `the ${httpStatus} answer to ${method} ${url} does not match its response schema: ${errorsText(check)}`,
        );
      }
      return JSON.stringify(data);
    };
  });
  await registerDocs(app, deps.docsExampleValues);

  app.setValidatorCompiler(({ schema, httpPart }) =>
    compileOnce(httpPart === "body" ? "body" : "text", schema as object),
  );

  app.decorateRequest("principal", null as unknown as FastifyRequest["principal"]);

  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  // The hooks every request runs take Fastify's callback, not a promise: a promise and its turn of
  // the microtask queue for each, on every request, for work that never waits.
  app.addHook("onSend", (request, reply, payload, done) => {
    // On every answer, errors and refusals included.
    reply.header("x-request-id", request.id);
    // Once the server is closing, an answer closes its connection: a kept-alive client would
    // otherwise hold the process until the keep-alive timeout (72 s) after the last request.
    if (closing) reply.header("connection", "close");
    done(null, payload);
  });

  const limits = rateLimits(deps.rateLimits, app.log);
  app.addHook("onReady", async () => limits.start());
  app.addHook("onClose", async () => limits.stop());
  app.addHook("onRequest", guard({ authenticate: deps.authenticate, limits }));

  const { metrics } = deps;
  if (metrics) {
    app.addHook("onResponse", (request, reply, done) => {
      metrics.request(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
  }

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, routeNotFound(request.method, request.url), "router"),
  );

  operationalRoutes(app, { ready: deps.ready });
  for (const routes of deps.routes) await app.register(routes);
  return app;
}

export type App = Awaited<ReturnType<typeof buildApp>>;
