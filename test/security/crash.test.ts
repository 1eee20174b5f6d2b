import assert from "node:assert/strict";
import { once } from "node:events";
import { test } from "node:test";
import { loadConfig } from "../../src/config.ts";
import { type Context, createContext } from "../../src/main.ts";
import { dbEnv, startServer, withDatabase } from "../cli/run.ts";
import { ENGINE, freshInvoice, type Json, tenant } from "../helpers.ts";

/**
 * Crash durability: the real server, SIGKILLed while signs are in flight, restarted on the same
 * database. Every 200 it gave is kept and verifies; everything else is either wholly there or wholly
 * absent, and the service says so consistently (present: `IRN already exists.`, this very document;
 * absent: it signs).
 *
 * 400 signs by default, EINVOICE_CRASH_SIGNS=2000 for the long run. What is at stake is the 64 signs
 * in flight when the kill lands, with the server in its stride (a quarter of the signs answered
 * before it); the signs queued behind them only fail to connect, and cost a lookup and a re-sign each.
 */

const API = "/api/v1/einvoice";
const TOTAL = Number(process.env.EINVOICE_CRASH_SIGNS) || 400;
const IN_FLIGHT = 64;
const KILL_AFTER = Math.round(TOTAL / 4);

type Outcome =
  | { irn: string; kind: "ok" }
  | { irn: string; kind: "status"; status: number; body: string }
  | { irn: string; kind: "network"; error: string };

/** Runs `fn` over `items` with at most `limit` calls at a time, results in order. */
async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) results[i] = await fn(items[i] as T);
    }),
  );
  return results;
}

type Stored = {
  invoices: Set<string>;
  signedEvents: Map<string, number>;
  eventIrns: Set<string>;
  chainLength: number;
  audit: Awaited<ReturnType<Context["audit"]["verify"]>>;
};

/** What the database holds for the business, read in process. */
async function stored(db: Parameters<typeof withDatabase>[0], businessId: string): Promise<Stored> {
  return withDatabase(db, async (ctx) => {
    const invoices = await ctx.db
      .selectFrom("invoices")
      .select("irn")
      .where("business_id", "=", businessId)
      .execute();
    const events = await ctx.db.selectFrom("invoice_events").select(["irn", "type"]).execute();
    const signedEvents = new Map<string, number>();
    for (const e of events) {
      if (e.type === "signed") signedEvents.set(e.irn, (signedEvents.get(e.irn) ?? 0) + 1);
    }
    const business = await ctx.db
      .selectFrom("businesses")
      .select("chain_length")
      .where("id", "=", businessId)
      .executeTakeFirstOrThrow();
    return {
      invoices: new Set(invoices.map((r) => r.irn)),
      signedEvents,
      eventIrns: new Set(events.map((e) => e.irn)),
      chainLength: Number(business.chain_length),
      audit: await ctx.audit.verify(),
    };
  });
}

/** Every stored invoice has exactly one `signed` event, no event belongs to a missing invoice, the chain verifies. */
function assertWhole(state: Stored, label: string): void {
  for (const irn of state.invoices) {
    assert.equal(
      state.signedEvents.get(irn),
      1,
      `${label}: ${irn} has ${state.signedEvents.get(irn) ?? 0} signed events`,
    );
  }
  const orphans = [...state.eventIrns].filter((irn) => !state.invoices.has(irn));
  assert.deepEqual(orphans, [], `${label}: history events of invoices that are not stored`);
  assert.deepEqual(state.audit.broken, [], `${label}: the audit finds broken links`);
  assert.equal(state.audit.checked, state.invoices.size, `${label}: the audit checked every stored invoice`);
  assert.equal(
    state.chainLength,
    state.invoices.size,
    `${label}: the chain length is the number of invoices`,
  );
}

