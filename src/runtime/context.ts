import os from "node:os";
import type pino from "pino";
import { auditLogRepository } from "../audit-log/audit-log-repository.ts";
import { activeKeys } from "../businesses/active-keys.ts";
import { type BusinessRepository, businessRepository } from "../businesses/business-repository.ts";
import { businessService } from "../businesses/business-service.ts";
import { businessProfiles } from "../businesses/profiles.ts";
import type { Config } from "../config.ts";
import { loadKeyring } from "../crypto/keyring.ts";
import { qrCodec } from "../crypto/qr.ts";
import { createSealer, type Sealer } from "../crypto/sealer.ts";
import { createSigner } from "../crypto/signer.ts";
import { dashboardRepository } from "../dashboard/dashboard-repository.ts";
import { dashboardService } from "../dashboard/dashboard-service.ts";
import { startCheckpointer } from "../db/checkpointer.ts";
import { changeCounter, type Db, openDatabase } from "../db/database.ts";
import { migrateToLatest, pendingMigrations } from "../db/migrations.ts";
import { invoicePdfs } from "../documents/pdf/service.ts";
import { ublReader } from "../documents/ubl/ubl-in.ts";
import type { Validate } from "../documents/validation/validation-pool.ts";
import { serviceMetrics } from "../http/metrics.ts";
import { idempotencyRepository } from "../idempotency/idempotency-repository.ts";
import { idempotencyService } from "../idempotency/idempotency-service.ts";
import { inboxCollector } from "../inbox/collector.ts";
import { inboxRepository } from "../inbox/inbox-repository.ts";
import { receivedResealer } from "../inbox/inbox-reseal.ts";
import { inboxService } from "../inbox/inbox-service.ts";
import { type DayOutcome, pullHandler } from "../inbox/pull-job.ts";
import { auditService } from "../invoices/audit/invoice-audit.ts";
import { type InvoiceRepository, invoiceRepository } from "../invoices/invoice-repository.ts";
import { invoiceResealer } from "../invoices/invoice-reseal.ts";
import { invoiceLifecycle } from "../invoices/lifecycle.ts";
import { paymentService } from "../invoices/payments/payment-service.ts";
import { invoiceQueries } from "../invoices/records/invoice-queries.ts";
import { groupCommit } from "../invoices/registration/group-commit.ts";
import { irnCheck } from "../invoices/registration/irn-check.ts";
import { preparer } from "../invoices/registration/preparation-pool.ts";
import { invoiceRegistration } from "../invoices/registration/register.ts";
import { invoiceTransmits } from "../invoices/transmits.ts";
import { dataKeyStateRepository } from "../keys/key-state-repository.ts";
import { dataKeyRotation } from "../keys/rotation.ts";
import { sealingService } from "../keys/sealing.ts";
import { type OutboxMetrics, outboxMetrics } from "../outbox/metrics.ts";
import { outboxRepository } from "../outbox/outbox-repository.ts";
import { outboxQueue, outboxService } from "../outbox/outbox-service.ts";
import { outboxWrite } from "../outbox/write.ts";
import { qrService } from "../qr/qr-service.ts";
import { catalogRepository } from "../reference/catalog-repository.ts";
import { productCodes } from "../reference/product-codes.ts";
import { referenceService } from "../reference/reference-service.ts";
import { reportRepository } from "../reports/report-repository.ts";
import { reportService } from "../reports/report-service.ts";
import { acknowledgementHandler } from "../transmission/acknowledgement.ts";
import { builtinAuthority } from "../transmission/authority/builtin.ts";
import type { AuthorityConnector } from "../transmission/authority/connector.ts";
import { credentialProbe, probedAuthority } from "../transmission/authority/credential-probe.ts";
import { httpAuthority } from "../transmission/authority/http.ts";
import { mbsAuthority } from "../transmission/authority/mbs.ts";
import { authorityHold, authorityHoldRepository } from "../transmission/authority-hold.ts";
import { deliveryHandler } from "../transmission/delivery.ts";
import { authorityForwarder, forwardHandler } from "../transmission/forward.ts";
import { verificationService } from "../verification/verification-service.ts";
import { webhookDispatcher } from "../webhooks/dispatcher.ts";
import { webhookNotifier } from "../webhooks/notifier.ts";
import { webhookRegistrar } from "../webhooks/registrar.ts";
import { webhookResealer } from "../webhooks/reseal.ts";
import { type WebhookRepository, webhookRepository } from "../webhooks/webhook-repository.ts";
import { documentThreads } from "./document-threads.ts";

export type Logger = pino.Logger;

