import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { loadConfig } from "../../src/config.ts";
import { type Db, type Executor, openDatabase } from "../../src/db/database.ts";
import { migrateToLatest } from "../../src/db/migrations.ts";
import type { JobKind, OutboxJob } from "../../src/db/schema.ts";
import { cutOffReason, type OutboxSettings, OutOfAttempts } from "../../src/outbox/attempts.ts";
import { lease } from "../../src/outbox/claims.ts";
import { JobFailure } from "../../src/outbox/failure.ts";
import { type OutboxRepository, outboxRepository } from "../../src/outbox/outbox-repository.ts";
import { decide, outboxSettler } from "../../src/outbox/settle.ts";
import { failedWith, type Plan, type Verdict } from "../../src/outbox/verdict.ts";
import { outboxWrite } from "../../src/outbox/write.ts";
import { DeliveryError } from "../../src/transmission/authority/connector.ts";
import { authorityVerdict } from "../../src/transmission/authority-hold.ts";
import { ENGINE, freshDatabase, tempDir } from "../helpers.ts";

const iso = (ms: number) => new Date(ms).toISOString();

const SETTINGS: OutboxSettings = {
  maxAttempts: 3,
  retryBaseMs: 1000,
  retryMaxMs: 60_000,
  leaseMs: 30_000,
  deliveryTimeoutMs: 10_000,
};

/**
 * A real database for each test: in memory on SQLite; on PostgreSQL (EINVOICE_TEST_ENGINE) a
 * schema of its own, where one statement is written outside a transaction and several inside one.
 */
async function store(t: TestContext) {
  let url = "sqlite::memory:";
  let drop = async () => {};
  if (ENGINE === "postgres") ({ url, drop } = await freshDatabase(tempDir(t)));
  const config = loadConfig({ EINVOICE_DATABASE_URL: url, EINVOICE_DATA_DIR: tempDir(t) });
  const db = openDatabase(config.database, config);
  t.after(async () => {
    await db.destroy();
    await drop();
  });
  await migrateToLatest(db);
  const outbox = outboxRepository(db);
  const { settle } = outboxSettler({ outbox, write: outboxWrite(db), settings: SETTINGS });
  return {
    db,
    outbox,
    settle,
    claimed: (attempt: number, owner?: string) => claimed(outbox, db, attempt, owner),
  };
}

/** A job queued, then claimed by `owner` as its `attempt`-th attempt (the claim counts it). */
async function claimed(
  outbox: OutboxRepository,
  db: Db,
  attempt: number,
  owner = "worker:a",
  kind: JobKind = "delivery",
): Promise<OutboxJob> {
  const [id] = await outbox.enqueue(kind, [{ irn: `IRN-${attempt}-${owner}`, businessId: "B" }], iso(0), db);
  assert.ok(id !== undefined);
  await db
    .updateTable("outbox_jobs")
    .set({ attempts: attempt - 1 })
    .where("id", "=", id)
    .execute();
  const job = await outbox.claim(id, lease(owner, SETTINGS.leaseMs), db);
  assert.ok(job);
  assert.equal(job.attempts, attempt);
  return job;
}

const row = (db: Db, id: number) =>
  db.selectFrom("outbox_jobs").selectAll().where("id", "=", id).executeTakeFirstOrThrow();

/** Asserts `at` lies `min`..`max` ms after `from` (the backoff's jitter). */
function dueWithin(at: string | undefined | null, from: number, min: number, max: number) {
  const wait = Date.parse(String(at)) - from;
  assert.ok(wait >= min - 5 && wait <= max + 50, `due ${wait} ms on, expected ${min}..${max}`);
}

/** A report that records each plan it was given, with the job's state as the transaction sees it. */
function recorder(id: number) {
  const seen: Array<{ plan: Plan; state: string | undefined }> = [];
  const report = async (plan: Plan, tx: Executor) => {
    const job = await tx.selectFrom("outbox_jobs").select("state").where("id", "=", id).executeTakeFirst();
    seen.push({ plan, state: job?.state });
  };
  return { seen, report };
}

test(`done on ${ENGINE}: final, the claim's attempt recorded, no error, the lease freed, reported in the same transaction`, async (t) => {
  const { db, settle, claimed } = await store(t);
  const job = await claimed(2);
  const { seen, report } = recorder(job.id);
  assert.equal(await settle(job, { outcome: "done", report }), "delivered");
  const settled = await row(db, job.id);
  assert.equal(settled.state, "done");
  assert.equal(settled.attempts, 2);
  assert.equal(settled.last_error, null);
  assert.equal(settled.lease_owner, null);
  assert.equal(settled.lease_expires_at, null);
  assert.equal(seen.length, 1);
  assert.deepEqual(
    { ...seen[0]?.plan, at: undefined },
    { at: undefined, state: "done", attempts: 2, final: true, error: null, outcome: "delivered" },
  );
  assert.equal(seen[0]?.state, "done", "the report runs after the settle, in its transaction");
  assert.equal(seen[0]?.plan.at, settled.updated_at);
});

