import { sql } from "kysely";
import pino from "pino";
import type { Config } from "../config.ts";
import { dashboardRoutes } from "../dashboard/dashboard-routes.ts";
import { buildApp } from "../http/app.ts";
import { metricsRoutes } from "../http/operational-routes.ts";
import { rateLimitStore } from "../http/rate-limit-store.ts";
import { inboxPdfRoutes } from "../inbox/inbox-pdf-routes.ts";
import { inboxRoutes } from "../inbox/inbox-routes.ts";
import { invoiceRoutes } from "../invoices/invoice-routes.ts";
import { qrRoutes } from "../qr/qr-routes.ts";
import { referenceRoutes } from "../reference/reference-routes.ts";
import { reportRoutes } from "../reports/report-routes.ts";
import { jwksRoutes } from "../verification/jwks-routes.ts";
import { verifyRoutes } from "../verification/verification-routes.ts";
import type { Context, Logger } from "./context.ts";
import { sandboxExampleValues } from "./sandbox.ts";

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
    checkAnswers: ctx.config.mode !== "production",
    docsExampleValues:
      ctx.config.mode === "sandbox" ? () => sandboxExampleValues(ctx.config.dataDir) : undefined,
    routes: [
      referenceRoutes({ reference: ctx.reference }),
      invoiceRoutes({
        invoices: ctx.invoices,
        transmits: ctx.transmits,
        records: ctx.records,
        pdfs: ctx.pdfs,
        irns: ctx.irns,
        payments: ctx.payments,
        idempotency: ctx.idempotency,
        ubl: ctx.ubl,
      }),
      reportRoutes({ reports: ctx.reports }),
      inboxRoutes({ inbox: ctx.inbox }),
      inboxPdfRoutes({ inbox: ctx.inbox, pdfs: ctx.pdfs }),
      jwksRoutes({ signer: ctx.signer }),
      qrRoutes({ qr: ctx.qrCodes, invoices: ctx.records }),
      metricsRoutes({ registry: ctx.counters.registry }),
      verifyRoutes({ verification: ctx.verification }),
      dashboardRoutes({
        dashboard: ctx.dashboard,
        operatorPassword: ctx.operator.password,
        pepper: ctx.operator.pepper,
      }),
    ],
  });
}
