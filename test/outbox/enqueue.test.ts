import assert from "node:assert/strict";
import { test } from "node:test";
import { loadConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/database.ts";
import { migrateToLatest } from "../../src/db/migrations.ts";
import { outboxRepository } from "../../src/outbox/outbox-repository.ts";
import { outboxQueue } from "../../src/outbox/outbox-service.ts";
import { ENGINE, freshDatabase, tempDir } from "../helpers.ts";

test(`enqueue on ${ENGINE}: one pending row each, due at once, ids in the order of the items across chunks`, async (t) => {
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
  const queue = outboxQueue(outboxRepository(db));
  const at = "2026-03-01T10:00:00.000Z";

  // 70 rows: a chunk of 64, then 4 and 2 on SQLite, 6 on PostgreSQL (chunksFor).
  const items = Array.from({ length: 70 }, (_, i) => ({ irn: `IRN-${i}`, businessId: `B${i % 3}` }));
  const ids = await db.transaction().execute((tx) => queue.enqueue("delivery", items, at, tx));
  assert.equal(ids.length, items.length);
  const rows = await db.selectFrom("outbox_jobs").selectAll().orderBy("id").execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  items.forEach((item, i) => {
    const row = byId.get(ids[i] as number);
    assert.equal(row?.irn, item.irn, `item ${i}`);
    assert.equal(row?.business_id, item.businessId);
  });
  for (const row of rows) {
    assert.deepEqual(
      [row.kind, row.state, row.attempts, row.payload, row.lease_owner, row.last_error],
      ["delivery", "pending", 0, null, null, null],
    );
    assert.deepEqual([row.next_attempt_at, row.created_at, row.updated_at], [at, at, at]);
  }

  const [event] = await queue.enqueue(
    "webhook",
    [{ irn: null, businessId: "B0", payload: '{"id":"evt_1"}' }],
    at,
    db,
  );
  const hook = await db
    .selectFrom("outbox_jobs")
    .selectAll()
    .where("id", "=", event as number)
    .executeTakeFirst();
  assert.deepEqual([hook?.kind, hook?.irn, hook?.payload], ["webhook", null, '{"id":"evt_1"}']);
  assert.deepEqual(await queue.enqueue("forward", [], at, db), [], "nothing to queue, no statement");

  assert.equal(await queue.openDelivery("IRN-5", db), ids[5]);
  await db.updateTable("outbox_jobs").set({ state: "done" }).where("irn", "=", "IRN-5").execute();
  assert.equal(await queue.openDelivery("IRN-5", db), undefined, "a done delivery is not open");
  assert.equal(await queue.openDelivery("IRN-unknown", db), undefined);
});
