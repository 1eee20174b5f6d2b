// The settings, split by concern under config/: the schema of the environment (env.ts), the
// authority's part (authority.ts), the parsing into Config (load.ts) and what CLI commands read
// (cli.ts). The rest of src/ imports them from here.

export { clientCredentials, loadConfigWith, localServiceUrl } from "./config/cli.ts";
export { ConfigError, type SettingName } from "./config/env.ts";
export { type Config, loadConfig } from "./config/load.ts";
