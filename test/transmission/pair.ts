import type { TestContext } from "node:test";
import { freePort } from "../cli/run.ts";
import { build, listen, tenant } from "../helpers.ts";

/** Fast retries so that the tests measure behaviour, not backoff. */
export const FAST = {
  EINVOICE_RETRY_BASE_MS: "20",
  EINVOICE_RETRY_MAX_MS: "200",
  EINVOICE_MAX_ATTEMPTS: "1000",
};

/**
 * An authority instance (not listening yet: `authority.app.listen({ port: authorityPort })` brings
 * it up) and a gateway instance, on a socket, that delivers to it at `upstreamUrl(port)`, with the
 * same business (same id and service id) registered on both.
 */
export async function pair(
  t: TestContext,
  gatewayEnv: Record<string, string>,
  upstreamUrl: (authorityPort: number) => string = (port) => `http://127.0.0.1:${port}`,
) {
  const authority = await build(t);
  const authorityPort = await freePort();
  const upstream = await tenant(authority.ctx);
  const gateway = await listen(t, {
    ...FAST,
    EINVOICE_AUTHORITY: "http",
    EINVOICE_AUTHORITY_URL: upstreamUrl(authorityPort),
    EINVOICE_AUTHORITY_API_KEY: upstream.api_key,
    EINVOICE_AUTHORITY_API_SECRET: upstream.api_secret,
    ...gatewayEnv,
  });
  const local = await tenant(gateway.ctx, { id: upstream.business_id, serviceId: upstream.service_id });
  return { authority, authorityPort, upstream, gateway, local };
}
