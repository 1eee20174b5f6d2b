import path from "node:path";
import { type Static, Type } from "typebox";
import { Value } from "typebox/value";

const Env = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ minLength: 1, default: "127.0.0.1" }),
  EINVOICE_DATABASE_URL: Type.String({
    pattern: "^(sqlite:|postgres(ql)?://)",
    default: "sqlite:./data/einvoice.db",
  }),
  EINVOICE_MODE: Type.Union([Type.Literal("sandbox"), Type.Literal("production")], { default: "sandbox" }),
  EINVOICE_DATA_DIR: Type.Optional(Type.String({ minLength: 1 })),
  EINVOICE_LOG_LEVEL: Type.Union(
    ["fatal", "error", "warn", "info", "debug", "trace", "silent"].map((l) => Type.Literal(l)),
    { default: "info" },
  ),
  /** base64 of at least 32 random bytes: the pepper of the API-secret HMAC. */
  EINVOICE_SECRET_PEPPER: Type.Optional(Type.String({ minLength: 1 })),
  /** `kid:base64key[,kid:base64key…]`, the first is the key new data is encrypted with. */
  EINVOICE_DATA_KEYS: Type.Optional(Type.String({ minLength: 1 })),
  /** `base64(PEM)[,base64(PEM)…]` RSA private keys of the QR scheme, the first is current. */
  EINVOICE_QR_KEYS: Type.Optional(Type.String({ minLength: 1 })),
  /** `base64(PEM)[,base64(PEM)…]` Ed25519 private keys that sign invoices, the first is current. */
  EINVOICE_SIGNING_KEYS: Type.Optional(Type.String({ minLength: 1 })),
  /**
   * The operator dashboard's sign-in password (at least 16 characters). Production: unset, the
   * dashboard is off. Sandbox: unset, one is generated and printed at start.
   */
  EINVOICE_OPERATOR_PASSWORD: Type.Optional(Type.String({ minLength: 16, maxLength: 200 })),
  /** PostgreSQL: connections per process, and the limit of any one statement. */
  EINVOICE_DB_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  EINVOICE_DB_STATEMENT_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 30_000 }),
  /** SQLite: the most memory each connection's page cache may grow to (it grows with use). */
  EINVOICE_SQLITE_CACHE_MB: Type.Integer({ minimum: 2, maximum: 65_536, default: 256 }),
  /**
   * Requests per minute per authenticated credential (sandbox default: effectively unlimited), for
   * the whole deployment on PostgreSQL, per process on SQLite.
   */
  EINVOICE_RATE_LIMIT_PER_MIN: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
  /** Failed authentications per minute per client address, after which its requests are refused. */
  EINVOICE_AUTH_FAILURES_PER_MIN: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
  /** Requests per minute per client address to the routes that need no credentials. */
  EINVOICE_PUBLIC_RATE_LIMIT_PER_MIN: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
  /**
   * Behind a load balancer or TLS proxy: `true` (trust whatever connects) or the proxies' addresses
   * (comma-separated IPs or CIDRs). Then the client's address (rate limits), protocol (the
   * dashboard's Secure cookie) and host come from X-Forwarded-For, -Proto and -Host.
   */
  EINVOICE_TRUST_PROXY: Type.Optional(Type.String({ pattern: "^(true|false|[0-9A-Fa-f.:/, ]+)$" })),
  /** A request not answered by then is cut off. */
  EINVOICE_REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 600_000, default: 30_000 }),
  /** `serve` forks this many API processes sharing one port (node:cluster). */
  EINVOICE_PROCESSES: Type.Integer({ minimum: 1, maximum: 256, default: 1 }),
  /**
   * Where signed invoices are delivered: this service itself, an upstream API of the same shape, or
   * the authority's MBS API.
   */
  EINVOICE_AUTHORITY: Type.Union([Type.Literal("builtin"), Type.Literal("http"), Type.Literal("mbs")], {
    default: "builtin",
  }),
  EINVOICE_AUTHORITY_URL: Type.Optional(Type.String({ pattern: "^https?://" })),
  EINVOICE_AUTHORITY_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  EINVOICE_AUTHORITY_API_SECRET: Type.Optional(Type.String({ minLength: 1 })),
  /** The MBS host (sandbox or production) and the APP's credentials from the MBS dashboard. */
  EINVOICE_MBS_URL: Type.Optional(Type.String()),
  EINVOICE_MBS_API_KEY: Type.Optional(Type.String()),
  EINVOICE_MBS_API_SECRET: Type.Optional(Type.String()),
  /**
   * The time limit of one call to MBS. A delivery makes three to five calls in a row within
   * EINVOICE_DELIVERY_TIMEOUT_MS, which must leave room for at least two.
   */
  EINVOICE_MBS_CALL_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 300_000, default: 3000 }),
  /** The APP's own service id, sent as `integrator_service_id` in VAT reports (default: the invoice's). */
  EINVOICE_MBS_SERVICE_ID: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9]{1,32}$" })),
  /**
   * A sign MBS refused (4xx) for an IRN `confirm` then does not find is repeated this many times
   * after this pause before it counts as a refusal, in case its 4xx was a transient fault in
   * disguise (the MBS spec, section 4: bounded, never open-ended).
   */
  EINVOICE_MBS_SIGN_REPEATS: Type.Integer({ minimum: 0, maximum: 5, default: 1 }),
  EINVOICE_MBS_SIGN_REPEAT_DELAY_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 2000 }),
  /**
   * While the authority refuses this service's credential, every delivery and forward waits and one
   * of them is tried this often, as a probe; the first that passes resumes them all.
   */
  EINVOICE_AUTHORITY_PROBE_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 60_000 }),
  /** `off` keeps `serve` from delivering in the background (run `einvoice worker` instead). */
  EINVOICE_WORKER: Type.Union([Type.Literal("on"), Type.Literal("off")], { default: "on" }),
  EINVOICE_WORKER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 256, default: 8 }),
  EINVOICE_WORKER_POLL_MS: Type.Integer({ minimum: 10, maximum: 60_000, default: 500 }),
  /** How long transmit and sign-transmit wait for the authority before answering 503 (queued). */
  EINVOICE_TRANSMIT_WAIT_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 5000 }),
  /** The time limit of one delivery attempt (shorter than the lease). */
  EINVOICE_DELIVERY_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 300_000, default: 10_000 }),
  EINVOICE_MAX_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 1000, default: 12 }),
  EINVOICE_RETRY_BASE_MS: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 1000 }),
  EINVOICE_RETRY_MAX_MS: Type.Integer({ minimum: 1, maximum: 86_400_000, default: 300_000 }),
  /** A claimed job not finished by then is taken over by another worker. */
  EINVOICE_LEASE_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 60_000 }),
  /** The most a scrape's outbox gauges may lag behind the database (they are a cached snapshot). */
  EINVOICE_METRICS_REFRESH_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 5000 }),
  /** How long a request waits for another one with the same Idempotency-Key before a 409. */
  EINVOICE_IDEMPOTENCY_WAIT_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 30_000 }),
  /** The bytes of answers one business's Idempotency-Keys may keep for replay over 24 hours. */
  EINVOICE_IDEMPOTENCY_QUOTA_BYTES: Type.Integer({
    minimum: 65_536,
    maximum: 1024 ** 4,
    default: 16 * 1024 * 1024,
  }),
  /**
   * What one invoice may have forwarded to the authority, each a call under the service's one
   * credential: VAT reports, and PARTIAL payments; and the forwards one business may have waiting.
   */
  EINVOICE_MAX_VAT_REPORTS_PER_INVOICE: Type.Integer({ minimum: 1, maximum: 10_000, default: 20 }),
  EINVOICE_MAX_PARTIAL_PAYMENTS_PER_INVOICE: Type.Integer({ minimum: 1, maximum: 100_000, default: 100 }),
  EINVOICE_MAX_QUEUED_FORWARDS_PER_BUSINESS: Type.Integer({ minimum: 1, maximum: 10_000_000, default: 1000 }),
  /** A supplier TIN other than the signing business's registered TIN: `off` warns, `on` refuses. */
  EINVOICE_STRICT_SUPPLIER: Type.Union([Type.Literal("on"), Type.Literal("off")], { default: "off" }),
  /**
   * Where the public reaches this service (https://einvoice.example.com): the verification QR then
   * holds `{EINVOICE_PUBLIC_URL}/verify?t=…`, so a phone camera opens the verification page.
   */
  EINVOICE_PUBLIC_URL: Type.Optional(Type.String({ pattern: "^https?://[^\\s?#]+$", maxLength: 200 })),
});

