import { Counter, Gauge, type Registry } from "prom-client";
import type { OutboxService } from "./outbox-service.ts";
import type { Outcome } from "./verdict.ts";

type Stats = Awaited<ReturnType<OutboxService["stats"]>>;
type Hold = Awaited<ReturnType<OutboxService["authorityHold"]>>;
/** Where the counts come from; a source without an authority hold has none to report. */
type Source = Pick<OutboxService, "stats"> & Partial<Pick<OutboxService, "authorityHold">>;

/**
 * Prometheus view of the outbox, read from the database, so every process reports the same totals;
 * the settled counter is this process's own. Counting the jobs reads the whole outbox, which is
 * never pruned: scrapes are public and may come often, so they read a snapshot, counted again at
 * most once per `refreshMs` however many scrapes come (and its age is reported beside it). The
 * gauges register into the service's registry (http/metrics.ts), which /metrics serves.
 */
export function outboxMetrics(options: { registry: Registry; refreshMs: number }) {
  const { registry } = options;
  let source: Source | undefined;
  let taken: { at: number; stats: Stats; hold: Hold } | undefined;
  // One count at a time: the scrapes that find the snapshot stale while it is counted share it.
  let counting: Promise<Stats> | undefined;
  const snapshot = async (): Promise<Stats> => {
    if (!source) return [];
    if (taken && Date.now() - taken.at < options.refreshMs) return taken.stats;
    counting ??= (async (from) => {
      const at = Date.now();
      const [stats, hold] = await Promise.all([from.stats(), from.authorityHold?.()]);
      taken = { at, stats, hold };
      return stats;
    })(source).finally(() => {
      counting = undefined;
    });
    return counting;
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
  new Gauge({
    name: "einvoice_outbox_snapshot_age_seconds",
    help: "Age of the outbox counts the other outbox gauges report",
    registers: [registry],
    async collect() {
      await snapshot();
      this.set(taken ? Math.max(0, (Date.now() - taken.at) / 1000) : 0);
    },
  });
  new Gauge({
    name: "einvoice_authority_hold_seconds",
    help: "How long deliveries to the authority have been paused because it refuses this service's credentials (0: not paused)",
    registers: [registry],
    async collect() {
      await snapshot();
      const hold = taken?.hold;
      this.set(hold ? Math.max(0, (Date.now() - Date.parse(hold.since)) / 1000) : 0);
    },
  });
  new Gauge({
    name: "einvoice_authority_hold_probes",
    help: "Probes made during the current pause of deliveries to the authority (0: not paused)",
    registers: [registry],
    async collect() {
      await snapshot();
      this.set(taken?.hold?.probes ?? 0);
    },
  });
  return {
    observe(stats: Source) {
      source = stats;
    },
    settled(kind: string, outcome: Outcome) {
      settled.inc({ kind, outcome });
    },
  };
}

export type OutboxMetrics = ReturnType<typeof outboxMetrics>;
