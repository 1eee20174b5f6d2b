import type { Command } from "commander";
import { withContext } from "./output.ts";

/** `outbox status`: what the workers have left to deliver, and how long the oldest has waited. */
export function outboxCommands(program: Command): void {
  program
    .command("outbox")
    .description("the transmission outbox")
    .command("status")
    .description("jobs by kind and state, and the age of the oldest pending one")
    .action(async () => {
      await withContext(async (ctx) => {
        const stats = await ctx.transmission.stats();
        const pending = stats
          .filter((s) => s.state === "pending" && s.oldest)
          .map((s) => Date.parse(s.oldest as string));
        return {
          jobs: stats.map(({ kind, state, count, in_flight }) => ({
            kind,
            state,
            count,
            ...(state === "pending" ? { in_flight } : {}),
          })),
          oldest_pending_age_seconds:
            pending.length > 0 ? Math.round((Date.now() - Math.min(...pending)) / 1000) : null,
        };
      });
    });
}
