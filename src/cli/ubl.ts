import fs from "node:fs";
import type { Command } from "commander";
import { localServiceUrl } from "../config.ts";
import { writeUbl } from "../documents/ubl/write.ts";
import { buyerOf, checkReceivedOptions } from "./inbox.ts";
import { print, withContext } from "./output.ts";
import { SubmitError } from "./submit.ts";

type ApiOptions = { api?: string; key?: string; secret?: string; irn?: string };
type Credentials = (opts: { key?: string; secret?: string }) => { apiKey: string; apiSecret: string };

/**
 * A document file as the API takes it: UBL 2.1 XML when it starts with `<` (after a byte order mark
 * or white space), else this API's JSON document. The bytes are sent as they are.
 */
function documentFile(file: string): { body: Buffer; type: string } {
  const body = fs.readFileSync(file);
  const start = body
    .subarray(0, 64)
    .toString("utf8")
    .replace(/^\uFEFF/, "")
    .trimStart();
  return { body, type: start.startsWith("<") ? "application/xml" : "application/json" };
}

/** One call of the API with a document; its answer printed as it came, failing on a 4xx or 5xx. */
async function call(path: string, file: string, opts: ApiOptions, credentials: Credentials): Promise<void> {
  const { apiKey, apiSecret } = credentials(opts);
  const { body, type } = documentFile(file);
  const query = opts.irn ? `?${new URLSearchParams({ irn: opts.irn })}` : "";
  const res = await fetch(
    `${(opts.api ?? localServiceUrl()).replace(/\/+$/, "")}/api/v1/einvoice/${path}${query}`,
    {
      method: "POST",
      headers: { "content-type": type, "api-key": apiKey, "api-secret": apiSecret },
      body,
    },
  );
  const text = await res.text();
  print(JSON.parse(text) as unknown);
  if (!res.ok) throw new SubmitError(`${path} answered ${res.status}`);
}

const withApi = (command: Command) =>
  command
    .requiredOption(
      "--file <file>",
      "the invoice: this API's JSON document, or a UBL 2.1 Invoice or CreditNote (.xml)",
    )
    .option("--irn <irn>", "UBL only: the IRN to sign under, instead of the one made from its cbc:ID")
    .option("--api <url>", "the service's address (default: http://127.0.0.1:$PORT, port 8080)")
    .option("--key <key>", "API key (default: EINVOICE_API_KEY, else the sandbox's demo credentials)")
    .option("--secret <secret>", "API secret (default: EINVOICE_API_SECRET, else the sandbox's)");

/**
 * `invoices validate|sign --file` and `ubl convert`, clients of a running service (JSON or UBL), and
 * `invoices xml`, a signed or received invoice as UBL 2.1 from the database (as `invoices pdf`).
 */
export function ublCommands(program: Command, invoices: Command, credentials: Credentials): void {
  withApi(
    invoices.command("validate").description("validate an invoice file through the API (JSON or UBL 2.1)"),
  ).action((opts: ApiOptions & { file: string }) => call("validate", opts.file, opts, credentials));
  withApi(invoices.command("sign").description("sign an invoice file through the API (JSON or UBL 2.1)"))
    .option("--transmit", "sign and transmit (sign-transmit)", false)
    .action((opts: ApiOptions & { file: string; transmit: boolean }) =>
      call(opts.transmit ? "sign-transmit" : "sign", opts.file, opts, credentials),
    );
  invoices
    .command("xml")
    .description(
      "write an invoice as UBL 2.1, as GET /api/v1/einvoice/{IRN}.xml serves it, from the database",
    )
    .argument("<irn>")
    .option("--out <file>", "where to write it (default: <IRN>.xml)")
    .option("--received", "an invoice the business named by --business received as the buyer", false)
    .option("--business <id>", "with --received: the buyer's business id")
    .action(async (irn: string, opts: { out?: string; received: boolean; business?: string }) => {
      const out = opts.out ?? `${irn.replace(/[^A-Za-z0-9._-]/g, "_")}.xml`;
      checkReceivedOptions(opts);
      await withContext(async (ctx) => {
        let xml: string;
        if (opts.business !== undefined) {
          const { row, open } = await ctx.inbox.document(await buyerOf(ctx, opts.business), irn);
          xml = writeUbl({ irn: row.irn, document: open() });
        } else {
          xml = writeUbl(await ctx.records.operatorRecord(irn));
        }
        fs.writeFileSync(out, xml);
        return { irn, written: out, bytes: Buffer.byteLength(xml) };
      });
    });
  const ubl = program.command("ubl").description("UBL 2.1 invoices (Peppol BIS 3, EN 16931)");
  ubl
    .command("convert")
    .description(
      "read a UBL 2.1 Invoice or CreditNote into this API's document through the API, without signing it",
    )
    .argument("<file>")
    .option("--irn <irn>", "the IRN to use, instead of the one made from its cbc:ID")
    .option("--api <url>", "the service's address (default: http://127.0.0.1:$PORT, port 8080)")
    .option("--key <key>", "API key (default: EINVOICE_API_KEY, else the sandbox's demo credentials)")
    .option("--secret <secret>", "API secret (default: EINVOICE_API_SECRET, else the sandbox's)")
    .action((file: string, opts: ApiOptions) => call("ubl/convert", file, opts, credentials));
}
