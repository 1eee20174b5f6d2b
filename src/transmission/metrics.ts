import { Counter, Gauge, Registry } from "prom-client";
import type { Outcome, TransmissionService } from "./service.ts";

type Stats = Awaited<ReturnType<TransmissionService["stats"]>>;

/**
 * Prometheus view of the outbox, read from the database at scrape time, so every process reports
 * the same totals; the settled counter is this process's own.
 */
export function outboxMetrics() {
  const registry = new Registry();
  let source: Pick<TransmissionService, "stats"> | undefined;
  // The registry collects every metric at once; one query per scrape serves all three gauges.
  let inFlightQuery: Promise<Stats> | undefined;
  const snapshot = (): Promise<Stats> => {
    if (!source) return Promise.resolve([]);
    inFlightQuery ??= source.stats().finally(() => {
      inFlightQuery = undefined;
    });
    return inFlightQuery;
  };

  const settled = new Counter({
    name: "einvoice_outbox_settled_total",
    help: "Outbox jobs settled by this process, by kind and outcome",
    labelNames: ["kind", "outcome"] as const,
    registers: [registry],
  });
  new Gauge({
    name: "einvoice_outbox_jobs",
    help: "Outbox jobs by kind and state",
    labelNames: ["kind", "state"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const row of await snapshot()) this.set({ kind: row.kind, state: row.state }, row.count);
    },
  });
  new Gauge({
    name: "einvoice_outbox_in_flight",
    help: "Pending outbox jobs held under a live lease",
    labelNames: ["kind"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const row of await snapshot())
        if (row.state === "pending") this.set({ kind: row.kind }, row.in_flight);
    },
  });
  new Gauge({
    name: "einvoice_outbox_oldest_pending_seconds",
    help: "Age of the oldest pending outbox job",
    labelNames: ["kind"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const row of await snapshot()) {
        if (row.state === "pending" && row.oldest) {
          this.set({ kind: row.kind }, Math.max(0, (Date.now() - Date.parse(row.oldest)) / 1000));
        }
      }
    },
  });
  return {
    registry,
    observe(stats: Pick<TransmissionService, "stats">) {
      source = stats;
    },
    settled(kind: string, outcome: Outcome) {
      settled.inc({ kind, outcome });
    },
  };
}

export type OutboxMetrics = ReturnType<typeof outboxMetrics>;