test(`skip on ${ENGINE}: done with its reason, the claim's count given back, nothing reported`, async (t) => {
  const { db, settle, claimed } = await store(t);
  const job = await claimed(1);
  assert.equal(await settle(job, { outcome: "skip", reason: "no webhook registered" }), "skipped");
  const settled = await row(db, job.id);
  assert.deepEqual(
    [settled.state, settled.attempts, settled.last_error],
    ["done", 0, "no webhook registered"],
  );
});

test(`a failed attempt within the budget on ${ENGINE}: pending, counted, due after its backoff with jitter`, async (t) => {
  const { db, settle, claimed } = await store(t);
  for (const attempt of [1, 2]) {
    const job = await claimed(attempt);
    const { seen, report } = recorder(job.id);
    const before = Date.now();
    assert.equal(await settle(job, failedWith(new JobFailure("upstream answered 503"), report)), "retry");
    const settled = await row(db, job.id);
    assert.deepEqual(
      [settled.state, settled.attempts, settled.last_error],
      ["pending", attempt, "upstream answered 503"],
    );
    // Attempt n waits half to all of base * 2^(n-1).
    const step = SETTINGS.retryBaseMs * 2 ** (attempt - 1);
    dueWithin(settled.next_attempt_at, before, step / 2, step);
    assert.equal(seen[0]?.plan.final, false);
    assert.equal(seen[0]?.plan.next, settled.next_attempt_at);
  }
});

test(`a permanent refusal on ${ENGINE}: failed at once, whatever the budget left`, async (t) => {
  const { db, settle, claimed } = await store(t);
  const job = await claimed(1);
  const { seen, report } = recorder(job.id);
  const verdict = failedWith(new JobFailure("the authority refused the invoice", true), report);
  assert.equal(await settle(job, verdict), "failed");
  const settled = await row(db, job.id);
  assert.deepEqual([settled.state, settled.attempts], ["failed", 1]);
  assert.equal(seen[0]?.plan.final, true);
  assert.equal(seen[0]?.plan.next, undefined);
});

test(`the last attempt of the budget on ${ENGINE}: a retryable failure is final`, async (t) => {
  const { db, settle, claimed } = await store(t);
  const job = await claimed(SETTINGS.maxAttempts);
  assert.equal(await settle(job, failedWith(new Error("socket hang up"))), "failed");
  const settled = await row(db, job.id);
  assert.deepEqual(
    [settled.state, settled.attempts, settled.last_error],
    ["failed", SETTINGS.maxAttempts, "socket hang up"],
  );
});

test(`cut off on ${ENGINE}: a claim past the budget records the attempt that never finished, as the budget's last`, async (t) => {
  const { db, settle, claimed } = await store(t);
  const job = await claimed(SETTINGS.maxAttempts + 1);
  const { seen, report } = recorder(job.id);
  assert.equal(await settle(job, failedWith(new OutOfAttempts(cutOffReason(SETTINGS)), report)), "failed");
  const settled = await row(db, job.id);
  assert.equal(settled.state, "failed");
  assert.equal(settled.attempts, SETTINGS.maxAttempts, "the cut-off attempt, not this claim");
  assert.match(String(settled.last_error), /attempt 3 of 3 was cut off/);
  assert.equal(seen[0]?.plan.attempts, SETTINGS.maxAttempts);
});

test(`held on ${ENGINE}: not counted, never final (even on the budget's last attempt), due at its pace`, async (t) => {
  const { db, settle, claimed } = await store(t);
  const paces = [
    // A buyer who has not enabled receiving, a forward whose invoice is not delivered yet.
    { pace: "slowest", min: SETTINGS.retryMaxMs / 2, max: SETTINGS.retryMaxMs },
    // The authority refuses our credential: claims skip the job until the probe lifts the hold.
    { pace: "hold", min: SETTINGS.retryBaseMs / 2, max: SETTINGS.retryBaseMs },
    // An earlier message about the same invoice is on its way.
    { pace: "soon", min: SETTINGS.retryBaseMs / 2, max: SETTINGS.retryBaseMs },
  ] as const;
  for (const { pace, min, max } of paces) {
    const job = await claimed(SETTINGS.maxAttempts, `worker:${pace}`);
    const { seen, report } = recorder(job.id);
    const before = Date.now();
    const verdict: Verdict = { outcome: "held", error: `held (${pace})`, pace, report };
    assert.equal(await settle(job, verdict), "retry");
    const settled = await row(db, job.id);
    assert.deepEqual(
      [settled.state, settled.attempts, settled.last_error],
      ["pending", SETTINGS.maxAttempts - 1, `held (${pace})`],
      pace,
    );
    dueWithin(settled.next_attempt_at, before, min, max);
    assert.equal(seen[0]?.plan.final, false);
    assert.equal(seen[0]?.plan.attempts, SETTINGS.maxAttempts - 1);
  }
});

