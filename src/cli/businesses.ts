import type { Command } from "commander";
import { DomainError } from "../errors.ts";
import { withContext } from "./output.ts";

/** `business`: register a business, export its QR crypto keys. */
export function businessCommands(program: Command): void {
  const business = program.command("business").description("manage businesses");
  business
    .command("add")
    .description("register a business")
    .requiredOption("--name <name>", "legal name")
    .requiredOption("--tin <tin>", "tax identification number, digits-digits")
    .option("--id <uuid>", "business id (generated when omitted)")
    .option("--service-id <id>", "8 uppercase letters or digits (generated when omitted)")
    .action(async (opts: { name: string; tin: string; id?: string; serviceId?: string }) => {
      await withContext((ctx) =>
        ctx.businesses.add({ name: opts.name, tin: opts.tin, id: opts.id, serviceId: opts.serviceId }),
      );
    });

  business
    .command("crypto-keys")
    .description("export a business's QR crypto keys, like the authority's crypto_keys.txt")
    .requiredOption("--business <id>", "business id")
    .action(async (opts: { business: string }) => {
      await withContext(async (ctx) => {
        const found = await ctx.businesses.find(opts.business);
        if (!found)
          throw new DomainError("invalid_request", {
            message: "Invalid request",
            details: `business ${opts.business} does not exist`,
          });
        return {
          public_key: Buffer.from(ctx.qr.publicKeyPem).toString("base64"),
          certificate: found.certificate,
        };
      });
    });
}

/** `webhook set`: where a business's events are POSTed. */
export function webhookCommands(program: Command): void {
  program
    .command("webhook")
    .description("webhooks of a business")
    .command("set")
    .description("register (or replace) a business's webhook URL; prints the signing secret, shown once")
    .requiredOption("--business <id>", "business id")
    .requiredOption("--url <url>", "http(s) URL that receives POSTed events")
    .action(async (opts: { business: string; url: string }) => {
      await withContext((ctx) => ctx.webhooks.set(opts.business, opts.url));
    });
}

/** `key`: a business's API credentials. */
export function apiKeyCommands(program: Command): void {
  const key = program.command("key").description("manage API credentials");
  key
    .command("create")
    .description("create an API key and secret for a business (the secret is shown once)")
    .requiredOption("--business <id>", "business id")
    .action(async (opts: { business: string }) => {
      await withContext(async (ctx) => {
        const { api_key, api_secret, business_id } = await ctx.businesses.createKey(opts.business);
        return { api_key, api_secret, business_id };
      });
    });
  key
    .command("revoke")
    .description("revoke an API key at once")
    .argument("<api_key>")
    .action(async (apiKey: string) => {
      await withContext(async (ctx) => ({ ...(await ctx.businesses.revokeKey(apiKey)), revoked: true }));
    });
}
