import path from "node:path";
import { authorityOf } from "./authority.ts";
import { ConfigError, Env, parseSettings } from "./env.ts";

/**
 * The settings as the service uses them, inferred from `loadConfig` so that the schema and the
 * mapping below are its only description. Literal values (`as const`) keep its unions narrowable.
 */
export type Config = ReturnType<typeof loadConfig>;

/** Parses the environment once, at start-up; everything downstream receives the result. */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  const parsed = parseSettings(Env, env);
  const database = databaseOf(parsed.EINVOICE_DATABASE_URL);
  const config = {
    port: parsed.PORT,
    host: parsed.HOST,
    mode: parsed.EINVOICE_MODE,
    database,
    /** Where the sandbox keeps the keys and secrets it generated, and its demo credentials. */
    dataDir: path.resolve(
      parsed.EINVOICE_DATA_DIR ??
        (database.engine === "sqlite" && database.file !== ":memory:" ? path.dirname(database.file) : "data"),
    ),
    logLevel: parsed.EINVOICE_LOG_LEVEL,
    /** Where the UBL 2.1 schemas are, or none: the schemas are not bundled (as the catalogs). */
    ublSchemas: parsed.EINVOICE_UBL_SCHEMAS ? path.resolve(parsed.EINVOICE_UBL_SCHEMAS) : undefined,
    secretPepper: parsed.EINVOICE_SECRET_PEPPER,
    dataKeys: parsed.EINVOICE_DATA_KEYS,
    qrKeys: parsed.EINVOICE_QR_KEYS,
    signingKeys: parsed.EINVOICE_SIGNING_KEYS,
    operatorPassword: parsed.EINVOICE_OPERATOR_PASSWORD,
    dbPool: {
      size: parsed.EINVOICE_DB_POOL_SIZE,
      statementTimeoutMs: parsed.EINVOICE_DB_STATEMENT_TIMEOUT_MS,
      sqliteCacheMb: parsed.EINVOICE_SQLITE_CACHE_MB,
      preparedKb: parsed.EINVOICE_DB_PREPARED_KB,
    },
    processes: parsed.EINVOICE_PROCESSES,
    /** Per minute: per credential, failed authentications per address, public requests per address. */
    rateLimits: rateLimitsOf(parsed),
    requestTimeoutMs: parsed.EINVOICE_REQUEST_TIMEOUT_MS,
    /** Idempotency-Key: how long a retry waits for the request holding its key; a business's quota. */
    idempotency: {
      waitMs: parsed.EINVOICE_IDEMPOTENCY_WAIT_MS,
      quotaBytes: parsed.EINVOICE_IDEMPOTENCY_QUOTA_BYTES,
    },
    /** The most VAT reports and PARTIAL payments per invoice, and forwards waiting per business. */
    bounds: {
      vatReportsPerInvoice: parsed.EINVOICE_MAX_VAT_REPORTS_PER_INVOICE,
      partialPaymentsPerInvoice: parsed.EINVOICE_MAX_PARTIAL_PAYMENTS_PER_INVOICE,
      queuedForwardsPerBusiness: parsed.EINVOICE_MAX_QUEUED_FORWARDS_PER_BUSINESS,
    },
    strictSupplier: parsed.EINVOICE_STRICT_SUPPLIER === "on",
    publicUrl: parsed.EINVOICE_PUBLIC_URL?.replace(/\/+$/, ""),
    /** Fastify's `trustProxy`: which proxies' X-Forwarded-* headers to believe. */
    trustProxy: trustProxyOf(parsed.EINVOICE_TRUST_PROXY),
    authority: authorityOf(parsed),
    outbox: {
      worker: parsed.EINVOICE_WORKER === "on",
      concurrency: parsed.EINVOICE_WORKER_CONCURRENCY,
      pollMs: parsed.EINVOICE_WORKER_POLL_MS,
      transmitWaitMs: parsed.EINVOICE_TRANSMIT_WAIT_MS,
      deliveryTimeoutMs: parsed.EINVOICE_DELIVERY_TIMEOUT_MS,
      maxAttempts: parsed.EINVOICE_MAX_ATTEMPTS,
      retryBaseMs: parsed.EINVOICE_RETRY_BASE_MS,
      retryMaxMs: parsed.EINVOICE_RETRY_MAX_MS,
      leaseMs: parsed.EINVOICE_LEASE_MS,
    },
    /** Collecting what waits at the authority for this service's businesses as buyers (inbox/). */
    inbox: {
      pullMs: parsed.EINVOICE_INBOX_PULL_MS,
      lookbackDays: parsed.EINVOICE_INBOX_LOOKBACK_DAYS,
    },
    metricsRefreshMs: parsed.EINVOICE_METRICS_REFRESH_MS,
    /** While the authority refuses our credential, one delivery is tried this often (authority-hold.ts). */
    authorityProbeMs: parsed.EINVOICE_AUTHORITY_PROBE_MS,
  };
  // A delivery still running when its lease ends would be taken over and made a second time, by
  // another worker, while the first is still under way.
  if (config.outbox.deliveryTimeoutMs >= config.outbox.leaseMs) {
    throw new ConfigError(
      `EINVOICE_DELIVERY_TIMEOUT_MS (${config.outbox.deliveryTimeoutMs}) must be shorter than EINVOICE_LEASE_MS (${config.outbox.leaseMs}): a delivery must end before its lease can pass to another worker`,
    );
  }
  if (
    config.authority.kind === "mbs" &&
    config.outbox.deliveryTimeoutMs < 2 * config.authority.callTimeoutMs
  ) {
    throw new ConfigError(
      `EINVOICE_DELIVERY_TIMEOUT_MS (${config.outbox.deliveryTimeoutMs}) must be at least twice EINVOICE_MBS_CALL_TIMEOUT_MS (${config.authority.callTimeoutMs}): a delivery to MBS makes several calls in a row`,
    );
  }
  if (config.mode === "production") {
    const missing = [
      config.secretPepper ? null : "EINVOICE_SECRET_PEPPER",
      config.dataKeys ? null : "EINVOICE_DATA_KEYS",
      config.qrKeys ? null : "EINVOICE_QR_KEYS",
      config.signingKeys ? null : "EINVOICE_SIGNING_KEYS",
    ].filter((v) => v !== null);
    if (missing.length > 0) {
      throw new ConfigError(`production mode needs its secrets configured: set ${missing.join(", ")}`);
    }
  }
  return config;
}

