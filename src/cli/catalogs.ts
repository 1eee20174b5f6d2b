import type { Command } from "commander";
import { DomainError } from "../errors.ts";
import { progress, withContext } from "./output.ts";

/** `catalog import`: the product and service codes invoices are checked against. */
export function catalogCommands(program: Command): void {
  const catalog = program.command("catalog").description("reference catalogs");
  catalog
    .command("import")
    .description("replace a catalog: products from the HS 2022 CSV, services from the ISIC Rev.4 JSON")
    .argument("<kind>", "products or services")
    .argument("<file>")
    .action(async (kind: string, file: string) => {
      if (kind !== "products" && kind !== "services") {
        throw new DomainError("invalid_request", {
          message: "Invalid request",
          details: `kind must be products or services, not '${kind}'`,
        });
      }
      await withContext(async (ctx) => {
        const bar = progress(`importing ${kind}`);
        try {
          const onProgress = bar ? (done: number, total: number) => bar.update(done, total) : undefined;
          return kind === "products"
            ? await ctx.reference.importProducts(file, onProgress)
            : await ctx.reference.importServices(file, onProgress);
        } finally {
          bar?.stop();
        }
      });
    });
}
