import fs from "node:fs";
import type { Command } from "commander";
import { loadConfig } from "../config.ts";
import { verifyRecord } from "../crypto/verify-record.ts";
import { createContext } from "../main.ts";
import { print } from "./output.ts";

/** `audit verify`: the integrity of the whole register, from its database. */
export function auditCommands(program: Command): void {
  const audit = program.command("audit").description("integrity of the register");
  audit
    .command("verify")
    .description("walk every hash chain and re-verify each signature; exits 1 when anything is broken")
    .option("--business <id>", "only this business's chain")
    .action(async (opts: { business?: string }) => {
      const ctx = await createContext(loadConfig());
      try {
        const result = await ctx.audit.verify(opts.business);
        print(result);
        if (result.broken.length > 0) process.exitCode = 1;
      } finally {
        await ctx.close();
      }
    });
}

/** `verify`: one saved record, by anyone holding it, without the service's database. */
export function verifyCommand(program: Command): void {
  program
    .command("verify")
    .description(
      "verify a saved full record offline, with only the service's JWK Set; exits 1 when it does not hold",
    )
    .argument("<file>", "the record as saved from GET /api/v1/einvoice/{IRN} (the envelope or its data)")
    .requiredOption("--jwks <source>", "the JWK Set: a URL (…/.well-known/jwks.json) or a file")
    .action(async (file: string, opts: { jwks: string }) => {
      const record: unknown = JSON.parse(fs.readFileSync(file, "utf8"));
      const jwks: unknown = /^https?:\/\//.test(opts.jwks)
        ? await (await fetch(opts.jwks)).json()
        : JSON.parse(fs.readFileSync(opts.jwks, "utf8"));
      const verdict = verifyRecord(record, jwks);
      print(verdict);
      if (!verdict.valid) process.exitCode = 1;
    });
}
