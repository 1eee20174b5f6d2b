import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { Env } from "../../src/config/env.ts";
import {
  type Config,
  ConfigError,
  clientCredentials,
  loadConfig,
  loadConfigWith,
  localServiceUrl,
} from "../../src/config.ts";

const SECRETS = {
  EINVOICE_SECRET_PEPPER: "pepper",
  EINVOICE_DATA_KEYS: "k1:key",
  EINVOICE_QR_KEYS: "qr",
  EINVOICE_SIGNING_KEYS: "signing",
};

const MBS = {
  EINVOICE_AUTHORITY: "mbs",
  EINVOICE_MBS_URL: "https://mbs.example/",
  EINVOICE_MBS_API_KEY: "key",
  EINVOICE_MBS_API_SECRET: "secret",
};

/** The ConfigError `run` throws, whose message operators read: anything else fails the test. */
function refusal(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `a ConfigError, not ${String(err)}`);
    return err.message;
  }
  assert.fail("the configuration was accepted");
}

test("operators' variable names stay: each one the docs name is read", () => {
  const documented = [
    "PORT",
    "HOST",
    "EINVOICE_DATABASE_URL",
    "EINVOICE_MODE",
    "EINVOICE_DATA_DIR",
    "EINVOICE_LOG_LEVEL",
    "EINVOICE_SECRET_PEPPER",
    "EINVOICE_DATA_KEYS",
    "EINVOICE_QR_KEYS",
    "EINVOICE_SIGNING_KEYS",
    "EINVOICE_OPERATOR_PASSWORD",
    "EINVOICE_DB_POOL_SIZE",
    "EINVOICE_DB_STATEMENT_TIMEOUT_MS",
    "EINVOICE_SQLITE_CACHE_MB",
    "EINVOICE_RATE_LIMIT_PER_MIN",
    "EINVOICE_AUTH_FAILURES_PER_MIN",
    "EINVOICE_PUBLIC_RATE_LIMIT_PER_MIN",
    "EINVOICE_TRUST_PROXY",
    "EINVOICE_REQUEST_TIMEOUT_MS",
    "EINVOICE_PROCESSES",
    "EINVOICE_AUTHORITY",
    "EINVOICE_AUTHORITY_URL",
    "EINVOICE_AUTHORITY_API_KEY",
    "EINVOICE_AUTHORITY_API_SECRET",
    "EINVOICE_MBS_URL",
    "EINVOICE_MBS_API_KEY",
    "EINVOICE_MBS_API_SECRET",
    "EINVOICE_MBS_CALL_TIMEOUT_MS",
    "EINVOICE_MBS_SERVICE_ID",
    "EINVOICE_MBS_SIGN_REPEATS",
    "EINVOICE_MBS_SIGN_REPEAT_DELAY_MS",
    "EINVOICE_AUTHORITY_PROBE_MS",
    "EINVOICE_WORKER",
    "EINVOICE_WORKER_CONCURRENCY",
    "EINVOICE_WORKER_POLL_MS",
    "EINVOICE_TRANSMIT_WAIT_MS",
    "EINVOICE_DELIVERY_TIMEOUT_MS",
    "EINVOICE_MAX_ATTEMPTS",
    "EINVOICE_RETRY_BASE_MS",
    "EINVOICE_RETRY_MAX_MS",
    "EINVOICE_LEASE_MS",
    "EINVOICE_METRICS_REFRESH_MS",
    "EINVOICE_IDEMPOTENCY_WAIT_MS",
    "EINVOICE_IDEMPOTENCY_QUOTA_BYTES",
    "EINVOICE_MAX_VAT_REPORTS_PER_INVOICE",
    "EINVOICE_MAX_PARTIAL_PAYMENTS_PER_INVOICE",
    "EINVOICE_MAX_QUEUED_FORWARDS_PER_BUSINESS",
    "EINVOICE_STRICT_SUPPLIER",
    "EINVOICE_PUBLIC_URL",
  ];
  const read = new Set(Object.keys(Env.properties));
  assert.deepEqual(
    documented.filter((name) => !read.has(name)),
    [],
  );
});

