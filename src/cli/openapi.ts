import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Command } from "commander";
import { loadConfig } from "../config.ts";
import { createContext, createLogger, createServer } from "../main.ts";
import { print } from "./output.ts";

/** `openapi`: the API's document, as served and as committed. */
export function openapiCommand(program: Command): void {
  program
    .command("openapi")
    .description("print this version's OpenAPI 3.1 document (the one served at /openapi.json)")
    .option("--out <file>", "write it, indented, to this file instead (the committed openapi.json)")
    .action(async (opts: { out?: string }) => {
      // The document depends on the routes only: any throwaway database and keys will do.
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "einvoice-openapi-"));
      try {
        const ctx = await createContext(
          loadConfig({
            EINVOICE_DATABASE_URL: "sqlite::memory:",
            EINVOICE_DATA_DIR: dir,
            EINVOICE_LOG_LEVEL: "silent",
          }),
        );
        try {
          const app = await createServer(ctx, createLogger(ctx.config));
          await app.ready();
          const document = app.swagger();
          await app.close();
          if (opts.out) {
            fs.writeFileSync(opts.out, `${JSON.stringify(document, null, 2)}\n`);
            print({ written: opts.out, paths: Object.keys(document.paths ?? {}).length });
          } else {
            print(document);
          }
        } finally {
          await ctx.close();
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
}
