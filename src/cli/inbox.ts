import fs from "node:fs";
import type { Command } from "commander";
import type { Principal } from "../businesses/business-service.ts";
import { isRealDate } from "../crypto/irn.ts";
import type { ReceivedStatus } from "../db/schema.ts";
import { DomainError } from "../errors.ts";
import type { InboxFilter } from "../inbox/inbox-repository.ts";
import { INBOX_MAX_LENGTH } from "../inbox/inbox-service.ts";
import type { Context } from "../main.ts";
import { withContext } from "./output.ts";

/** How the CLI's decisions appear in a received invoice's history. */
const CLI_ACTOR = "cli";
const STATUSES: readonly ReceivedStatus[] = ["RECEIVED", "ACKNOWLEDGED", "REJECTED"];
/** The longest reason a rejection keeps, as the API's. */
const MAX_REASON = 1000;

const invalid = (details: string) =>
  new DomainError("invalid_request", { message: "Invalid request", details });

/** The named business, as the principal the inbox answers: the operator acts for it. */
export async function buyerOf(ctx: Context, id: string): Promise<Principal> {
  const business = await ctx.businesses.find(id);
  if (!business) {
    throw new DomainError("business_not_found", {
      message: "Business not found",
      details: `no business has the id '${id}'`,
    });
  }
  return { businessId: business.id, apiKey: CLI_ACTOR };
}

function day(name: string, value: string | undefined): string | undefined {
  if (value !== undefined && !(value.length === 10 && isRealDate(value))) {
    throw invalid(`--${name} is a real calendar date written YYYY-MM-DD, not ${JSON.stringify(value)}`);
  }
  return value;
}

function integer(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) {
    throw invalid(`--${name} is a whole number from ${min} to ${max}, not ${JSON.stringify(value)}`);
  }
  return n;
}

type ListOptions = {
  business: string;
  status?: string;
  supplierTin?: string;
  from?: string;
  to?: string;
  start?: string;
  length?: string;
};

/** The filter and page the options ask for, checked before the database is opened. */
function listOf(opts: ListOptions) {
  const { status } = opts;
  if (status !== undefined && !STATUSES.includes(status as ReceivedStatus)) {
    throw invalid(`--status is one of ${STATUSES.join(", ")}, not ${JSON.stringify(status)}`);
  }
  const from = day("from", opts.from);
  const to = day("to", opts.to);
  if (from !== undefined && to !== undefined && from > to)
    throw invalid(`--from ${from} is after --to ${to}`);
  const supplierTin = opts.supplierTin?.trim();
  if (supplierTin !== undefined && (supplierTin === "" || supplierTin.length > 40)) {
    throw invalid("--supplier-tin is a TIN of 1 to 40 characters");
  }
  const filter: InboxFilter = {
    ...(status === undefined ? {} : { status: status as ReceivedStatus }),
    ...(supplierTin === undefined ? {} : { supplierTin }),
    ...(from === undefined ? {} : { from }),
    ...(to === undefined ? {} : { to }),
  };
  return {
    filter,
    start: integer("start", opts.start, 0, 1_000_000) ?? 0,
    length: integer("length", opts.length, 1, INBOX_MAX_LENGTH) ?? 50,
  };
}

/**
 * The inbox from the database, as the operator acting for a business: `invoices inbox`, `acknowledge`,
 * `reject`, and `pull` (a collection from the authority now, by the workers or in this process).
 */
export function inboxCommands(invoices: Command): void {
  invoices
    .command("inbox")
    .description("the invoices a business received as the buyer, newest first (GET /api/v1/einvoice/inbox)")
    .requiredOption("--business <id>", "business id")
    .option("--status <status>", STATUSES.join(", "))
    .option("--supplier-tin <tin>", "only this supplier's")
    .option("--from <date>", "received on or after this day (UTC), YYYY-MM-DD")
    .option("--to <date>", "received on or before this day (UTC), YYYY-MM-DD")
    .option("--start <n>", "offset (default 0)")
    .option("--length <n>", `page size, 1 to ${INBOX_MAX_LENGTH} (default 50)`)
    .action(async (opts: ListOptions) => {
      const { filter, start, length } = listOf(opts);
      await withContext(async (ctx) =>
        ctx.inbox.list(await buyerOf(ctx, opts.business), filter, start, length),
      );
    });

  invoices
    .command("acknowledge")
    .description(
      "acknowledge a received invoice for its buyer; one pulled from the authority is told to it by the workers",
    )
    .argument("<irn>")
    .requiredOption("--business <id>", "the buyer's business id")
    .action(async (irn: string, opts: { business: string }) => {
      await withContext(async (ctx) =>
        ctx.inbox.acknowledge(await buyerOf(ctx, opts.business), irn, CLI_ACTOR),
      );
    });

  invoices
    .command("reject")
    .description("reject a received invoice for its buyer, with the reason (recorded here)")
    .argument("<irn>")
    .requiredOption("--business <id>", "the buyer's business id")
    .requiredOption("--reason <text>", `why, 1 to ${MAX_REASON} characters`)
    .action(async (irn: string, opts: { business: string; reason: string }) => {
      const reason = opts.reason.trim();
      if (reason === "" || reason.length > MAX_REASON) {
        throw invalid(`--reason is the reason for the rejection, 1 to ${MAX_REASON} characters`);
      }
      await withContext(async (ctx) =>
        ctx.inbox.reject(await buyerOf(ctx, opts.business), irn, reason, CLI_ACTOR),
      );
    });

  invoices
    .command("pull")
    .description(
      "collect the invoices waiting at the authority for this service's businesses: asks the workers for a collection now, or with --wait runs one here and prints what it did",
    )
    .option("--wait", "collect in this process, now, and print the outcome", false)
    .action(async (opts: { wait: boolean }) => {
      await withContext(async (ctx) => {
        if (opts.wait) return ctx.collector.collect(`cli:${process.pid}`, { force: true });
        await ctx.collector.pullNow();
        const state = await ctx.collector.state();
        return {
          requested: true,
          // Only MBS relays invoices to buyers; the builtin authority delivers them as they are signed.
          ...(ctx.config.authority.kind === "mbs"
            ? {}
            : {
                note: `the ${ctx.config.authority.kind} authority relays no invoices to buyers: nothing is pulled`,
              }),
          next_pull_at: state?.next_pull_at ?? null,
          last_pulled_at: state?.last_pulled_at ?? null,
          last_error: state?.last_error ?? null,
          cursor_day: state?.cursor_day ?? null,
        };
      });
    });
}

/** `invoices pdf <irn> --received --business <id>`: the copy of an invoice the business received. */
/** `--received` and `--business` go together: a received invoice is found by its buyer and IRN. */
export function checkReceivedOptions(opts: { received: boolean; business?: string }): void {
  if (opts.received === (opts.business !== undefined)) return;
  throw new DomainError("invalid_request", {
    message: "Invalid request",
    details: opts.received
      ? "--received needs --business <id>: the buyer whose received invoice it is"
      : "--business goes with --received: a signed invoice is found by its IRN alone",
  });
}

export async function writeReceivedPdf(irn: string, business: string, out: string): Promise<void> {
  await withContext(async (ctx) => {
    const buyer = await buyerOf(ctx, business);
    const pdf = await ctx.pdfs.receivedPdf(buyer, irn, ctx.inbox);
    fs.writeFileSync(out, pdf);
    return { irn, business_id: buyer.businessId, received: true, written: out, bytes: pdf.length };
  });
}
