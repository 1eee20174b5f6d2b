import cluster from "node:cluster";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "kysely";
import pino from "pino";
import { businessProfiles } from "./businesses/profiles.ts";
import { businessRepository } from "./businesses/repository.ts";
import { businessService } from "./businesses/service.ts";
import type { Config } from "./config.ts";
import { dashboardRepository } from "./dashboard/repository.ts";
import { dashboardRoutes } from "./dashboard/routes.ts";
import { dashboardService } from "./dashboard/service.ts";
import { startCheckpointer } from "./db/checkpointer.ts";
import { openDatabase } from "./db/database.ts";
import { migrateToLatest, pendingMigrations } from "./db/migrations.ts";
import { buildApp } from "./http/app.ts";
import { serviceMetrics } from "./http/metrics.ts";
import { rateLimitStore } from "./http/rate-limit-store.ts";
import { idempotencyRepository } from "./idempotency/repository.ts";
import { idempotencyService } from "./idempotency/service.ts";
import { irnCheck } from "./invoices/irn-check.ts";
import { invoiceLifecycle } from "./invoices/lifecycle.ts";
import { paymentService } from "./invoices/payment-service.ts";
import { preparer } from "./invoices/preparation-pool.ts";
import { invoiceQueries } from "./invoices/queries.ts";
import { invoiceRegistration } from "./invoices/register.ts";
import { invoiceRepository } from "./invoices/repository.ts";
import { invoiceRoutes } from "./invoices/routes.ts";
import { invoiceTransmits } from "./invoices/transmit.ts";
import { validationPool } from "./invoices/validation-pool.ts";
import { dataKeyStateRepository } from "./keys/key-state-repository.ts";
import { loadKeyring } from "./keys/keyring.ts";
import { dataKeyRotation } from "./keys/rotation.ts";
import { createSealer } from "./keys/sealer.ts";
import { sealingService } from "./keys/sealing.ts";
import { catalogRepository } from "./reference/catalog-repository.ts";
import { productCodes } from "./reference/product-codes.ts";
import { referenceRoutes } from "./reference/routes.ts";
import { referenceService } from "./reference/service.ts";
import { reportRepository } from "./reports/repository.ts";
import { reportRoutes } from "./reports/routes.ts";
import { reportService } from "./reports/service.ts";
import { auditService } from "./signing/audit.ts";
import { auditLogRepository } from "./signing/audit-log.ts";
import { qrCodec } from "./signing/qr.ts";
import { qrImageReader } from "./signing/qr-reader-pool.ts";
import { qrService } from "./signing/qr-service.ts";
import { signingRoutes } from "./signing/routes.ts";
import { createSigner } from "./signing/signer.ts";
import { builtinAuthority, httpAuthority } from "./transmission/authority.ts";
import { outboxMetrics } from "./transmission/metrics.ts";
import { outboxRepository } from "./transmission/outbox-repository.ts";
import { metricsRoutes } from "./transmission/routes.ts";
import { transmissionService } from "./transmission/service.ts";
import { webhookRegistrar } from "./transmission/webhook-registrar.ts";
import { webhookRepository } from "./transmission/webhook-repository.ts";
import { createWorker } from "./transmission/worker.ts";
import { webhookNotifier } from "./webhooks/notifier.ts";

export type Logger = pino.Logger;

