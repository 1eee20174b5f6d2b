import { Counter, Histogram, Registry } from "prom-client";

/**
 * The service's Prometheus registry, which /metrics serves (operational-routes.ts): request counts
 * and latency by method, route and status (the histogram's `_count` is the request count), and the
 * invoices this process signed; the outbox registers its gauges into it too (outbox/metrics.ts).
 * The route is the pattern (`/api/v1/einvoice/:irn`), never the path itself, so the label set stays
 * bounded whatever clients send.
 */
export function serviceMetrics() {
  const registry = new Registry();
  const requests = new Histogram({
    name: "einvoice_http_request_duration_seconds",
    help: "HTTP requests answered by this process, by method, route and status, and how long they took",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const signed = new Counter({
    name: "einvoice_invoices_signed_total",
    help: "Invoices signed and stored by this process",
    registers: [registry],
  });
  return {
    registry,
    request(method: string, route: string | undefined, status: number, seconds: number) {
      requests.observe({ method, route: route ?? "(no route)", status: String(status) }, seconds);
    },
    signed(count: number) {
      signed.inc(count);
    },
  };
}

export type ServiceMetrics = ReturnType<typeof serviceMetrics>;
