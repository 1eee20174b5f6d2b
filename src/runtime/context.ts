import os from "node:os";
import type pino from "pino";
import { auditLogRepository } from "../audit-log/audit-log-repository.ts";
import { activeKeys } from "../businesses/active-keys.ts";
import { businessRepository } from "../businesses/business-repository.ts";
import { businessService } from "../businesses/business-service.ts";
import { businessProfiles } from "../businesses/profiles.ts";
import type { Config } from "../config.ts";
import { loadKeyring } from "../crypto/keyring.ts";
import { qrCodec } from "../crypto/qr.ts";
import { createSealer } from "../crypto/sealer.ts";
import { createSigner } from "../crypto/signer.ts";
import { dashboardRepository } from "../dashboard/dashboard-repository.ts";
import { dashboardService } from "../dashboard/dashboard-service.ts";
import { startCheckpointer } from "../db/checkpointer.ts";
import { changeCounter, openDatabase } from "../db/database.ts";
import { migrateToLatest, pendingMigrations } from "../db/migrations.ts";
import { invoicePdfs } from "../documents/pdf/service.ts";
import { ublReader } from "../documents/ubl/ubl-in.ts";
import { serviceMetrics } from "../http/metrics.ts";
import { idempotencyRepository } from "../idempotency/idempotency-repository.ts";
import { idempotencyService } from "../idempotency/idempotency-service.ts";
import { inboxRepository } from "../inbox/inbox-repository.ts";
import { receivedResealer } from "../inbox/inbox-reseal.ts";
import { auditService } from "../invoices/audit/invoice-audit.ts";
import { invoiceRepository } from "../invoices/invoice-repository.ts";
import { invoiceResealer } from "../invoices/invoice-reseal.ts";
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
import { outboxMetrics } from "../outbox/metrics.ts";
import { qrService } from "../qr/qr-service.ts";
import { catalogRepository } from "../reference/catalog-repository.ts";
import { productCodes } from "../reference/product-codes.ts";
import { referenceService } from "../reference/reference-service.ts";
import { reportRepository } from "../reports/report-repository.ts";
import { reportService } from "../reports/report-service.ts";
import { verificationService } from "../verification/verification-service.ts";
import { webhookRegistrar } from "../webhooks/registrar.ts";
import { webhookResealer } from "../webhooks/reseal.ts";
import { webhookRepository } from "../webhooks/webhook-repository.ts";
import { documentThreads } from "./document-threads.ts";
import { outboxOf } from "./outbox-wiring.ts";

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
      // SQLite's data_version moves with any other connection's commit and costs no statement;
      // PostgreSQL has none, and reads the row the triggers on api_keys move.
      changes: changeCounter(db) ?? (() => businessesRepo.credentialsVersion()),
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
  const knownProducts = productCodes(catalog, undefined, changeCounter(db));
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
  const idempotency = idempotencyService({
    db,
    keys: idempotencyRepository(db),
    ...config.idempotency,
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
      answers: idempotency,
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
