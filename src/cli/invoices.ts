import fs from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { clientCredentials, loadConfig, localServiceUrl } from "../config.ts";
import { BATCH_MAX_DOCUMENTS } from "../invoices/registration/batch-limits.ts";
import { checkReceivedOptions, inboxCommands, writeReceivedPdf } from "./inbox.ts";
import { print, progress, withContext } from "./output.ts";
import { SubmitError, submit } from "./submit.ts";
import { ublCommands } from "./ubl.ts";

type SubmitOptions = {
  transmit: boolean;
  api?: string;
  key?: string;
  secret?: string;
  report?: string;
  batchSize: string;
};

/**
 * `invoices pdf`, from the database like the other operator commands (with `--received`, of an
 * invoice a business received), the inbox's commands (inbox.ts), and `invoices submit`, a client of
 * a running service through its batch endpoints.
 */
export function invoiceCommands(program: Command): void {
  const invoices = program
    .command("invoices")
    .description("invoices through the API, their PDFs, and those businesses receive as buyers");
  invoices
    .command("pdf")
    .description("write an invoice's A4 PDF, as GET /api/v1/einvoice/{IRN}.pdf serves it, from the database")
    .argument("<irn>")
    .option("--out <file>", "where to write it (default: <IRN>.pdf)")
    .option("--received", "an invoice the business named by --business received as the buyer", false)
    .option("--business <id>", "with --received: the buyer's business id")
    .action(async (irn: string, opts: { out?: string; received: boolean; business?: string }) => {
      const out = opts.out ?? `${irn.replace(/[^A-Za-z0-9._-]/g, "_")}.pdf`;
      checkReceivedOptions(opts);
      if (opts.received && opts.business !== undefined) {
        await writeReceivedPdf(irn, opts.business, out);
        return;
      }
      await withContext(async (ctx) => {
        const pdf = await ctx.pdfs.operatorPdf(irn);
        fs.writeFileSync(out, pdf);
        return { irn, written: out, bytes: pdf.length };
      });
    });
  inboxCommands(invoices);
  ublCommands(program, invoices, apiCredentials);
  invoices
    .command("submit")
    .description(
      "sign every document of a JSONL file (one per line) or a folder of .json files through batch/sign, writing a JSONL report; run it again to resume",
    )
    .argument("<source>", "FILE.jsonl or a folder of .json files")
    .option("--transmit", "sign and queue each invoice for transmission (batch/sign-transmit)", false)
    .option("--api <url>", "the service's address (default: http://127.0.0.1:$PORT, port 8080)")
    .option("--key <key>", "API key (default: EINVOICE_API_KEY, else the sandbox's demo credentials)")
    .option("--secret <secret>", "API secret (default: EINVOICE_API_SECRET, else the sandbox's)")
    .option("--report <file>", "JSONL report, appended to (default: <source>.report.jsonl)")
    .option("--batch-size <n>", `documents per request, 1 to ${BATCH_MAX_DOCUMENTS}`, "500")
    .action(async (source: string, opts: SubmitOptions) => {
      const credentials = apiCredentials(opts);
      const bar = progress("submitting");
      try {
        print(
          await submit({
            source,
            api: opts.api ?? localServiceUrl(),
            ...credentials,
            transmit: opts.transmit,
            report: opts.report ?? `${source.replace(/\/+$/, "")}.report.jsonl`,
            batchSize: Number(opts.batchSize),
            onProgress: (done, total) => bar?.update(done, total),
          }),
        );
      } finally {
        bar?.stop();
      }
    });
}

/** Credentials from the options, the environment, or the sandbox's demo credentials file. */
function apiCredentials(opts: { key?: string; secret?: string }): { apiKey: string; apiSecret: string } {
  const fromEnv = clientCredentials();
  let apiKey = opts.key ?? fromEnv.apiKey;
  let apiSecret = opts.secret ?? fromEnv.apiSecret;
  if (!apiKey || !apiSecret) {
    const file = path.join(loadConfig().dataDir, "sandbox-credentials.json");
    if (fs.existsSync(file)) {
      const sandbox = JSON.parse(fs.readFileSync(file, "utf8")) as { api_key?: string; api_secret?: string };
      apiKey ??= sandbox.api_key;
      apiSecret ??= sandbox.api_secret;
    }
  }
  if (!apiKey || !apiSecret) {
    throw new SubmitError(
      "no API credentials: pass --key and --secret, or set EINVOICE_API_KEY and EINVOICE_API_SECRET",
    );
  }
  return { apiKey, apiSecret };
}
