import { type Static, type TObject, Type } from "typebox";
import { Value } from "typebox/value";

/**
 * Every variable the service reads, with its default and its bounds: the table of settings in
 * docs/operating.md documents these names (test/docs/docs.test.ts checks that each is there), so a
 * setting is added here, never renamed or removed.
 */
export const Env = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ minLength: 1, default: "127.0.0.1" }),
  EINVOICE_DATABASE_URL: Type.String({
    pattern: "^(sqlite:|postgres(ql)?://)",
    default: "sqlite:./data/einvoice.db",
  }),
  EINVOICE_MODE: Type.Union([Type.Literal("sandbox"), Type.Literal("production")], { default: "sandbox" }),
  EINVOICE_DATA_DIR: Type.Optional(Type.String({ minLength: 1 })),
  /** The OASIS UBL 2.1 schemas' folder (maindoc/, common/): UBL bodies are checked against them. */
  EINVOICE_UBL_SCHEMAS: Type.Optional(Type.String({ minLength: 1 })),
  // Each literal written out: one mapped from an array of strings would type the level as `never`.
  EINVOICE_LOG_LEVEL: Type.Union(
    [
      Type.Literal("fatal"),
      Type.Literal("error"),
      Type.Literal("warn"),
      Type.Literal("info"),
      Type.Literal("debug"),
      Type.Literal("trace"),
      Type.Literal("silent"),
    ],
    { default: "info" },
  ),
  /** base64 of at least 32 random bytes: the pepper of the API-secret HMAC. */
  EINVOICE_SECRET_PEPPER: Type.Optional(Type.String({ minLength: 1 })),
  /**
   * `kid:base64key[,kid:base64key…]`, all of which decrypt. New data is sealed under the first until
   * `keys rotate-data-key` records another one as current in the database.
   */
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
  /**
   * PostgreSQL: the statement text each connection keeps prepared, in KiB (the server keeps about
   * 50 times as much for their plans); 0 prepares none, for a pooler that cannot keep them.
   */
  EINVOICE_DB_PREPARED_KB: Type.Integer({ minimum: 0, maximum: 65_536, default: 128 }),
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
   * The time limit of one call to MBS. A delivery makes at least three calls in a row (a refused
   * sign adds a confirm, each sign repeat two more calls) within EINVOICE_DELIVERY_TIMEOUT_MS,
   * which must leave room for at least two.
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
   * `pull`'s `confirmed` query ([doc] it exists; what it means is [unknown]): `false` (the default)
   * asks for the invoices whose receipt is not acknowledged yet, as this service reads it; `omit`
   * sends none. An invoice listed again is stored once whatever MBS lists.
   */
  EINVOICE_MBS_PULL_CONFIRMED: Type.Union(
    [Type.Literal("false"), Type.Literal("true"), Type.Literal("omit")],
    {
      default: "false",
    },
  ),
  /**
   * The most one day's `pull` answer may be, in MiB (after any content-encoding is undone). MBS
   * documents no paging, so a day is read whole: the answer is in the worker's memory while its
   * invoices are stored (a 62 MiB answer took a process from 210 MB to 340-470 MB). A day past it
   * fails for good, with the reason, until queued again after this is raised.
   */
  EINVOICE_MBS_PULL_MAX_MB: Type.Integer({ minimum: 1, maximum: 512, default: 32 }),
  /** How often the workers collect the invoices waiting at the authority for this service's businesses. */
  EINVOICE_INBOX_PULL_MS: Type.Integer({ minimum: 1000, maximum: 86_400_000, default: 300_000 }),
  /** How many days back the first collection asks for (later ones start at the day the last one reached). */
  EINVOICE_INBOX_LOOKBACK_DAYS: Type.Integer({ minimum: 0, maximum: 366, default: 30 }),
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
  /** The time limit of one delivery attempt: shorter than the lease, and with MBS two calls at least. */
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

export type Env = Static<typeof Env>;
export type SettingName = keyof Env;

export class ConfigError extends Error {}

/**
 * The variables of `schema` found in `env`, converted from text, defaulted and checked. An empty
 * variable counts as unset, as a shell's `NAME=` or a compose file's blank value means it to be.
 */
export function parseSettings<S extends TObject>(schema: S, env: Record<string, string | undefined>) {
  const relevant = Object.fromEntries(
    Object.keys(schema.properties)
      .filter((k) => env[k] !== undefined && env[k] !== "")
      .map((k) => [k, env[k]]),
  );
  const candidate = Value.Convert(schema, Value.Default(schema, relevant));
  if (Value.Check(schema, candidate)) return candidate;
  const detail = [...Value.Errors(schema, candidate)]
    .map((e) => `${e.instancePath.slice(1) || "environment"} ${e.message}`)
    .join("; ");
  throw new ConfigError(`invalid configuration: ${detail}`);
}
