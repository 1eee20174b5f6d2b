import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import type { Registry } from "prom-client";
import { Type } from "typebox";
import { DomainError } from "../errors.ts";
import { health } from "./envelope.ts";
import { ErrorEnvelope, responses } from "./openapi.ts";

/** The spec's health check, liveness, readiness and the OpenAPI document; /metrics is `metricsRoutes`. */
export function operationalRoutes(app: FastifyInstance, deps: { ready(): Promise<void> }): void {
  app.get(
    "/",
    {
      schema: {
        summary: "Health check",
        tags: ["operations"],
        response: responses(
          Type.Object({
            code: Type.Literal(200),
            data: Type.Null(),
            message: Type.Literal("API is healthy"),
          }),
          "the service answers",
          [401],
        ),
      },
      config: { handler: "health" },
    },
    async () => health(),
  );
  // For orchestrators, beside the spec's health check: liveness needs nothing, readiness the database.
  const Status = (status: string) => Type.Object({ status: Type.Literal(status) });
  app.get(
    "/healthz",
    {
      schema: {
        summary: "Liveness (no credentials)",
        tags: ["operations"],
        security: [],
        response: responses(Status("ok"), "the process is up", [429]),
      },
      config: { handler: "healthz", public: true },
    },
    async () => ({ status: "ok" }),
  );
  app.get(
    "/openapi.json",
    {
      schema: {
        summary: "This API's OpenAPI 3.1 document (no credentials)",
        tags: ["operations"],
        security: [],
        response: {
          200: Type.Object({}, { additionalProperties: true, description: "OpenAPI 3.1" }),
          429: { ...ErrorEnvelope, description: "too many requests from this address" },
        },
      },
      config: { handler: "openapi", public: true },
    },
    async () => app.swagger() as unknown as Record<string, unknown>,
  );
  app.get(
    "/readyz",
    {
      schema: {
        summary: "Readiness: the database answers (no credentials)",
        tags: ["operations"],
        security: [],
        response: responses(Status("ready"), "ready to serve", [429, 503]),
      },
      config: { handler: "readyz", public: true },
    },
    async () => {
      try {
        await deps.ready();
      } catch {
        throw new DomainError("service_unavailable", {
          message: "Not ready",
          details: "the database does not answer",
          retryAfter: 2,
        });
      }
      return { status: "ready" };
    },
  );
}

/** Prometheus scrape endpoint: service-wide counts only, no business's data, so no credentials. */
export function metricsRoutes(deps: { registry: Registry }): FastifyPluginAsync {
  return async (app) => {
    const scrape = {
      schema: {
        summary: "Prometheus metrics (no credentials; service-wide counts only)",
        tags: ["operations"],
        security: [],
        response: {
          200: {
            description: "the Prometheus text format",
            content: { "text/plain": { schema: { type: "string" } } },
          },
          429: { ...ErrorEnvelope, description: "too many requests from this address" },
        },
      },
      config: { handler: "metrics", public: true },
    };
    app.get("/metrics", scrape, async (_request, reply) => {
      const { registry } = deps;
      return reply.type(registry.contentType).send(await registry.metrics());
    });
  };
}
