#!/usr/bin/env node
// `npm test`: the whole suite on SQLite and, when EINVOICE_TEST_DATABASE_URL names a PostgreSQL
// database, the same suite again on PostgreSQL (each test in a schema of its own).
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import path from "node:path";

function find(dir) {
  return readdirSync(dir)
    .flatMap((name) => {
      const full = path.join(dir, name);
      return statSync(full).isDirectory() ? find(full) : name.endsWith(".test.ts") ? [full] : [];
    })
    .sort();
}

const files = process.argv.length > 2 ? process.argv.slice(2) : find("test");
const engines = ["sqlite", ...(process.env.EINVOICE_TEST_DATABASE_URL ? ["postgres"] : [])];
let failed = false;
for (const engine of engines) {
  console.log(`\n# engine: ${engine}\n`);
  const run = spawnSync("npx", ["tsx", "--test", "--test-reporter=spec", ...files], {
    stdio: "inherit",
    env: { ...process.env, EINVOICE_TEST_ENGINE: engine },
  });
  if (run.status !== 0) {
    console.log(`\n# engine ${engine}: FAILED`);
    failed = true;
  }
}
if (!process.env.EINVOICE_TEST_DATABASE_URL) {
  console.log("\n# PostgreSQL suite skipped: set EINVOICE_TEST_DATABASE_URL=postgres://… to run it too");
}
process.exit(failed ? 1 : 0);
