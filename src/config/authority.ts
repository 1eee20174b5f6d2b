import { ConfigError, type Env } from "./env.ts";

/**
 * Where signed invoices are delivered, with what that needs. The Config type is inferred from this:
 * each kind is built by its own function, as TypeScript would give object literals returned side by
 * side each other's properties (as optional `undefined`), and `kind` is a literal to narrow on.
 */
export function authorityOf(parsed: Env) {
  if (parsed.EINVOICE_AUTHORITY === "builtin") return { kind: "builtin" as const };
  if (parsed.EINVOICE_AUTHORITY === "mbs") return mbsOf(parsed);
  return httpOf(parsed);
}

function httpOf(parsed: Env) {
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
  return { kind: "http" as const, url: url.replace(/\/+$/, ""), apiKey, apiSecret };
}

/** Each MBS setting checked on its own, so the message names the one to fix. */
function mbsOf(parsed: Env) {
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
    kind: "mbs" as const,
    url: url.replace(/\/+$/, ""),
    apiKey: credential("EINVOICE_MBS_API_KEY"),
    apiSecret: credential("EINVOICE_MBS_API_SECRET"),
    callTimeoutMs: parsed.EINVOICE_MBS_CALL_TIMEOUT_MS,
    ...(parsed.EINVOICE_MBS_SERVICE_ID ? { serviceId: parsed.EINVOICE_MBS_SERVICE_ID } : {}),
    signRepeats: parsed.EINVOICE_MBS_SIGN_REPEATS,
    signRepeatDelayMs: parsed.EINVOICE_MBS_SIGN_REPEAT_DELAY_MS,
    pullConfirmed: parsed.EINVOICE_MBS_PULL_CONFIRMED,
    pullMaxBytes: parsed.EINVOICE_MBS_PULL_MAX_MB * 2 ** 20,
  };
}
