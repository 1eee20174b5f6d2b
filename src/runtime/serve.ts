import cluster from "node:cluster";
import type { Config } from "../config.ts";
import type { DayOutcome } from "../inbox/pull-job.ts";
import { createWorker } from "../outbox/worker.ts";
import { type Context, createContext, type Logger } from "./context.ts";
import { announceSandbox } from "./sandbox.ts";
import { createLogger, createServer } from "./server.ts";

/**
 * `npm start` / `einvoice serve`: the API on PORT, until SIGINT or SIGTERM. With
 * EINVOICE_PROCESSES > 1 the first process prepares the database once, then runs that many API
 * processes sharing the port (node:cluster), replacing any that dies.
 */
export async function serve(config: Config): Promise<void> {
  if (config.processes > 1 && cluster.isPrimary) return supervise(config);
  const logger = createLogger(config);
  const ctx = await createContext(config);
  const app = await createServer(ctx, logger);
  if (config.mode === "sandbox" && cluster.isPrimary) await announceSandbox(ctx);
  const worker = config.outbox.worker ? outboxWorker(ctx, logger) : undefined;
  onShutdown(logger, async () => {
    // Stop taking requests first, then let the worker finish or give back its jobs.
    await app.close();
    await worker?.stop();
    await ctx.close();
  });
  const address = await app.listen({ port: config.port, host: config.host });
  worker?.start();
  logger.info(
    {
      address,
      mode: config.mode,
      // Where signed invoices go, said where an operator looks first: `mode` says sandbox or
      // production, not which authority is delivered to.
      authority: config.authority.kind,
      ...(config.authority.kind === "builtin" ? {} : { authority_url: config.authority.url }),
      database: config.database.engine,
      worker: Boolean(worker),
      pid: process.pid,
    },
    "e-invoicing API listening",
  );
}

async function supervise(config: Config): Promise<void> {
  const logger = createLogger(config);
  // Migrations and the sandbox's first-start seeding happen once, before any API process exists.
  const ctx = await createContext(config);
  try {
    if (config.mode === "sandbox") await announceSandbox(ctx);
  } finally {
    await ctx.close();
  }
  let stopping = false;
  cluster.on("exit", (child, code, signal) => {
    if (stopping) return;
    logger.error({ pid: child.process.pid, code, signal }, "API process died; starting another");
    cluster.fork();
  });
  for (let i = 0; i < config.processes; i++) cluster.fork();
  onShutdown(logger, async () => {
    stopping = true;
    const children = Object.values(cluster.workers ?? {}).filter((c) => c !== undefined);
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            child.once("exit", () => resolve());
            child.process.kill("SIGTERM");
          }),
      ),
    );
  });
  logger.info({ processes: config.processes, port: config.port }, "supervising API processes");
}

/** `einvoice worker`: delivers outbox jobs, until SIGINT or SIGTERM. */
export async function work(config: Config): Promise<void> {
  const logger = createLogger(config);
  const ctx = await createContext(config);
  const worker = outboxWorker(ctx, logger);
  onShutdown(logger, async () => {
    await worker.stop();
    await ctx.close();
  });
  worker.start();
}

/** How often a worker also prunes the idempotency keys past their 24 hours. */
const HOUSEKEEPING_MS = 60_000;

/**
 * How often a worker asks whether a collection of received invoices is due: the database says
 * (inbox_pulls), so `invoices pull` is taken up within this, whatever EINVOICE_INBOX_PULL_MS is.
 * The days it queues are pull jobs of the outbox, run and retried as every other job.
 */
const COLLECT_CHECK_MS = 5000;

/** An outbox worker, which also keeps the idempotency keys pruned and collects received invoices. */
function outboxWorker(ctx: Context, logger: Logger) {
  return createWorker({
    transmission: ctx.transmission,
    concurrency: ctx.config.outbox.concurrency,
    pollMs: ctx.config.outbox.pollMs,
    logger,
    housekeeping: [
      { name: "idempotency-prune", everyMs: HOUSEKEEPING_MS, run: () => ctx.idempotency.prune() },
      {
        name: "inbox-collect",
        everyMs: Math.min(COLLECT_CHECK_MS, ctx.config.inbox.pullMs),
        run: async () => {
          const scheduled = await ctx.collector.schedule();
          if (scheduled.queued === false || scheduled.queued.length === 0) return;
          // What the previous collection's last day did, beside the days queued now.
          const state = await ctx.collector.state();
          const last = state?.last_outcome ? (JSON.parse(state.last_outcome) as DayOutcome) : undefined;
          const line = { queued: scheduled.queued, last_error: state?.last_error ?? null, last };
          if (state?.last_error || (last?.unaddressedCount ?? 0) > 0)
            logger.warn(line, "received invoices: days queued; the last day pulled did not store all");
          else logger.info(line, "received invoices: days queued");
        },
      },
    ],
  });
}

function onShutdown(logger: Logger, close: () => Promise<void>): void {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, "shutting down");
    try {
      await close();
    } finally {
      logger.flush();
      process.exit(0);
    }
  };
  process.once("SIGINT", () => void shutdown("SIGINT"));
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
}
