import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { ErrorEnvelope } from "../http/openapi.ts";
import type { OutboxMetrics } from "./metrics.ts";

/** Prometheus scrape endpoint: service-wide counts only, no business's data, so no credentials. */
export function metricsRoutes(deps: { metrics: OutboxMetrics }): FastifyPluginAsyncTypebox {
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
      const { registry } = deps.metrics;
      return reply.type(registry.contentType).send(await registry.metrics());
    });
  };
}