/** The sandbox serves one developer and the test suites: its defaults limit nothing. */
const UNLIMITED = 1_000_000;

function rateLimitsOf(parsed: Env) {
  const production = parsed.EINVOICE_MODE === "production";
  return {
    perCredentialPerMin: parsed.EINVOICE_RATE_LIMIT_PER_MIN ?? (production ? 6000 : UNLIMITED),
    authFailuresPerMin: parsed.EINVOICE_AUTH_FAILURES_PER_MIN ?? (production ? 30 : UNLIMITED),
    publicPerMin: parsed.EINVOICE_PUBLIC_RATE_LIMIT_PER_MIN ?? (production ? 600 : UNLIMITED),
  };
}

function trustProxyOf(value: string | undefined) {
  if (value === undefined || value === "false") return false;
  if (value === "true") return true;
  // A count of hops would believe the first hop of any connection, a client's own included.
  if (/^\d+$/.test(value)) {
    throw new ConfigError(
      "EINVOICE_TRUST_PROXY takes true or the proxies' addresses (e.g. 10.0.0.0/8,127.0.0.1), not a number of hops",
    );
  }
  return value.replaceAll(" ", "");
}

// One function per engine, for the reason authority.ts gives: each keeps its properties to itself.
function databaseOf(url: string) {
  return url.startsWith("sqlite:") ? sqliteOf(url) : postgresOf(url);
}

function postgresOf(url: string) {
  return { engine: "postgres" as const, url };
}

function sqliteOf(url: string) {
  const rest = url.slice("sqlite:".length).replace(/^\/\//, "");
  const file = rest === "" || rest === ":memory:" ? ":memory:" : path.resolve(rest);
  return { engine: "sqlite" as const, file };
}