export type Config = {
  port: number;
  host: string;
  mode: "sandbox" | "production";
  database: { engine: "sqlite"; file: string } | { engine: "postgres"; url: string };
  /** Where sandbox-generated keys and demo credentials live. */
  dataDir: string;
  logLevel: Static<typeof Env>["EINVOICE_LOG_LEVEL"];
  secretPepper: string | undefined;
  dataKeys: string | undefined;
  qrKeys: string | undefined;
  signingKeys: string | undefined;
  operatorPassword: string | undefined;
  dbPool: { size: number; statementTimeoutMs: number; sqliteCacheMb: number };
  processes: number;
  /** Per minute: per credential, failed authentications per address, public requests per address. */
  rateLimits: { perCredentialPerMin: number; authFailuresPerMin: number; publicPerMin: number };
  requestTimeoutMs: number;
  /** Idempotency-Key: how long a retry waits for the request holding its key; a business's quota. */
  idempotency: { waitMs: number; quotaBytes: number };
  /** The most VAT reports and PARTIAL payments per invoice, and forwards waiting per business. */
  bounds: {
    vatReportsPerInvoice: number;
    partialPaymentsPerInvoice: number;
    queuedForwardsPerBusiness: number;
  };
  strictSupplier: boolean;
  publicUrl: string | undefined;
  /** Fastify's `trustProxy`: which proxies' X-Forwarded-* headers to believe. */
  trustProxy: boolean | string;
  authority:
    | { kind: "builtin" }
    | { kind: "http"; url: string; apiKey: string; apiSecret: string }
    | {
        kind: "mbs";
        url: string;
        apiKey: string;
        apiSecret: string;
        callTimeoutMs: number;
        serviceId?: string;
        signRepeats: number;
        signRepeatDelayMs: number;
      };
  outbox: {
    worker: boolean;
    concurrency: number;
    pollMs: number;
    transmitWaitMs: number;
    deliveryTimeoutMs: number;
    maxAttempts: number;
    retryBaseMs: number;
    retryMaxMs: number;
    leaseMs: number;
  };
  metricsRefreshMs: number;
  /** While the authority refuses our credential, one delivery is tried this often (authority-hold.ts). */
  authorityProbeMs: number;
};

