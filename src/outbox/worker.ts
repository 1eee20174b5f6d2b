import { randomBytes } from "node:crypto";
import os from "node:os";
import type { FastifyBaseLogger } from "fastify";
import type { OutboxService } from "./outbox-service.ts";

export type Worker = { owner: string; start(): void; stop(): Promise<void>; wake(): void };

/**
 * Claims due outbox jobs and runs up to `concurrency` at once. A job it claims carries its lease;
 * if this process dies, the lease expires and any other worker takes the job over. Stopping stops
 * claiming, lets running jobs finish (within the lease), and gives back whatever was not started.
 */
export function createWorker(deps: {
  /** The outbox service (the context's `transmission`). */
  transmission: Pick<OutboxService, "claimDue" | "process" | "release">;
  concurrency: number;
  pollMs: number;
  logger: Pick<FastifyBaseLogger, "info" | "warn" | "error">;
  /**
   * Periodic work beside the jobs (pruning expired idempotency keys, collecting received invoices),
   * each task one round at a time and given the worker's name.
   */
  housekeeping?: ReadonlyArray<{ name: string; everyMs: number; run(owner: string): Promise<unknown> }>;
}): Worker {
  const { transmission, concurrency, pollMs, logger } = deps;
  const housekeeping = (deps.housekeeping ?? []).map((task) => ({
    ...task,
    running: undefined as Promise<unknown> | undefined,
    due: 0,
  }));
  const owner = `worker:${os.hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  const running = new Set<Promise<unknown>>();
  let stopping = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  /** Starts a round of each task that is due and not running; the jobs go on meanwhile. */
  function keepUp(): void {
    for (const task of housekeeping) {
      if (task.running || Date.now() < task.due) continue;
      task.due = Date.now() + task.everyMs;
      task.running = task
        .run(owner)
        .catch((err: unknown) =>
          logger.warn({ err, task: task.name }, "housekeeping failed; it runs again next round"),
        )
        .finally(() => {
          task.running = undefined;
        });
    }
  }

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  async function run(): Promise<void> {
    while (!stopping) {
      keepUp();
      const free = concurrency - running.size;
      let claimed = 0;
      if (free > 0) {
        try {
          const jobs = await transmission.claimDue(owner, free);
          claimed = jobs.length;
          for (const job of jobs) {
            const task = transmission
              .process(job, owner)
              .catch((err: unknown) =>
                logger.error(
                  { err, jobId: job.id },
                  "outbox job crashed; its lease will expire and it will be retried",
                ),
              )
              .finally(() => {
                running.delete(task);
                wake?.();
              });
            running.add(task);
          }
        } catch (err) {
          logger.warn({ err }, "outbox claim failed; retrying");
        }
      }
      // Full batch: look again at once; otherwise wait for a slot, a wake-up or the poll interval.
      if (claimed === 0 || running.size >= concurrency) await sleep(pollMs);
      // Looking again at once still lets I/O in first: on SQLite a claim completes without
      // waiting on any socket, and jobs due again at once (a short backoff) would otherwise keep
      // this loop from ever reading the answers its own deliveries are waiting for.
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  return {
    owner,
    start() {
      if (loop) return;
      logger.info({ owner, concurrency }, "outbox worker started");
      loop = run();
    },
    wake: () => wake?.(),
    async stop() {
      stopping = true;
      wake?.();
      await loop;
      await Promise.allSettled([...running, ...housekeeping.map((task) => task.running)]);
      const released = await transmission.release(owner);
      logger.info({ owner, released }, "outbox worker stopped");
    },
  };
}
