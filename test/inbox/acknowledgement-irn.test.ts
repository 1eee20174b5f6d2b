import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type TestContext, test } from "node:test";
import { build, eventually, type Json } from "../helpers.ts";
import { API, mbsEnv, mirror, simulator } from "../transmission/mbs.ts";

/** IRNs no IRN template allows: a path of their own, and one merely off the template. */
const HOSTILE = ["..", "a/../b", "INV1-notours-20261301"];

/**
 * The simulator as the service reaches it, through a recorder of every request (as it arrives, after
 * the client's URL normalization: `transmit/..` arrives as `/api/v1/invoice/`). The answer of a pull
 * for today also lists `extra` beside the simulator's own: MBS would refuse those IRNs at sign, but
 * a buyer's access point must not trust what a listing says.
 */
async function recorder(t: TestContext, target: string, extra: () => Json[]) {
  const seen: string[] = [];
  const today = new Date().toISOString().slice(0, 10);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      seen.push(`${req.method} ${req.url}`);
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(
          ([name]) => !["host", "content-length", "connection", "transfer-encoding"].includes(name),
        ),
      ) as Record<string, string>;
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const up = await fetch(`${target}${req.url}`, { method: req.method ?? "GET", headers, body });
      let text = await up.text();
      const url = new URL(req.url ?? "/", "http://x");
      if (url.pathname.endsWith("/transmit/pull") && url.searchParams.get("from") === today && up.ok) {
        const answer = JSON.parse(text) as { data: Json[] };
        answer.data.push(...extra());
        text = JSON.stringify(answer);
      }
      res.writeHead(up.status, { "content-type": "application/json" }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

test("MBS: a pulled invoice whose IRN is not an IRN is stored with its warning, and its acknowledgement is never sent", async (t) => {
  const sim = await simulator(t, { seed: 5, taxpayers: 1 });
  const [taxpayer] = sim.taxpayers;
  assert.ok(taxpayer);
  const [fine] = sim.injectInbound({ count: 1, buyer_tin: taxpayer.tin });
  assert.ok(fine);
  const { document } = sim.invoice(fine) as { document: Json };
  const mbs = await recorder(t, sim.url, () =>
    HOSTILE.map((irn) => ({ irn, document: { ...structuredClone(document), irn } })),
  );
  const { app, ctx, startWorker } = await build(
    t,
    mbsEnv({ ...sim, url: mbs.url }, { EINVOICE_INBOX_LOOKBACK_DAYS: "0" }),
  );
  const buyer = await mirror(ctx, taxpayer);

  const collected = await ctx.collector.collect("test", { force: true });
  assert.equal(collected.pulled, true);
  if (collected.pulled) assert.equal(collected.stored, 1 + HOSTILE.length, JSON.stringify(collected));

  // Read and decided through the service, as `invoices acknowledge IRN` does with any IRN typed:
  // a URL cannot even name `..` (it is resolved away before any route sees it).
  const principal = { businessId: buyer.business_id, apiKey: buyer.api_key };
  for (const irn of HOSTILE) {
    const record = await ctx.inbox.read(principal, irn);
    assert.equal(record.source, "mbs");
    assert.ok(
      record.checks.some((c) => c.rule === "irn_template" && c.path === "irn"),
      JSON.stringify(record.checks),
    );
    // The buyer's decision is recorded: its own books. Telling MBS is the outbox's.
    const decided = await ctx.inbox.acknowledge(principal, irn, "test");
    assert.equal(decided.status, "ACKNOWLEDGED");
    assert.equal(decided.acknowledgement, "queued");
  }
  const res = await app.inject({
    method: "POST",
    url: `${API}/inbox/${fine}/acknowledge`,
    headers: buyer.headers,
  });
  assert.equal(res.statusCode, 200, res.body);
  startWorker();
  const jobs = () =>
    ctx.db
      .selectFrom("outbox_jobs")
      .select(["irn", "state", "attempts", "last_error"])
      .where("kind", "=", "acknowledgement")
      .execute();
  // Each job tried at least once: done, failed, or pending again after a failure.
  await eventually(
    async () => {
      const all = await jobs();
      return all.length === 1 + HOSTILE.length && all.every((j) => j.state !== "pending" || j.last_error);
    },
    30_000,
    "every acknowledgement tried",
  );

  // What reached the authority: the pull, and one PATCH, the genuine IRN's. Nothing else.
  assert.deepEqual(
    mbs.seen.filter((r) => !r.startsWith("GET /api/v1/invoice/transmit/pull?")),
    [`PATCH /api/v1/invoice/transmit/${fine}`],
  );
  const state = async (irn: string) =>
    (
      await ctx.db
        .selectFrom("received_invoices")
        .select("acknowledgement")
        .where("irn", "=", irn)
        .executeTakeFirstOrThrow()
    ).acknowledgement;
  assert.equal(await state(fine), "sent");
  assert.equal((sim.invoice(fine) as { acknowledged: boolean }).acknowledged, true);

  const byIrn = new Map((await jobs()).map((j) => [j.irn, j]));
  for (const irn of HOSTILE) {
    const job = byIrn.get(irn);
    assert.equal(job?.state, "failed", irn);
    assert.equal(job.attempts, 1, "refused for good at once, not retried");
    assert.match(job.last_error ?? "", /not told to the authority: the received invoice's IRN is not an IRN/);
    assert.equal(await state(irn), "failed", irn);
    const { history } = await ctx.inbox.read(principal, irn);
    const failed = history.find((h) => h.type === "acknowledgement_failed");
    assert.ok(failed, JSON.stringify(history));
    assert.match(String(failed.detail.error), /is not an IRN/);
  }
});
