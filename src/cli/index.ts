import { createPublicKey } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SingleBar } from "cli-progress";
import { Command, CommanderError } from "commander";
import { ConfigError, loadConfig } from "../config.ts";
import {
  generatePrivateKey,
  newProductionSecrets,
  rotateSandboxDataKey,
  rotateSandboxKey,
} from "../crypto/keyring.ts";
import { jwkOf } from "../crypto/signer.ts";
import { verifyRecord } from "../crypto/verify-record.ts";
import { openDatabase } from "../db/database.ts";
import { migrateToLatest } from "../db/migrations.ts";
import { DomainError } from "../errors.ts";
import { BATCH_MAX_DOCUMENTS } from "../invoices/batch-limits.ts";
import { type Context, createContext, createLogger, createServer, serve, work } from "../main.ts";
import { SubmitError, submit } from "./submit.ts";

/** Every command prints exactly one JSON object on stdout; diagnostics go to stderr. */
function print(result: unknown): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

async function withContext<T>(work: (ctx: Context) => Promise<T>): Promise<void> {
  const ctx = await createContext(loadConfig());
  try {
    print(await work(ctx));
  } finally {
    await ctx.close();
  }
}

function progress(label: string) {
  if (!process.stderr.isTTY) return undefined;
  const bar = new SingleBar({
    format: `${label} [{bar}] {value}/{total}`,
    stream: process.stderr,
    hideCursor: true,
  });
  let started = false;
  return {
    update(done: number, total: number) {
      if (!started) {
        bar.start(total, 0);
        started = true;
      }
      bar.update(done);
    },
    stop: () => started && bar.stop(),
  };
}

const program = new Command("einvoice")
  .description("E-invoicing API v1: server and operator commands")
  .showHelpAfterError()
  .exitOverride();

program
  .command("serve")
  .description("run the API (env: PORT, HOST, EINVOICE_DATABASE_URL, EINVOICE_MODE, EINVOICE_PROCESSES)")
  .option("--processes <n>", "API processes sharing the port (default: EINVOICE_PROCESSES or 1)")
  .action(async (opts: { processes?: string }) => {
    await serve(
      loadConfig(opts.processes ? { ...process.env, EINVOICE_PROCESSES: opts.processes } : process.env),
    );
  });

program
  .command("worker")
  .description(
    "deliver queued transmissions and webhooks (env: EINVOICE_WORKER_CONCURRENCY, EINVOICE_LEASE_MS, …)",
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

program
  .command("invoices")
  .description("invoices through the API")
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
  .action(
    async (
      source: string,
      opts: {
        transmit: boolean;
        api?: string;
        key?: string;
        secret?: string;
        report?: string;
        batchSize: string;
      },
    ) => {
      const credentials = apiCredentials(opts);
      const bar = progress("submitting");
      try {
        print(
          await submit({
            source,
            api: opts.api ?? `http://127.0.0.1:${process.env.PORT ?? "8080"}`,
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
    },
  );

/** Credentials from the options, the environment, or the sandbox's demo credentials file. */
function apiCredentials(opts: { key?: string; secret?: string }): { apiKey: string; apiSecret: string } {
  let apiKey = opts.key ?? process.env.EINVOICE_API_KEY;
  let apiSecret = opts.secret ?? process.env.EINVOICE_API_SECRET;
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

const keys = program.command("keys").description("service keys");
for (const [name, kind, variable] of [
  ["rotate-signing-key", "signing", "EINVOICE_SIGNING_KEYS"],
  ["rotate-qr-key", "qr", "EINVOICE_QR_KEYS"],
] as const) {
  keys
    .command(name)
    .description(
      `add a new ${kind === "qr" ? "QR (RSA-2048)" : "signing (Ed25519)"} key in front of the old ones, which stay usable`,
    )
    .action(() => {
      const config = loadConfig();
      if (config.mode === "production") {
        // Production keys live in the environment: print a new one to put first in the variable.
        const pem = generatePrivateKey(kind === "qr" ? "rsa" : "ed25519");
        print({
          ...describe(kind, pem),
          private_key: Buffer.from(pem).toString("base64"),
          prepend_to: variable,
        });
        return;
      }
      print({
        ...describe(kind, rotateSandboxKey(config.dataDir, kind)),
        rotated: true,
        note: "restart the server to use it",
      });
    });
}

keys
  .command("generate")
  .description(
    "new production secrets: the four key variables and an operator password (--env: as lines of an .env file)",
  )
  .option("--env", "print NAME=value lines instead of JSON")
  .action((options: { env?: boolean }) => {
    // Needs no configuration: it makes the configuration a production start requires.
    const secrets = newProductionSecrets();
    if (options.env) {
      process.stdout.write(
        `${Object.entries(secrets)
          .map(([name, value]) => `${name}=${value}`)
          .join("\n")}\n`,
      );
      return;
    }
    print(secrets);
  });

keys
  .command("rotate-data-key")
  .description(
    "make a new data key current for every running process, then re-encrypt every sealed value under it (sandbox: generated; production: the first of EINVOICE_DATA_KEYS, which every process must already have in its list)",
  )
  .action(async () => {
    const config = loadConfig();
    // In production the operator has already put the new key first in EINVOICE_DATA_KEYS here, and
    // in the servers' lists: they seal under it as soon as the re-encryption has recorded it.
    const added = config.mode === "production" ? undefined : rotateSandboxDataKey(config.dataDir);
    await withContext(async (ctx) => ({
      ...(await ctx.dataKeys.resealAll()),
      ...(added ? { generated: true } : {}),
    }));
  });

function describe(kind: "signing" | "qr", pem: string) {
  return kind === "signing" ? { kind, kid: jwkOf(createPublicKey(pem)).kid } : { kind };
}

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode;
  } else {
    const message =
      err instanceof DomainError
        ? err.details
        : err instanceof ConfigError || err instanceof SubmitError
          ? err.message
          : String((err as Error)?.message ?? err);
    process.stderr.write(`einvoice: ${message}\n`);
    process.exitCode = 1;
  }
}
