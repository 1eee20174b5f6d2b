import assert from "node:assert/strict";
import { test } from "node:test";
import { cli, dbEnv, failed, oneJson, openContext } from "./run.ts";

test("outbox retry queues failed forward (or webhook) jobs again with a fresh budget; a delivery is refused", async (t) => {
  const db = await dbEnv(t);
  const ctx = await openContext(t, db);
  const business = await ctx.businesses.add({ name: "Retry Ltd", tin: "20198222-0002" });
  const at = "2026-11-20T10:00:00.000Z";
  const job = (kind: "forward" | "delivery" | "webhook", irn: string, state: "failed" | "done") => ({
    kind,
    irn,
    business_id: business.business_id,
    payload: kind === "delivery" ? null : "{}",
    state,
    attempts: 12,
    next_attempt_at: at,
    last_error: "MBS update answered 400: validation failed",
    created_at: at,
    updated_at: at,
  });
  await ctx.db
    .insertInto("outbox_jobs")
    .values([
      job("forward", "A1-X-20261120", "failed"),
      job("forward", "B1-X-20261120", "failed"),
      job("forward", "C1-X-20261120", "done"),
      job("delivery", "A1-X-20261120", "failed"),
    ])
    .execute();
  const states = async () =>
    (
      await ctx.db
        .selectFrom("outbox_jobs")
        .select(["kind", "irn", "state", "attempts"])
        .orderBy("id")
        .execute()
    ).map((r) => `${r.kind} ${r.irn} ${r.state} ${r.attempts}`);

  assert.deepEqual(
    oneJson(await cli(["outbox", "retry", "--kind", "forward", "--irn", "A1-X-20261120"], db.env)),
    {
      kind: "forward",
      requeued: 1,
    },
  );
  assert.deepEqual(await states(), [
    "forward A1-X-20261120 pending 0",
    "forward B1-X-20261120 failed 12",
    "forward C1-X-20261120 done 12",
    "delivery A1-X-20261120 failed 12",
  ]);
  assert.deepEqual(oneJson(await cli(["outbox", "retry", "--kind", "forward"], db.env)), {
    kind: "forward",
    requeued: 1,
  });
  assert.equal((await states())[1], "forward B1-X-20261120 pending 0");
  failed(
    await cli(["outbox", "retry", "--kind", "delivery"], db.env),
    /a failed delivery is queued again with transmit/,
  );
  assert.equal((await states())[3], "delivery A1-X-20261120 failed 12");
});