test(`a lost lease on ${ENGINE}: "lost", nothing written, nothing reported`, async (t) => {
  const { db, outbox, settle, claimed } = await store(t);
  const first = await claimed(1, "worker:first");
  // The lease runs out and another worker takes the job over.
  await db
    .updateTable("outbox_jobs")
    .set({ lease_expires_at: iso(0) })
    .where("id", "=", first.id)
    .execute();
  const second = await outbox.claim(first.id, lease("worker:second", SETTINGS.leaseMs), db);
  assert.equal(second?.attempts, 2);
  for (const verdict of [
    { outcome: "done" },
    failedWith(new JobFailure("refused", true)),
    { outcome: "held", error: "held", pace: "slowest" },
    { outcome: "skip", reason: null },
  ] satisfies Verdict[]) {
    const { seen, report } = recorder(first.id);
    const outcome = await settle(first, verdict.outcome === "skip" ? verdict : { ...verdict, report });
    assert.equal(outcome, "lost", verdict.outcome);
    assert.equal(seen.length, 0, "the outcome of whoever holds the job is the one told");
  }
  const kept = await row(db, first.id);
  assert.deepEqual([kept.state, kept.attempts, kept.lease_owner], ["pending", 2, "worker:second"]);
  assert.equal(
    await settle({ ...first, lease_owner: null }, { outcome: "done" }),
    "lost",
    "no claim, no settle",
  );
});

test(`a report that fails on ${ENGINE} takes the settle with it: one transaction`, async (t) => {
  const { db, settle, claimed } = await store(t);
  const job = await claimed(1);
  const report = async () => {
    throw new Error("the invoice side failed");
  };
  await assert.rejects(settle(job, { outcome: "done", report }), /the invoice side failed/);
  const kept = await row(db, job.id);
  assert.deepEqual(
    [kept.state, kept.lease_owner],
    ["pending", "worker:a"],
    "the job stays claimed, unsettled",
  );
});

test("the verdicts of failures: cut off, permanent, retryable; the authority's holds are held", () => {
  assert.deepEqual(failedWith(new JobFailure("no", true)), {
    outcome: "failed",
    error: "no",
    permanent: true,
    cutOff: false,
  });
  assert.deepEqual(failedWith(new TypeError("fetch failed")), {
    outcome: "failed",
    error: "fetch failed",
    permanent: false,
    cutOff: false,
  });
  assert.equal((failedWith(new OutOfAttempts("cut off")) as { cutOff: boolean }).cutOff, true);
  assert.equal(failedWith("a string").outcome, "failed");

  const credential = new DeliveryError("unable to validate api key", false, {
    hold: "configuration",
    credential: true,
  });
  assert.deepEqual(authorityVerdict(credential), {
    outcome: "held",
    error: "unable to validate api key",
    pace: "hold",
  });
  const buyer = new DeliveryError("awaiting the buyer", false, { hold: "buyer", state: "AWAITING_BUYER" });
  assert.deepEqual(authorityVerdict(buyer), {
    outcome: "held",
    error: "awaiting the buyer",
    pace: "slowest",
  });
  const refused = new DeliveryError("invalid invoice", true, { answer: { status: 400 } });
  assert.equal(refused instanceof JobFailure, true, "the authority's failures are the outbox's");
  assert.deepEqual(authorityVerdict(refused), {
    outcome: "failed",
    error: "invalid invoice",
    permanent: true,
    cutOff: false,
  });
});

test("decide is the policy alone: the same verdict, the same plan, whatever the database", () => {
  const now = Date.parse("2026-01-01T00:00:00.000Z");
  const at = iso(now);
  const failed = failedWith(new Error("503"));
  assert.deepEqual(decide({ attempts: 3 }, failed, SETTINGS, now), {
    at,
    state: "failed",
    attempts: 3,
    final: true,
    error: "503",
    outcome: "failed",
  });
  const retry = decide({ attempts: 3 }, failed, { ...SETTINGS, maxAttempts: 5 }, now);
  assert.equal(retry.state, "pending");
  // Attempt 3: half to all of 4 s.
  dueWithin(retry.next, now, 2000, 4000);
  // Past the cap, every backoff is the slowest.
  dueWithin(
    decide({ attempts: 30 }, failed, { ...SETTINGS, maxAttempts: 50 }, now).next,
    now,
    30_000,
    60_000,
  );
});
