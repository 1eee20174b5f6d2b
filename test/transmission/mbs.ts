import type { TestContext } from "node:test";
import { type MbsSimulator, type MbsTaxpayer, startMbsSimulator } from "../../src/simulators/mbs/server.ts";
import { build, type Json, type Tenant, tenant } from "../helpers.ts";

export const API = "/api/v1/einvoice";

/** Fast retries, so the tests measure behaviour and not backoff. */
export const FAST = {
  EINVOICE_RETRY_BASE_MS: "20",
  EINVOICE_RETRY_MAX_MS: "200",
  EINVOICE_MAX_ATTEMPTS: "1000",
};

/** A simulator on a free port, closed when the test ends. */
export async function simulator(
  t: TestContext,
  options: { faults?: string; seed?: number; taxpayers?: number } = {},
) {
  const sim = await startMbsSimulator({ port: 0, host: "127.0.0.1", ...options });
  t.after(() => sim.close());
  return sim;
}

/** The service's settings for delivering to a simulator. */
export const mbsEnv = (
  sim: Pick<MbsSimulator, "url" | "api_key" | "api_secret">,
  extra: Record<string, string> = {},
) => ({
  ...FAST,
  EINVOICE_AUTHORITY: "mbs",
  EINVOICE_MBS_URL: sim.url,
  EINVOICE_MBS_API_KEY: sim.api_key,
  EINVOICE_MBS_API_SECRET: sim.api_secret,
  ...extra,
});

/** The service against a simulator, with the simulator's taxpayers mirrored as businesses (same id, service id, TIN). */
export async function serviceFor(t: TestContext, sim: MbsSimulator, extra: Record<string, string> = {}) {
  const service = await build(t, mbsEnv(sim, extra));
  const tenants: Tenant[] = [];
  for (const taxpayer of sim.taxpayers) tenants.push(await mirror(service.ctx, taxpayer));
  return { ...service, tenants };
}

export const mirror = (ctx: Parameters<typeof tenant>[0], taxpayer: MbsTaxpayer) =>
  tenant(ctx, { id: taxpayer.business_id, serviceId: taxpayer.service_id, tin: taxpayer.tin });

let sequence = 0;

/** The full fixture under a fresh IRN whose invoice number starts with `prefix` (the simulator's per-invoice faults). */
export function invoiceFor(base: Json, who: Pick<Tenant, "service_id">, prefix = "INV"): Json {
  sequence += 1;
  const date = String(base.issue_date).replaceAll("-", "");
  return { ...structuredClone(base), irn: `${prefix}${process.pid}N${sequence}-${who.service_id}-${date}` };
}
