import http from "node:http";
import type { AddressInfo } from "node:net";
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

/** What a test's MBS answers to one day's pull: a body, and headers beside the content type. */
export type PullAnswer = { body: string | Buffer; headers?: Record<string, string | number> };

/**
 * An MBS that answers `pull` with what the test gives it for each day, as a hostile or broken
 * authority would, and the no-route 404 to anything else; the days asked for, in order.
 */
export async function pullServer(
  t: TestContext,
  answerFor: (day: string) => PullAnswer | Promise<PullAnswer>,
) {
  const pulls: string[] = [];
  const srv = http.createServer(async (req, res) => {
    req.resume();
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname !== "/api/v1/invoice/transmit/pull") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ code: 404, data: null, message: "no route found for this path" }));
      return;
    }
    const day = url.searchParams.get("from") ?? "";
    pulls.push(day);
    const answer = await answerFor(day);
    res.writeHead(200, { "content-type": "application/json", ...answer.headers });
    res.end(answer.body);
  });
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  // The service's connections are kept alive: closed here, or the close would wait for them.
  t.after(
    () =>
      new Promise<void>((resolve) => {
        srv.close(() => resolve());
        srv.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, pulls };
}
