import type { Command } from "commander";
import { loadConfig, loadConfigWith } from "../config.ts";
import { openDatabase } from "../db/database.ts";
import { migrateToLatest } from "../db/migrations.ts";
import { serve, work } from "../main.ts";
import { print } from "./output.ts";

/** Running the service: the API, the outbox worker, and the migrations both expect. */
export function serveCommands(program: Command): void {
  program
    .command("serve")
    .description("run the API (env: PORT, HOST, EINVOICE_DATABASE_URL, EINVOICE_MODE, EINVOICE_PROCESSES, …)")
    .option("--processes <n>", "API processes sharing the port (default: EINVOICE_PROCESSES or 1)")
    .action(async (opts: { processes?: string }) => {
      await serve(loadConfigWith({ EINVOICE_PROCESSES: opts.processes }));
    });

  program
    .command("worker")
    .description(
      "deliver queued jobs: invoices to the authority, the payment updates and VAT reports forwarded to it, and webhooks (env: EINVOICE_WORKER_CONCURRENCY, EINVOICE_LEASE_MS, …)",
    )
    .action(async () => {
      await work(loadConfig());
    });

  program
    .command("migrate")
    .description("apply pending database migrations")
    .action(async () => {
      const config = loadConfig();
      const db = openDatabase(config.database, config);
      try {
        print({ applied: await migrateToLatest(db) });
      } finally {
        await db.destroy();
      }
    });
}
