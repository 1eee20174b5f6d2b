import assert from "node:assert/strict";
import { test } from "node:test";
import { loadConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/database.ts";
import { MIGRATIONS, migrateToLatest, pendingMigrations } from "../../src/db/migrations.ts";
import { newProductionSecrets } from "../../src/keys/keyring.ts";
import { createContext } from "../../src/main.ts";
import { ENGINE, freshDatabase, tempDir } from "../helpers.ts";

test(`production refuses a ${ENGINE} schema behind the code; migrate brings it up to date`, async (t) => {
  const dir = tempDir(t);
  const database = await freshDatabase(dir);
  const env = {
    EINVOICE_MODE: "production",
    EINVOICE_DATABASE_URL: database.url,
    EINVOICE_DATA_DIR: dir,
    EINVOICE_LOG_LEVEL: "silent",
    ...newProductionSecrets(),
  };
  const config = loadConfig(env);
  assert.deepEqual(MIGRATIONS.slice(0, 4), ["0001_core", "0002_signatures", "0003_outbox", "0004_audit"]);
  await assert.rejects(createContext(config), (err: Error) => {
    assert.equal(
      err.message,
      `the database schema is behind this version (pending: ${MIGRATIONS.join(", ")}); run \`npx einvoice migrate\``,
    );
    return true;
  });

  const db = openDatabase(config.database, config);
  try {
    assert.deepEqual(await migrateToLatest(db), [...MIGRATIONS]);
    assert.deepEqual(await pendingMigrations(db), []);
    assert.deepEqual(await migrateToLatest(db), [], "applying again changes nothing");
  } finally {
    await db.destroy();
  }
  const ctx = await createContext(config);
  t.after(async () => {
    await ctx.close();
    await database.drop();
  });
  assert.equal(await ctx.businesses.count(), 0, "production never seeds a demo business");
});