test("an empty environment is the sandbox on SQLite, with every documented default", () => {
  assert.deepEqual(loadConfig({}), {
    port: 8080,
    host: "127.0.0.1",
    mode: "sandbox",
    database: { engine: "sqlite", file: path.resolve("data/einvoice.db") },
    dataDir: path.resolve("data"),
    logLevel: "info",
    ublSchemas: undefined,
    secretPepper: undefined,
    dataKeys: undefined,
    qrKeys: undefined,
    signingKeys: undefined,
    operatorPassword: undefined,
    dbPool: { size: 10, statementTimeoutMs: 30_000, sqliteCacheMb: 256, preparedKb: 128 },
    processes: 1,
    rateLimits: { perCredentialPerMin: 1_000_000, authFailuresPerMin: 1_000_000, publicPerMin: 1_000_000 },
    requestTimeoutMs: 30_000,
    idempotency: { waitMs: 30_000, quotaBytes: 16 * 1024 * 1024 },
    bounds: { vatReportsPerInvoice: 20, partialPaymentsPerInvoice: 100, queuedForwardsPerBusiness: 1000 },
    strictSupplier: false,
    publicUrl: undefined,
    trustProxy: false,
    authority: { kind: "builtin" },
    outbox: {
      worker: true,
      concurrency: 8,
      pollMs: 500,
      transmitWaitMs: 5000,
      deliveryTimeoutMs: 10_000,
      maxAttempts: 12,
      retryBaseMs: 1000,
      retryMaxMs: 300_000,
      leaseMs: 60_000,
    },
    inbox: { pullMs: 300_000, lookbackDays: 30 },
    metricsRefreshMs: 5000,
    authorityProbeMs: 60_000,
  });
});

test("an empty variable counts as unset, and values are converted from text", () => {
  assert.deepEqual(loadConfig({ PORT: "", HOST: "", EINVOICE_MODE: "" }), loadConfig({}));
  const config = loadConfig({
    PORT: "9090",
    EINVOICE_LOG_LEVEL: "silent",
    EINVOICE_WORKER: "off",
    EINVOICE_STRICT_SUPPLIER: "on",
    EINVOICE_PUBLIC_URL: "https://einvoice.example.com//",
    EINVOICE_TRUST_PROXY: "10.0.0.0/8, 127.0.0.1",
    EINVOICE_RATE_LIMIT_PER_MIN: "42",
  });
  assert.equal(config.port, 9090);
  assert.equal(config.logLevel, "silent");
  assert.equal(config.outbox.worker, false);
  assert.equal(config.strictSupplier, true);
  assert.equal(config.publicUrl, "https://einvoice.example.com");
  assert.equal(config.trustProxy, "10.0.0.0/8,127.0.0.1");
  assert.equal(config.rateLimits.perCredentialPerMin, 42);
  assert.equal(config.rateLimits.authFailuresPerMin, 1_000_000, "the other limits keep the sandbox's");
  assert.equal(loadConfig({ EINVOICE_TRUST_PROXY: "true" }).trustProxy, true);
  assert.equal(loadConfig({ EINVOICE_TRUST_PROXY: "false" }).trustProxy, false);
});

test("the database URL picks the engine, and the data folder follows a SQLite file", () => {
  const postgres = loadConfig({ EINVOICE_DATABASE_URL: "postgres://u:p@db:5432/einvoice" });
  assert.deepEqual(postgres.database, { engine: "postgres", url: "postgres://u:p@db:5432/einvoice" });
  assert.equal(postgres.dataDir, path.resolve("data"));
  const file = loadConfig({ EINVOICE_DATABASE_URL: "sqlite:/srv/einvoice/main.db" });
  assert.deepEqual(file.database, { engine: "sqlite", file: "/srv/einvoice/main.db" });
  assert.equal(file.dataDir, "/srv/einvoice");
  assert.deepEqual(loadConfig({ EINVOICE_DATABASE_URL: "sqlite://rel/x.db" }).database, {
    engine: "sqlite",
    file: path.resolve("rel/x.db"),
  });
  const memory = loadConfig({ EINVOICE_DATABASE_URL: "sqlite::memory:" });
  assert.deepEqual(memory.database, { engine: "sqlite", file: ":memory:" });
  assert.equal(memory.dataDir, path.resolve("data"));
  assert.equal(
    loadConfig({ EINVOICE_DATABASE_URL: "sqlite:/srv/a.db", EINVOICE_DATA_DIR: "/var/keys" }).dataDir,
    "/var/keys",
  );
});