export class ConfigError extends Error {}

/** Parses the environment once, at start-up; everything downstream receives the result. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const relevant = Object.fromEntries(
    Object.keys(Env.properties)
      .filter((k) => env[k] !== undefined && env[k] !== "")
      .map((k) => [k, env[k]]),
  );
  const candidate = Value.Convert(Env, Value.Default(Env, relevant));
  const errors = [...Value.Errors(Env, candidate)];
  if (errors.length > 0) {
    const detail = errors.map((e) => `${e.instancePath.slice(1) || "environment"} ${e.message}`).join("; ");
    throw new ConfigError(`invalid configuration: ${detail}`);
  }
  const parsed = candidate as Static<typeof Env>;
  const url = parsed.EINVOICE_DATABASE_URL;
  const database: Config["database"] = url.startsWith("sqlite:")
    ? { engine: "sqlite", file: sqliteFile(url) }
    : { engine: "postgres", url };
  const dataDir = path.resolve(
    parsed.EINVOICE_DATA_DIR ??
      (database.engine === "sqlite" && database.file !== ":memory:" ? path.dirname(database.file) : "data"),
  );
  const config: Config = {
    port: parsed.PORT,
    host: parsed.HOST,
    mode: parsed.EINVOICE_MODE,
    database,
    dataDir,
    logLevel: parsed.EINVOICE_LOG_LEVEL,
    secretPepper: parsed.EINVOICE_SECRET_PEPPER,
    dataKeys: parsed.EINVOICE_DATA_KEYS,
    qrKeys: parsed.EINVOICE_QR_KEYS,
    signingKeys: parsed.EINVOICE_SIGNING_KEYS,
    operatorPassword: parsed.EINVOICE_OPERATOR_PASSWORD,
    dbPool: {
      size: parsed.EINVOICE_DB_POOL_SIZE,
      statementTimeoutMs: parsed.EINVOICE_DB_STATEMENT_TIMEOUT_MS,
      sqliteCacheMb: parsed.EINVOICE_SQLITE_CACHE_MB,
    },
    processes: parsed.EINVOICE_PROCESSES,
    rateLimits: rateLimitsOf(parsed),
    requestTimeoutMs: parsed.EINVOICE_REQUEST_TIMEOUT_MS,
    idempotency: idempotencyOf(parsed),
    bounds: {
      vatReportsPerInvoice: parsed.EINVOICE_MAX_VAT_REPORTS_PER_INVOICE,
      partialPaymentsPerInvoice: parsed.EINVOICE_MAX_PARTIAL_PAYMENTS_PER_INVOICE,
      queuedForwardsPerBusiness: parsed.EINVOICE_MAX_QUEUED_FORWARDS_PER_BUSINESS,
    },
    strictSupplier: parsed.EINVOICE_STRICT_SUPPLIER === "on",
    publicUrl: parsed.EINVOICE_PUBLIC_URL?.replace(/\/+$/, ""),
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
    metricsRefreshMs: parsed.EINVOICE_METRICS_REFRESH_MS,
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

function rateLimitsOf(parsed: Static<typeof Env>): Config["rateLimits"] {
  const production = parsed.EINVOICE_MODE === "production";
  return {
    perCredentialPerMin: parsed.EINVOICE_RATE_LIMIT_PER_MIN ?? (production ? 6000 : UNLIMITED),
    authFailuresPerMin: parsed.EINVOICE_AUTH_FAILURES_PER_MIN ?? (production ? 30 : UNLIMITED),
    publicPerMin: parsed.EINVOICE_PUBLIC_RATE_LIMIT_PER_MIN ?? (production ? 600 : UNLIMITED),
  };
}

function idempotencyOf(parsed: Static<typeof Env>): Config["idempotency"] {
  return { waitMs: parsed.EINVOICE_IDEMPOTENCY_WAIT_MS, quotaBytes: parsed.EINVOICE_IDEMPOTENCY_QUOTA_BYTES };
}

function trustProxyOf(value: string | undefined): Config["trustProxy"] {
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

function authorityOf(parsed: Static<typeof Env>): Config["authority"] {
  if (parsed.EINVOICE_AUTHORITY === "builtin") return { kind: "builtin" };
  if (parsed.EINVOICE_AUTHORITY === "mbs") return mbsOf(parsed);
  const {
    EINVOICE_AUTHORITY_URL: url,
    EINVOICE_AUTHORITY_API_KEY: apiKey,
    EINVOICE_AUTHORITY_API_SECRET: apiSecret,
  } = parsed;
  if (!url || !apiKey || !apiSecret) {
    throw new ConfigError(
      "EINVOICE_AUTHORITY=http needs EINVOICE_AUTHORITY_URL, EINVOICE_AUTHORITY_API_KEY and EINVOICE_AUTHORITY_API_SECRET",
    );
  }
  return { kind: "http", url: url.replace(/\/+$/, ""), apiKey, apiSecret };
}

/** Each MBS setting checked on its own, so the message names the one to fix. */
function mbsOf(parsed: Static<typeof Env>): Config["authority"] {
  const url = parsed.EINVOICE_MBS_URL?.trim();
  if (!url) throw new ConfigError("EINVOICE_AUTHORITY=mbs needs EINVOICE_MBS_URL (the MBS host, https://…)");
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch {
    throw new ConfigError(`EINVOICE_MBS_URL is not a URL: ${JSON.stringify(url.slice(0, 200))}`);
  }
  if (!["http:", "https:"].includes(parsedUrl.protocol) || parsedUrl.search || parsedUrl.hash) {
    throw new ConfigError("EINVOICE_MBS_URL must be an http(s) URL of the host, without a query or fragment");
  }
  if (parsedUrl.username || parsedUrl.password) {
    // The credentials are headers; a URL's user part would end up in logs and error messages.
    throw new ConfigError(
      "EINVOICE_MBS_URL must not carry credentials: use EINVOICE_MBS_API_KEY and _SECRET",
    );
  }
  const credential = (name: "EINVOICE_MBS_API_KEY" | "EINVOICE_MBS_API_SECRET") => {
    const value = parsed[name];
    if (!value) throw new ConfigError(`EINVOICE_AUTHORITY=mbs needs ${name} (issued in the MBS dashboard)`);
    // A header value cannot hold these; fetch would refuse every call later, far from the cause.
    if (/[\r\n\0]/.test(value) || value !== value.trim()) {
      throw new ConfigError(`${name} holds spaces or control characters around or inside it`);
    }
    return value;
  };
  return {
    kind: "mbs",
    url: url.replace(/\/+$/, ""),
    apiKey: credential("EINVOICE_MBS_API_KEY"),
    apiSecret: credential("EINVOICE_MBS_API_SECRET"),
    callTimeoutMs: parsed.EINVOICE_MBS_CALL_TIMEOUT_MS,
    ...(parsed.EINVOICE_MBS_SERVICE_ID ? { serviceId: parsed.EINVOICE_MBS_SERVICE_ID } : {}),
    signRepeats: parsed.EINVOICE_MBS_SIGN_REPEATS,
    signRepeatDelayMs: parsed.EINVOICE_MBS_SIGN_REPEAT_DELAY_MS,
  };
}

function sqliteFile(url: string): string {
  const rest = url.slice("sqlite:".length).replace(/^\/\//, "");
  if (rest === "" || rest === ":memory:") return ":memory:";
  return path.resolve(rest);
}