/** The database, migrated (sandbox) or checked to be current (production), and SQLite's checkpointer. */
async function openStore(config: Config) {
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
  return { db, checkpointer };
}

/** The service's secret material and the codecs built on it. */
function keyMaterial(config: Config) {
  const keyring = loadKeyring(config);
  // The sandbox's keys live in a file that `keys rotate-data-key` adds to: read again when a key
  // id is unknown, so a running sandbox picks up the rotated key. Production's come from the
  // environment, which a running process cannot see change.
  const sealer = createSealer(keyring.dataKeys, {
    ...(config.mode === "sandbox" ? { reload: () => loadKeyring(config).dataKeys } : {}),
  });
  const qr = qrCodec(keyring.qrKeys);
  const signer = createSigner(keyring.signingKeys);
  return { keyring, sealer, qr, signer };
}

/** The connector of the configured authority. */
function connectorOf(config: Config): AuthorityConnector {
  const authority = config.authority;
  if (authority.kind === "http") return httpAuthority(authority);
  if (authority.kind === "mbs") return mbsAuthority(authority);
  return builtinAuthority();
}

/**
 * The connector, with its answers that read as a refused credential judged by its content-free
 * probe (credential-probe.ts), and the probe, for the authority hold. The builtin authority has no
 * credential, and no probe.
 */
function authorityOf(config: Config) {
  const connector = connectorOf(config);
  if (!connector.probe) return { authority: connector, probe: undefined };
  const probe = credentialProbe({ probe: connector.probe, timeoutMs: config.outbox.deliveryTimeoutMs });
  return { authority: probedAuthority(connector, probe), probe };
}

/**
 * The outbox with its three kinds of job (an invoice's delivery to the authority, a later message
 * to it, a webhook's event), the sides that queue them, and the lifecycle the deliveries and
 * forwards report their outcomes to.
 */
function outboxOf(
  config: Config,
  deps: {
    db: Db;
    invoices: InvoiceRepository;
    webhooks: WebhookRepository;
    sealer: Sealer;
    metrics: OutboxMetrics;
    businesses: Pick<BusinessRepository, "list">;
    validate: Validate;
  },
) {
  const { db, invoices: invoicesRepo, webhooks: webhooksRepo, sealer, metrics } = deps;
  const outbox = outboxRepository(db);
  const queue = outboxQueue(outbox);
  const notifier = webhookNotifier({ outbox: queue, webhooks: webhooksRepo });
  const { authority, probe } = authorityOf(config);
  const write = outboxWrite(db);
  const inboxRepo = inboxRepository(db);
  const inbox = inboxService({
    db,
    inbox: inboxRepo,
    businesses: deps.businesses,
    sealer,
    notifier,
    outbox: queue,
    validate: deps.validate,
  });
  const forwarder = authorityForwarder({
    outbox,
    authority,
    maxQueued: config.bounds.queuedForwardsPerBusiness,
  });
  const lifecycle = invoiceLifecycle({
    invoices: invoicesRepo,
    notifier,
    sealer,
    forwarder,
    deliveries: queue,
    // The builtin authority is this service: what one business delivers to another arrives directly.
    ...(authority.name === "builtin" ? { localReceiver: inbox } : {}),
  });
  // The days pulled in this process, for `invoices pull --wait` to print (the collector reads them).
  const observed = new Map<number, DayOutcome>();
  const hold = authorityHold({
    holds: authorityHoldRepository(db),
    authority: authority.name,
    probeMs: config.authorityProbeMs,
    probe,
    write,
  });
  const transmission = outboxService({
    outbox,
    write,
    hold,
    handlers: {
      delivery: deliveryHandler({ invoices: lifecycle.delivery, authority, hold }),
      forward: forwardHandler({ outbox, invoices: lifecycle.forwarding, authority, hold }),
      webhook: webhookDispatcher({ webhooks: webhooksRepo, sealer }),
      acknowledgement: acknowledgementHandler({ receipts: authority.receipts, inbox, hold }),
      pull: pullHandler({
        receipts: authority.receipts,
        service: inbox,
        inbox: inboxRepo,
        hold,
        observe: (jobId, outcome) => {
          observed.set(jobId, outcome);
          // Only the process that runs `invoices pull --wait` reads them: a worker keeps the last few.
          const oldest = observed.keys().next().value;
          if (observed.size > 64 && oldest !== undefined) observed.delete(oldest);
        },
      }),
    },
    settings: config.outbox,
    single: ["pull"],
    onSettled: (job, outcome) => metrics.settled(job.kind, outcome),
  });
  metrics.observe(transmission);
  const collector = inboxCollector({
    db,
    inbox: inboxRepo,
    jobs: transmission,
    receipts: authority.receipts,
    source: "mbs",
    pullMs: config.inbox.pullMs,
    lookbackDays: config.inbox.lookbackDays,
    observed,
  });
  return { notifier, lifecycle, transmission, forwarder, inbox, collector };
}

