import { Counter, Gauge, Registry } from "prom-client";
import type { Outcome, TransmissionService } from "./service.ts";

/**
 * Prometheus view of the outbox, read from the database at scrape time, so every process reports
 * the same totals; the settled counter is this process's own.
 */
export function outboxMetrics() {
  const registry = new Registry();
  let source: Pick<TransmissionService, "stats"> | undefined;
  const settled = new Counter({
    name: "einvoice_outbox_settled_total",
    help: "Outbox jobs settled by this process, by kind and outcome",
    labelNames: ["kind", "outcome"] as const,
    registers: [registry],
  });
  const jobs = new Gauge({
    name: "einvoice_outbox_jobs",
    help: "Outbox jobs by kind and state",
    labelNames: ["kind", "state"] as const,
    registers: [registry],
  });
  const inFlight = new Gauge({
    name: "einvoice_outbox_in_flight",
    help: "Pending outbox jobs held under a live lease",
    labelNames: ["kind"] as const,
    registers: [registry],
  });
  const oldest = new Gauge({
    name: "einvoice_outbox_oldest_pending_seconds",
    help: "Age of the oldest pending outbox job",
    labelNames: ["kind"] as const,
    registers: [registry],
    async collect() {
      if (!source) return;
      const stats = await source.stats();
      jobs.reset();
      inFlight.reset();
      this.reset();
      for (const row of stats) {
        jobs.set({ kind: row.kind, state: row.state }, row.count);
        if (row.state !== "pending") continue;
        inFlight.set({ kind: row.kind }, row.in_flight);
        if (row.oldest)
          this.set({ kind: row.kind }, Math.max(0, (Date.now() - Date.parse(row.oldest)) / 1000));
      }
    },
  });
  void oldest;
  return {
    registry,
    observe(source_: Pick<TransmissionService, "stats">) {
      source = source_;
    },
    settled(kind: string, outcome: Outcome) {
      settled.inc({ kind, outcome });
    },
  };
}

export type OutboxMetrics = ReturnType<typeof outboxMetrics>;
