import type { Command } from "commander";
import { DomainError } from "../errors.ts";
import { withContext } from "./output.ts";

/** `outbox status`: what the workers have left to deliver, and how long the oldest has waited. */
export function outboxCommands(program: Command): void {
  const outbox = program.command("outbox").description("the transmission outbox");
  outbox
    .command("retry")
    .description(
      "queue failed jobs again with a fresh retry budget: forward (payment updates and VAT reports told to the authority), webhook, or pull (a day of received invoices)",
    )
    .requiredOption("--kind <kind>", "forward, webhook or pull")
    .option("--irn <irn>", "only this invoice's")
    .action(async (opts: { kind: string; irn?: string }) => {
      if (opts.kind !== "forward" && opts.kind !== "webhook" && opts.kind !== "pull") {
        throw new DomainError("invalid_request", {
          message: "Invalid request",
          details: `--kind is forward, webhook or pull, not ${JSON.stringify(opts.kind)}: a failed delivery is queued again with transmit`,
        });
      }
      const kind = opts.kind;
      await withContext(async (ctx) => ({
        kind,
        requeued: await ctx.transmission.requeueFailed(kind, opts.irn),
      }));
    });
  outbox
    .command("status")
    .description("jobs by kind and state, and the age of the oldest pending one")
    .action(async () => {
      await withContext(async (ctx) => {
        const stats = await ctx.transmission.stats();
        const hold = await ctx.transmission.authorityHold();
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
          // Present while the authority refuses this service's credential: deliveries wait on the probe.
          authority_hold: hold
            ? {
                authority: hold.authority,
                since: hold.since,
                reason: hold.reason,
                next_probe_at: hold.next_probe_at,
                probes: hold.probes,
              }
            : null,
        };
      });
    });
}