/** The composition root: configuration in, every service wired with exactly what it needs. */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the composition root: one wiring per service, no logic (the stages with logic are the functions above)
export async function createContext(config: Config) {
  const { db, checkpointer } = await openStore(config);
  const { keyring, sealer, qr, signer } = keyMaterial(config);
  const dataKeyState = dataKeyStateRepository(db);
  const sealing = sealingService({ sealer, state: dataKeyState });
  // Its own thread wherever there is another core to run it on.
  const preparations = preparer(
    { dataKeys: keyring.dataKeys, qrPublicKeyPem: qr.publicKeyPem },
    { thread: os.availableParallelism() > 1 },
  );

  // Large documents are checked, PDFs rendered, UBL read and QR images decoded on threads of their own.
  const threads = documentThreads(config);
  const { validations, qrImages } = threads;

  const businessesRepo = businessRepository(db);
  const invoicesRepo = invoiceRepository(db);
  const catalog = catalogRepository(db);

  const auditLog = auditLogRepository(db);
  const businesses = businessService({
    db,
    businesses: businessesRepo,
    audit: auditLog,
    activeKeys: activeKeys({
      find: (apiKey) => businessesRepo.findActiveKey(apiKey),
      changes: changeCounter(db),
    }),
    pepper: keyring.pepper,
  });
  const counters = serviceMetrics();
  const metrics = outboxMetrics({ registry: counters.registry, refreshMs: config.metricsRefreshMs });
  const webhooksRepo = webhookRepository(db);
  const { notifier, lifecycle, transmission, forwarder, inbox, collector } = outboxOf(config, {
    db,
    invoices: invoicesRepo,
    webhooks: webhooksRepo,
    sealer,
    metrics,
    businesses: businessesRepo,
    validate: validations.validate,
  });
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
    reseal: {
      invoices: invoiceResealer({ sealer, invoices: invoicesRepo }),
      webhooks: webhookResealer({ sealer, webhooks: webhooksRepo }),
      received: receivedResealer({ sealer, inbox: inboxRepository(db) }),
    },
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
  const verification = verificationService({
    signer,
    businesses: businessesRepo,
    invoices: invoicesRepo,
    publicUrl: config.publicUrl,
  });
  const records = invoiceQueries({ invoices: invoicesRepo, sealer, verification });
  const pdfs = invoicePdfs({ records, renderer: threads.pdfs });
  const profiles = businessProfiles(businessesRepo);
  const irns = irnCheck({ invoices: invoicesRepo, profiles });
  const ubl = ublReader({
    profiles,
    read: threads.ubl.read,
    signed: (businessId, prefix, limit) => invoicesRepo.irnsStartingWith(businessId, prefix, limit),
  });
  const invoices = invoiceRegistration({
    invoices: invoicesRepo,
    profiles,
    sealer,
    preparer: preparations,
    groupCommit: groupCommit({
      db,
      invoices: invoicesRepo,
      businesses: businessesRepo,
      sealing,
      signer,
      lifecycle,
      notifier,
    }),
    validate: validations.validate,
    products: knownProducts,
    transmits,
    strictSupplier: config.strictSupplier,
    onSigned: counters.signed,
  });
  const payments = paymentService({
    db,
    invoices: invoicesRepo,
    lifecycle,
    maxPartials: config.bounds.partialPaymentsPerInvoice,
  });
  const reports = reportService({
    db,
    reports: reportRepository(db),
    invoices: invoicesRepo,
    forwarder,
    maxReports: config.bounds.vatReportsPerInvoice,
  });
  const idempotency = idempotencyService({
    db,
    keys: idempotencyRepository(db),
    ...config.idempotency,
  });

  const qrCodes = qrService({ qr, businesses: businessesRepo, invoices: invoicesRepo, images: qrImages });
  const dashboard = dashboardService({
    repository: dashboardRepository(db),
    businesses,
    records,
    transmits,
    transmission,
    inbox,
    pdfs,
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
    ubl,
    verification,
    pdfs,
    transmits,
    irns,
    payments,
    inbox,
    collector,
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
      await threads.close();
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

export type Context = Awaited<ReturnType<typeof createContext>>;
