import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { OutboxMetrics } from "./metrics.ts";

/** Prometheus scrape endpoint: service-wide counts only, no business's data, so no credentials. */
export function metricsRoutes(deps: { metrics: OutboxMetrics }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get("/metrics", { config: { handler: "metrics", public: true } }, async (_request, reply) => {
      const { registry } = deps.metrics;
      return reply.type(registry.contentType).send(await registry.metrics());
    });
  };
}
