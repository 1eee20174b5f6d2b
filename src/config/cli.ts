import { Type } from "typebox";
import { Env, parseSettings, type SettingName } from "./env.ts";
import { loadConfig } from "./load.ts";

/**
 * The configuration with a command's options in place of the variables they stand for (`serve
 * --processes N` for EINVOICE_PROCESSES): an option left out or empty leaves its variable as it is.
 */
export function loadConfigWith(
  options: Partial<Record<SettingName, string>>,
  env: Record<string, string | undefined> = process.env,
) {
  const given = Object.entries(options).filter(([, value]) => value !== undefined && value !== "");
  return loadConfig({ ...env, ...Object.fromEntries(given) });
}

/**
 * A client command's own settings: the credential it calls a running service with when it is given
 * none. Read apart from the service's settings, which a client holding a credential does not need.
 */
const ClientEnv = Type.Object({
  EINVOICE_API_KEY: Type.Optional(Type.String()),
  EINVOICE_API_SECRET: Type.Optional(Type.String()),
});

export function clientCredentials(env: Record<string, string | undefined> = process.env) {
  const parsed = parseSettings(ClientEnv, env);
  return { apiKey: parsed.EINVOICE_API_KEY, apiSecret: parsed.EINVOICE_API_SECRET };
}

/** The service on this machine, at the port its own settings give it: a client's default address. */
export function localServiceUrl(env: Record<string, string | undefined> = process.env): string {
  return `http://127.0.0.1:${parseSettings(Type.Object({ PORT: Env.properties.PORT }), env).PORT}`;
}
