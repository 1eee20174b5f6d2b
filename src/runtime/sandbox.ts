import fs from "node:fs";
import path from "node:path";
import type { Context } from "./context.ts";
import { postmanEnvironment } from "./postman-environment.ts";

export type SandboxCredentials = {
  business_id: string;
  service_id: string;
  api_key: string;
  api_secret: string;
};

/** On an empty sandbox database: a demo business and credentials, printed and written beside the data. */
export async function seedSandbox(
  ctx: Context,
): Promise<{ created: boolean; credentials?: SandboxCredentials; file: string }> {
  const file = path.join(ctx.config.dataDir, "sandbox-credentials.json");
  if ((await ctx.businesses.count()) > 0) {
    const credentials = fs.existsSync(file)
      ? (JSON.parse(fs.readFileSync(file, "utf8")) as SandboxCredentials)
      : undefined;
    return credentials ? { created: false, credentials, file } : { created: false, file };
  }
  const business = await ctx.businesses.add({ name: "Demo Trading Ltd", tin: "20198222-0002" }, "sandbox");
  const key = await ctx.businesses.createKey(business.business_id, "sandbox");
  const credentials = {
    business_id: business.business_id,
    service_id: business.service_id,
    api_key: key.api_key,
    api_secret: key.api_secret,
  };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  writePostmanEnvironment(ctx, credentials);
  return { created: true, credentials, file };
}

/**
 * The Postman environment of the sandbox, filled, beside its credentials: imported with
 * postman/einvoice.postman_collection.json, every request answers.
 */
function writePostmanEnvironment(ctx: Context, credentials: SandboxCredentials): void {
  const { host, port } = ctx.config;
  // A server listening on every address is reached on the loopback one.
  const reachable = host === "0.0.0.0" || host === "::" || host === "" ? "127.0.0.1" : host;
  const environment = postmanEnvironment("einvoice sandbox", {
    baseUrl: `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`,
    ...credentials,
  });
  fs.writeFileSync(
    path.join(ctx.config.dataDir, "postman-environment.json"),
    `${JSON.stringify(environment, null, 2)}\n`,
    { mode: 0o600 },
  );
}

/** The demo business's ids for the examples of /docs (never its secret), once the sandbox has one. */
export function sandboxExampleValues(dataDir: string): Record<string, string> | undefined {
  const file = path.join(dataDir, "sandbox-credentials.json");
  if (!fs.existsSync(file)) return undefined;
  const { business_id, service_id } = JSON.parse(fs.readFileSync(file, "utf8")) as SandboxCredentials;
  return { BUSINESS_ID: business_id, SERVICE_ID: service_id };
}

/** Sandbox start-up on an empty database: demo credentials, printed once per start. */
export async function announceSandbox(ctx: Context): Promise<void> {
  const seeded = await seedSandbox(ctx);
  if (!seeded.credentials) return;
  const c = seeded.credentials;
  process.stderr.write(
    `\nSandbox ${seeded.created ? "created" : "ready"}. Demo credentials (also in ${seeded.file}):\n` +
      `  business_id  ${c.business_id}\n  service_id   ${c.service_id}\n` +
      `  API-KEY      ${c.api_key}\n  API-SECRET   ${c.api_secret}\n` +
      `Try the API at /docs; the operator dashboard is at /dashboard (password ${
        // One the operator chose is theirs to know: only a generated one is printed.
        ctx.config.operatorPassword ? "from EINVOICE_OPERATOR_PASSWORD" : ctx.operator.password
      }).\n\n`,
  );
}