test("a bad value is refused with the variable's name and what it must be", () => {
  assert.equal(
    refusal(() => loadConfig({ PORT: "eighty" })),
    "invalid configuration: PORT must be integer",
  );
  assert.equal(
    refusal(() => loadConfig({ EINVOICE_DATABASE_URL: "mysql://x" })),
    'invalid configuration: EINVOICE_DATABASE_URL must match pattern "^(sqlite:|postgres(ql)?://)"',
  );
  assert.equal(
    refusal(() => loadConfig({ EINVOICE_PROCESSES: "0", EINVOICE_IDEMPOTENCY_QUOTA_BYTES: "10" })),
    "invalid configuration: EINVOICE_PROCESSES must be >= 1; EINVOICE_IDEMPOTENCY_QUOTA_BYTES must be >= 65536",
  );
  assert.match(
    refusal(() => loadConfig({ EINVOICE_LOG_LEVEL: "loud" })),
    /^invalid configuration: EINVOICE_LOG_LEVEL /,
  );
  assert.equal(
    refusal(() => loadConfig({ EINVOICE_TRUST_PROXY: "2" })),
    "EINVOICE_TRUST_PROXY takes true or the proxies' addresses (e.g. 10.0.0.0/8,127.0.0.1), not a number of hops",
  );
  assert.match(
    refusal(() => loadConfig({ EINVOICE_TRUST_PROXY: "everyone" })),
    /EINVOICE_TRUST_PROXY must match/,
  );
  assert.equal(
    refusal(() => loadConfig({ EINVOICE_DELIVERY_TIMEOUT_MS: "60000" })),
    "EINVOICE_DELIVERY_TIMEOUT_MS (60000) must be shorter than EINVOICE_LEASE_MS (60000): a delivery must end before its lease can pass to another worker",
  );
});

test("each log level is accepted, exactly as the Config type lists them", () => {
  const levels: Record<Config["logLevel"], true> = {
    fatal: true,
    error: true,
    warn: true,
    info: true,
    debug: true,
    trace: true,
    silent: true,
  };
  for (const level of Object.keys(levels)) {
    assert.equal(loadConfig({ EINVOICE_LOG_LEVEL: level }).logLevel, level);
  }
});

test("production needs every secret, names the missing ones, and limits by default", () => {
  assert.equal(
    refusal(() => loadConfig({ EINVOICE_MODE: "production" })),
    "production mode needs its secrets configured: set EINVOICE_SECRET_PEPPER, EINVOICE_DATA_KEYS, EINVOICE_QR_KEYS, EINVOICE_SIGNING_KEYS",
  );
  assert.equal(
    refusal(() =>
      loadConfig({ EINVOICE_MODE: "production", EINVOICE_SECRET_PEPPER: "p", EINVOICE_QR_KEYS: "q" }),
    ),
    "production mode needs its secrets configured: set EINVOICE_DATA_KEYS, EINVOICE_SIGNING_KEYS",
  );
  const production = loadConfig({ EINVOICE_MODE: "production", ...SECRETS });
  assert.equal(production.mode, "production");
  assert.equal(production.secretPepper, "pepper");
  assert.equal(production.dataKeys, "k1:key");
  assert.deepEqual(production.rateLimits, {
    perCredentialPerMin: 6000,
    authFailuresPerMin: 30,
    publicPerMin: 600,
  });
  assert.equal(
    loadConfig({ EINVOICE_MODE: "production", ...SECRETS, EINVOICE_PUBLIC_RATE_LIMIT_PER_MIN: "7" })
      .rateLimits.publicPerMin,
    7,
  );
});

test("authority http: all three settings, the address without its trailing slash", () => {
  assert.equal(
    refusal(() => loadConfig({ EINVOICE_AUTHORITY: "http", EINVOICE_AUTHORITY_URL: "https://up.example" })),
    "EINVOICE_AUTHORITY=http needs EINVOICE_AUTHORITY_URL, EINVOICE_AUTHORITY_API_KEY and EINVOICE_AUTHORITY_API_SECRET",
  );
  const http = {
    EINVOICE_AUTHORITY: "http",
    EINVOICE_AUTHORITY_URL: "https://up.example/",
    EINVOICE_AUTHORITY_API_KEY: "k",
    EINVOICE_AUTHORITY_API_SECRET: "s",
  };
  assert.deepEqual(loadConfig(http).authority, {
    kind: "http",
    url: "https://up.example",
    apiKey: "k",
    apiSecret: "s",
  });
  assert.match(
    refusal(() => loadConfig({ ...http, EINVOICE_AUTHORITY_URL: "ftp://up.example" })),
    /EINVOICE_AUTHORITY_URL must match pattern/,
  );
  assert.match(
    refusal(() => loadConfig({ EINVOICE_AUTHORITY: "ftp" })),
    /^invalid configuration: EINVOICE_AUTHORITY /,
  );
});