/** The composition root: configuration in, every service wired with exactly what it needs. */
export async function createContext(config: Config) {
  const sqliteFile =
    config.database.engine === "sqlite" && config.database.file !== ":memory:"
      ? config.database.file
      : undefined;
  const db = openDatabase(config.database, { ...config, checkpointer: sqliteFile !== undefined });
  try {
    if (config.mode === "production") {
      const pending = await pendingMigrations(db);
      if (pending.length > 0) {
        throw new Error(
          `the database schema is behind this version (pending: ${pending.join(", ")}); run \`npx einvoice migrate\``,
        );
      }
    } else {
      await migrateToLatest(db);
    }
  } catch (err) {
    await db.destroy();
    throw err;
  }
  const checkpointer = sqliteFile ? startCheckpointer(sqliteFile) : undefined;
  const keyring = loadKeyring(config);
  // The sandbox's keys live in a file that `keys rotate-data-key` adds to: read again when a key
  // id is unknown, so a running sandbox picks up the rotated key. Production's come from the
  // environment, which a running process cannot see change.
  const sealer = createSealer(keyring.dataKeys, {
    ...(config.mode === "sandbox" ? { reload: () => loadKeyring(config).dataKeys } : {}),
  });
  const dataKeyState = dataKeyStateRepository(db);
  const sealing = sealingService({ sealer, state: dataKeyState });
  const qr = qrCodec(keyring.qrKeys);
  const signer = createSigner(keyring.signingKeys);
  // Its own thread wherever there is another core to run it on.
  const preparations = preparer(
    { dataKeys: keyring.dataKeys, qrPublicKeyPem: qr.publicKeyPem },
    { thread: os.availableParallelism() > 1 },
  );

  // Large documents are checked on a thread of their own, like the preparations.
  const validations = validationPool({ thread: os.availableParallelism() > 1 });

  const businessesRepo = businessRepository(db);
  const invoicesRepo = invoiceRepository(db);
  const catalog = catalogRepository(db);

  const auditLog = auditLogRepository(db);
  const businesses = businessService({
    db,
    businesses: businessesRepo,
    audit: auditLog,
    pepper: keyring.pepper,
  });
  const metrics = outboxMetrics({ refreshMs: config.metricsRefreshMs });
  const counters = serviceMetrics(metrics.registry);
  const webhooksRepo = webhookRepository(db);
  const outbox = outboxRepository(db);
  const notifier = webhookNotifier({ outbox, webhooks: webhooksRepo });
  const lifecycle = invoiceLifecycle({ invoices: invoicesRepo, notifier, sealer });
  const transmission = transmissionService({
    db,
    outbox,
    invoices: lifecycle.delivery,
    webhooks: webhooksRepo,
    sealer,
    authority: config.authority.kind === "http" ? httpAuthority(config.authority) : builtinAuthority(),
    settings: config.outbox,
    onSettled: (job, outcome) => metrics.settled(job.kind, outcome),
  });
  metrics.observe(transmission);
  const webhooks = webhookRegistrar({
    db,
    webhooks: webhooksRepo,
    sealing,
    businessExists: async (id) => (await businessesRepo.findById(id)) !== undefined,
    audit: auditLog,
  });
  const dataKeys = dataKeyRotation({
    db,
    sealer,
    state: dataKeyState,
    invoices: invoicesRepo,
    webhooks: webhooksRepo,
  });
  const knownProducts = productCodes(catalog);
  const reference = referenceService({ db, catalog, productCodes: knownProducts });
  const transmits = invoiceTransmits({
    db,
    invoices: invoicesRepo,
    transmission,
    lifecycle,
    transmitWaitMs: config.outbox.transmitWaitMs,
  });
  const records = invoiceQueries({ invoices: invoicesRepo, sealer });
  const profiles = businessProfiles(businessesRepo);
  const irns = irnCheck({ invoices: invoicesRepo, profiles });
  const invoices = invoiceRegistration({
    db,
    invoices: invoicesRepo,
    businesses: businessesRepo,
    profiles,
    sealer,
    sealing,
    preparer: preparations,
    signer,
    validate: validations.validate,
    products: knownProducts,
    transmission,
    notifier,
    transmits,
    strictSupplier: config.strictSupplier,
    onSigned: counters.signed,
  });
  const payments = paymentService({ db, invoices: invoicesRepo, lifecycle });
  const reports = reportService({ db, reports: reportRepository(db), invoices: invoicesRepo });
  const idempotency = idempotencyService({
    db,
    keys: idempotencyRepository(db),
    waitMs: config.idempotencyWaitMs,
  });

  // QR images are decoded on a thread of their own, started on the first image.
  const qrImages = qrImageReader();
  const qrCodes = qrService({ qr, businesses: businessesRepo, invoices: invoicesRepo, images: qrImages });
  const dashboard = dashboardService({
    repository: dashboardRepository(db),
    businesses,
    records,
    transmits,
    transmission,
  });
  const audit = auditService({
    businesses: businessesRepo,
    invoices: invoicesRepo,
    auditLog,
    sealer,
    signer,
  });

  return {
    config,
    db,
    businesses,
    reference,
    invoices,
    records,
    transmits,
    irns,
    payments,
    idempotency,
    reports,
    qr,
    qrCodes,
    signer,
    audit,
    transmission,
    webhooks,
    metrics,
    counters,
    dataKeys,
    dashboard,
    operator: { password: keyring.operatorPassword, pepper: keyring.pepper },
    close: async () => {
      await preparations.close();
      await validations.close();
      await qrImages.close();
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

export type Context = Awaited<ReturnType<typeof createContext>>;

export function createLogger(
  config: Pick<Config, "logLevel">,
  destination: "stdout" | "stderr" = "stdout",
): Logger {
  return pino(
    { level: config.logLevel },
    pino.destination({ fd: destination === "stdout" ? 1 : 2, sync: false }),
  );
}

export function createServer(ctx: Context, logger: Logger) {
  return buildApp({
    logger,
    authenticate: ctx.businesses.authenticate,
    rateLimits: {
      ...ctx.config.rateLimits,
      // PostgreSQL pools the counts of every process; SQLite processes count their own.
      shared: ctx.config.database.engine === "postgres" ? rateLimitStore(ctx.db) : undefined,
    },
    requestTimeoutMs: ctx.config.requestTimeoutMs,
    trustProxy: ctx.config.trustProxy,
    ready: async () => {
      await sql`select 1`.execute(ctx.db);
    },
    metrics: ctx.counters,
    docsExampleValues:
      ctx.config.mode === "sandbox" ? () => sandboxExampleValues(ctx.config.dataDir) : undefined,
    routes: [
      referenceRoutes({ reference: ctx.reference }),
      invoiceRoutes({
        invoices: ctx.invoices,
        transmits: ctx.transmits,
        records: ctx.records,
        irns: ctx.irns,
        payments: ctx.payments,
        idempotency: ctx.idempotency,
      }),
      reportRoutes({ reports: ctx.reports }),
      signingRoutes({ qr: ctx.qrCodes, signer: ctx.signer, invoices: ctx.records }),
      metricsRoutes({ metrics: ctx.metrics }),
      dashboardRoutes({
        dashboard: ctx.dashboard,
        operatorPassword: ctx.operator.password,
        pepper: ctx.operator.pepper,
      }),
    ],
  });
}

export type SandboxCredentials = {
  business_id: string;
  service_id: string;
  api_key: string;
  api_secret: string;
};

/** On an empty sandbox database: a demo business and credentials, printed and written beside the data. */
export async function seedSandbox(
  ctx: Context,
): Promise<{ created: boolean; credentials?: SandboxCredentials; file: string }> {
  const file = path.join(ctx.config.dataDir, "sandbox-credentials.json");
  if ((await ctx.businesses.count()) > 0) {
    const credentials = fs.existsSync(file)
      ? (JSON.parse(fs.readFileSync(file, "utf8")) as SandboxCredentials)
      : undefined;
    return credentials ? { created: false, credentials, file } : { created: false, file };
  }
  const business = await ctx.businesses.add({ name: "Demo Trading Ltd", tin: "20198222-0002" }, "sandbox");
  const key = await ctx.businesses.createKey(business.business_id, "sandbox");
  const credentials = {
    business_id: business.business_id,
    service_id: business.service_id,
    api_key: key.api_key,
    api_secret: key.api_secret,
  };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  return { created: true, credentials, file };
}

/** The demo business's ids for the examples of /docs (never its secret), once the sandbox has one. */
function sandboxExampleValues(dataDir: string): Record<string, string> | undefined {
  const file = path.join(dataDir, "sandbox-credentials.json");
  if (!fs.existsSync(file)) return undefined;
  const { business_id, service_id } = JSON.parse(fs.readFileSync(file, "utf8")) as SandboxCredentials;
  return { BUSINESS_ID: business_id, SERVICE_ID: service_id };
}

/** Sandbox start-up on an empty database: demo credentials, printed once per start. */
async function announceSandbox(ctx: Context): Promise<void> {
  const seeded = await seedSandbox(ctx);
  if (!seeded.credentials) return;
  const c = seeded.credentials;
  process.stderr.write(
    `\nSandbox ${seeded.created ? "created" : "ready"}. Demo credentials (also in ${seeded.file}):\n` +
      `  business_id  ${c.business_id}\n  service_id   ${c.service_id}\n` +
      `  API-KEY      ${c.api_key}\n  API-SECRET   ${c.api_secret}\n` +
      `Try the API at /docs; the operator dashboard is at /dashboard (password ${
        // One the operator chose is theirs to know: only a generated one is printed.
        ctx.config.operatorPassword ? "from EINVOICE_OPERATOR_PASSWORD" : ctx.operator.password
      }).\n\n`,
  );
}

/**
 * `npm start` / `einvoice serve`: the API on PORT, until SIGINT or SIGTERM. With
 * EINVOICE_PROCESSES > 1 the first process prepares the database once, then runs that many API
 * processes sharing the port (node:cluster), replacing any that dies.
 */
export async function serve(config: Config): Promise<void> {
  if (config.processes > 1 && cluster.isPrimary) return supervise(config);
  const logger = createLogger(config);
  const ctx = await createContext(config);
  const app = await createServer(ctx, logger);
  if (config.mode === "sandbox" && cluster.isPrimary) await announceSandbox(ctx);
  const worker = config.outbox.worker ? outboxWorker(ctx, logger) : undefined;
  onShutdown(logger, async () => {
    // Stop taking requests first, then let the worker finish or give back its jobs.
    await app.close();
    await worker?.stop();
    await ctx.close();
  });
  const address = await app.listen({ port: config.port, host: config.host });
  worker?.start();
  logger.info(
    {
      address,
      mode: config.mode,
      database: config.database.engine,
      worker: Boolean(worker),
      pid: process.pid,
    },
    "e-invoicing API listening",
  );
}

async function supervise(config: Config): Promise<void> {
  const logger = createLogger(config);
  // Migrations and the sandbox's first-start seeding happen once, before any API process exists.
  const ctx = await createContext(config);
  try {
    if (config.mode === "sandbox") await announceSandbox(ctx);
  } finally {
    await ctx.close();
  }
  let stopping = false;
  cluster.on("exit", (child, code, signal) => {
    if (stopping) return;
    logger.error({ pid: child.process.pid, code, signal }, "API process died; starting another");
    cluster.fork();
  });
  for (let i = 0; i < config.processes; i++) cluster.fork();
  onShutdown(logger, async () => {
    stopping = true;
    const children = Object.values(cluster.workers ?? {}).filter((c) => c !== undefined);
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            child.once("exit", () => resolve());
            child.process.kill("SIGTERM");
          }),
      ),
    );
  });
  logger.info({ processes: config.processes, port: config.port }, "supervising API processes");
}

/** `einvoice worker`: delivers outbox jobs, until SIGINT or SIGTERM. */
export async function work(config: Config): Promise<void> {
  const logger = createLogger(config);
  const ctx = await createContext(config);
  const worker = outboxWorker(ctx, logger);
  onShutdown(logger, async () => {
    await worker.stop();
    await ctx.close();
  });
  worker.start();
}

/** How often a worker also prunes the idempotency keys past their 24 hours. */
const HOUSEKEEPING_MS = 60_000;

/** An outbox worker, which also keeps the idempotency keys pruned. */
function outboxWorker(ctx: Context, logger: Logger) {
  return createWorker({
    transmission: ctx.transmission,
    concurrency: ctx.config.outbox.concurrency,
    pollMs: ctx.config.outbox.pollMs,
    logger,
    housekeeping: { everyMs: HOUSEKEEPING_MS, run: () => ctx.idempotency.prune() },
  });
}

function onShutdown(logger: Logger, close: () => Promise<void>): void {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, "shutting down");
    try {
      await close();
    } finally {
      logger.flush();
      process.exit(0);
    }
  };
  process.once("SIGINT", () => void shutdown("SIGINT"));
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
}