test(`crash durability: SIGKILL during ${TOTAL} concurrent signs; after a restart nothing is lost or half-written`, {
  timeout: 180_000,
}, async (t) => {
  const db = await dbEnv(t, "crash.db");
  // The business and its credentials, made in process on the database the server will use.
  const setup = await createContext(loadConfig({ ...db.env, EINVOICE_LOG_LEVEL: "silent" }));
  const who = await tenant(setup);
  await setup.close();
  const env = { ...db.env, EINVOICE_LOG_LEVEL: "warn", EINVOICE_WORKER: "off" };
  const headers = { ...who.headers, "content-type": "application/json" };

  const first = await startServer(t, env);
  const exited = once(first.child, "exit");
  const documents = Array.from({ length: TOTAL }, () => freshInvoice(who));
  const byIrn = new Map(documents.map((d) => [String(d.irn), d]));
  assert.equal(byIrn.size, TOTAL, "every invoice has its own IRN");

  let answered = 0;
  let killedAt = -1;
  const sign = async (url: string, doc: Json) =>
    fetch(`${url}${API}/sign`, {
      method: "POST",
      headers,
      body: JSON.stringify(doc),
      signal: AbortSignal.timeout(60_000),
    });
  const outcomes = await pool(documents, IN_FLIGHT, async (doc): Promise<Outcome> => {
    const irn = String(doc.irn);
    let status: number | undefined;
    try {
      const res = await sign(first.url, doc);
      status = res.status;
      const body = await res.text();
      answered += 1;
      if (answered === KILL_AFTER) {
        killedAt = answered;
        first.child.kill("SIGKILL");
      }
      return status === 200 ? { irn, kind: "ok" } : { irn, kind: "status", status, body: body.slice(0, 300) };
    } catch (err) {
      // A 200 whose body was cut off was still committed before it was sent.
      if (status === 200) return { irn, kind: "ok" };
      return { irn, kind: "network", error: String((err as Error).cause ?? err) };
    }
  });
  await exited;
  assert.equal(first.child.signalCode, "SIGKILL", "the first server died of the SIGKILL");
  assert.equal(killedAt, KILL_AFTER, "it was killed in the middle of the run");

  const ok = outcomes.filter((o) => o.kind === "ok").map((o) => o.irn);
  const notOk = outcomes.filter((o) => o.kind !== "ok").map((o) => o.irn);
  const otherStatuses = outcomes.filter((o) => o.kind === "status");
  const network = outcomes.filter((o) => o.kind === "network");
  const statusCounts = new Map<number, number>();
  for (const o of otherStatuses) statusCounts.set(o.status, (statusCounts.get(o.status) ?? 0) + 1);
  t.diagnostic(
    `${ENGINE}: ${ok.length} signed (200), ${otherStatuses.length} other statuses ${JSON.stringify(Object.fromEntries(statusCounts))}, ${network.length} network errors`,
  );
  assert.ok(ok.length >= KILL_AFTER / 2, `most answers before the kill were 200s (${ok.length})`);
  assert.ok(network.length > 0, "requests were cut off by the kill");
  assert.deepEqual(
    otherStatuses.filter((o) => o.status >= 500 && o.status !== 503),
    [],
    "no internal error under load (a 503 asks for a retry)",
  );

  // The same database, a new process.
  const second = await startServer(t, env);
  const lookups = await pool([...byIrn.keys()], 32, async (irn) => {
    const res = await fetch(`${second.url}${API}/lookup/${irn}`, {
      headers: who.headers,
      signal: AbortSignal.timeout(60_000),
    });
    const body = (await res.json()) as { data: { irn?: string; status?: string } | null };
    assert.ok(
      res.status === 200 || res.status === 404,
      `lookup ${irn}: ${res.status} ${JSON.stringify(body)}`,
    );
    if (res.status === 200) {
      assert.equal(body.data?.irn, irn);
      assert.equal(body.data?.status, "SIGNED");
    }
    return { irn, present: res.status === 200 };
  });
  const present = new Set(lookups.filter((l) => l.present).map((l) => l.irn));
  const missing = ok.filter((irn) => !present.has(irn));
  assert.deepEqual(missing, [], "every IRN that got a 200 is still there after the crash");
  const keptUnanswered = notOk.filter((irn) => present.has(irn));
  t.diagnostic(
    `after restart: ${present.size} present (${keptUnanswered.length} of them never answered 200), ${TOTAL - present.size} absent`,
  );

  // The database holds exactly the invoices the service reports, each whole, and the chain verifies.
  const afterCrash = await stored(db, who.business_id);
  assert.deepEqual(
    [...afterCrash.invoices].sort(),
    [...present].sort(),
    "stored invoices = IRNs found present",
  );
  assertWhole(afterCrash, "after the crash");

  // Signing again: what is there is refused as a duplicate (and recognised as this very document,
  // whole after the crash); what is not, signs.
  const again = await pool([...byIrn.values()], 32, async (doc) => {
    const irn = String(doc.irn);
    const res = await sign(second.url, doc);
    const body = (await res.json()) as Json;
    if (present.has(irn)) {
      assert.equal(res.status, 400, `re-sign of present ${irn}: ${JSON.stringify(body)}`);
      assert.equal(body.message, "IRN already exists.", irn);
      assert.deepEqual(body.error, [], irn);
      assert.match(String(res.headers.get("einvoice-identical-document")), /^signed-at=\d{4}-/, irn);
    } else {
      assert.equal(res.status, 200, `re-sign of absent ${irn}: ${JSON.stringify(body)}`);
      assert.equal(body.message, "Invoice signed successfully", irn);
    }
    return res.status;
  });
  assert.equal(again.filter((s) => s === 200).length, TOTAL - present.size);

  const final = await stored(db, who.business_id);
  assert.equal(final.invoices.size, TOTAL, "every invoice is stored once, after the re-signs");
  assertWhole(final, "after the re-signs");
});