test("authority mbs: its defaults, and each setting checked with a message naming it", () => {
  assert.deepEqual(loadConfig(MBS).authority, {
    kind: "mbs",
    url: "https://mbs.example",
    apiKey: "key",
    apiSecret: "secret",
    callTimeoutMs: 3000,
    signRepeats: 1,
    signRepeatDelayMs: 2000,
    pullConfirmed: "false",
    pullMaxBytes: 32 * 2 ** 20,
  });
  assert.deepEqual(
    loadConfig({
      ...MBS,
      EINVOICE_MBS_SERVICE_ID: "APP00001",
      EINVOICE_MBS_CALL_TIMEOUT_MS: "1000",
      EINVOICE_MBS_SIGN_REPEATS: "0",
      EINVOICE_MBS_SIGN_REPEAT_DELAY_MS: "50",
      EINVOICE_MBS_PULL_CONFIRMED: "omit",
      EINVOICE_MBS_PULL_MAX_MB: "128",
    }).authority,
    {
      kind: "mbs",
      url: "https://mbs.example",
      apiKey: "key",
      apiSecret: "secret",
      callTimeoutMs: 1000,
      serviceId: "APP00001",
      signRepeats: 0,
      signRepeatDelayMs: 50,
      pullConfirmed: "omit",
      pullMaxBytes: 128 * 2 ** 20,
    },
  );
  assert.match(
    refusal(() => loadConfig({ ...MBS, EINVOICE_MBS_PULL_CONFIRMED: "maybe" })),
    /EINVOICE_MBS_PULL_CONFIRMED/,
  );
  assert.match(
    refusal(() => loadConfig({ ...MBS, EINVOICE_MBS_PULL_MAX_MB: "0" })),
    /EINVOICE_MBS_PULL_MAX_MB/,
  );
  assert.match(
    refusal(() => loadConfig({ ...MBS, EINVOICE_MBS_PULL_MAX_MB: "513" })),
    /EINVOICE_MBS_PULL_MAX_MB/,
  );
  const without = (name: keyof typeof MBS) =>
    Object.fromEntries(Object.entries(MBS).filter(([k]) => k !== name));
  assert.equal(
    refusal(() => loadConfig(without("EINVOICE_MBS_URL"))),
    "EINVOICE_AUTHORITY=mbs needs EINVOICE_MBS_URL (the MBS host, https://…)",
  );
  assert.equal(
    refusal(() => loadConfig(without("EINVOICE_MBS_API_KEY"))),
    "EINVOICE_AUTHORITY=mbs needs EINVOICE_MBS_API_KEY (issued in the MBS dashboard)",
  );
  assert.equal(
    refusal(() => loadConfig(without("EINVOICE_MBS_API_SECRET"))),
    "EINVOICE_AUTHORITY=mbs needs EINVOICE_MBS_API_SECRET (issued in the MBS dashboard)",
  );
  assert.equal(
    refusal(() => loadConfig({ ...MBS, EINVOICE_MBS_URL: "mbs.example" })),
    'EINVOICE_MBS_URL is not a URL: "mbs.example"',
  );
  for (const url of ["ftp://mbs.example", "https://mbs.example/?a=1", "https://mbs.example/#top"]) {
    assert.equal(
      refusal(() => loadConfig({ ...MBS, EINVOICE_MBS_URL: url })),
      "EINVOICE_MBS_URL must be an http(s) URL of the host, without a query or fragment",
      url,
    );
  }
  assert.equal(
    refusal(() => loadConfig({ ...MBS, EINVOICE_MBS_URL: "https://user:pw@mbs.example" })),
    "EINVOICE_MBS_URL must not carry credentials: use EINVOICE_MBS_API_KEY and _SECRET",
  );
  assert.equal(
    refusal(() => loadConfig({ ...MBS, EINVOICE_MBS_API_SECRET: "secret\n" })),
    "EINVOICE_MBS_API_SECRET holds spaces or control characters around or inside it",
  );
  assert.match(
    refusal(() => loadConfig({ ...MBS, EINVOICE_MBS_SERVICE_ID: "not-an-id" })),
    /EINVOICE_MBS_SERVICE_ID must match pattern/,
  );
  assert.equal(
    refusal(() => loadConfig({ ...MBS, EINVOICE_MBS_CALL_TIMEOUT_MS: "6000" })),
    "EINVOICE_DELIVERY_TIMEOUT_MS (10000) must be at least twice EINVOICE_MBS_CALL_TIMEOUT_MS (6000): a delivery to MBS makes several calls in a row",
  );
});

test("the Config type narrows on each kind, to exactly that kind's settings", () => {
  // Compile-time halves: each record must name every key of its type and nothing else.
  const kinds: Record<Config["authority"]["kind"], true> = { builtin: true, http: true, mbs: true };
  const builtinKeys: Record<keyof Extract<Config["authority"], { kind: "builtin" }>, true> = { kind: true };
  const httpKeys: Record<keyof Extract<Config["authority"], { kind: "http" }>, true> = {
    kind: true,
    url: true,
    apiKey: true,
    apiSecret: true,
  };
  const sqliteKeys: Record<keyof Extract<Config["database"], { engine: "sqlite" }>, true> = {
    engine: true,
    file: true,
  };
  const postgresKeys: Record<keyof Extract<Config["database"], { engine: "postgres" }>, true> = {
    engine: true,
    url: true,
  };
  const modes: Record<Config["mode"], true> = { sandbox: true, production: true };
  // Run-time halves: what loadConfig returns has those keys.
  assert.deepEqual(Object.keys(loadConfig({}).authority), Object.keys(builtinKeys));
  assert.deepEqual(
    Object.keys(
      loadConfig({
        EINVOICE_AUTHORITY: "http",
        EINVOICE_AUTHORITY_URL: "https://up.example",
        EINVOICE_AUTHORITY_API_KEY: "k",
        EINVOICE_AUTHORITY_API_SECRET: "s",
      }).authority,
    ),
    Object.keys(httpKeys),
  );
  assert.equal(loadConfig(MBS).authority.kind, "mbs");
  assert.deepEqual(Object.keys(kinds).sort(), ["builtin", "http", "mbs"]);
  assert.deepEqual(Object.keys(loadConfig({}).database), Object.keys(sqliteKeys));
  assert.deepEqual(
    Object.keys(loadConfig({ EINVOICE_DATABASE_URL: "postgresql://db/x" }).database),
    Object.keys(postgresKeys),
  );
  assert.deepEqual(Object.keys(modes).sort(), ["production", "sandbox"]);
});

test("a command's option stands in for its variable only when given", () => {
  const env = { EINVOICE_PROCESSES: "3", PORT: "9000" };
  assert.equal(loadConfigWith({ EINVOICE_PROCESSES: "5" }, env).processes, 5);
  assert.equal(loadConfigWith({ EINVOICE_PROCESSES: undefined }, env).processes, 3);
  assert.equal(loadConfigWith({ EINVOICE_PROCESSES: "" }, env).processes, 3);
  assert.equal(loadConfigWith({ EINVOICE_PROCESSES: "5" }, env).port, 9000, "the rest comes from env");
  assert.deepEqual(env, { EINVOICE_PROCESSES: "3", PORT: "9000" }, "the environment is left as it was");
  assert.equal(
    refusal(() => loadConfigWith({ EINVOICE_PROCESSES: "0" }, env)),
    "invalid configuration: EINVOICE_PROCESSES must be >= 1",
  );
});

test("a client command's settings: the local service's address and the credential", () => {
  assert.equal(localServiceUrl({}), "http://127.0.0.1:8080");
  assert.equal(localServiceUrl({ PORT: "" }), "http://127.0.0.1:8080");
  assert.equal(localServiceUrl({ PORT: "9123" }), "http://127.0.0.1:9123");
  assert.equal(
    refusal(() => localServiceUrl({ PORT: "eighty" })),
    "invalid configuration: PORT must be integer",
  );
  assert.equal(
    localServiceUrl({ PORT: "9123", EINVOICE_MODE: "production" }),
    "http://127.0.0.1:9123",
    "the service's own checks are not a client's",
  );
  assert.deepEqual(clientCredentials({ EINVOICE_API_KEY: "k", EINVOICE_API_SECRET: "s" }), {
    apiKey: "k",
    apiSecret: "s",
  });
  assert.deepEqual(clientCredentials({ EINVOICE_API_KEY: "" }), { apiKey: undefined, apiSecret: undefined });
});
