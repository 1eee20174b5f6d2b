import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

// Not through test/helpers.ts: this test needs no part of the service.
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const SCRIPT = path.join(REPO_ROOT, "scripts", "check-state-writes.mjs");
const run = (cwd: string) => spawnSync(process.execPath, [SCRIPT], { cwd, encoding: "utf8" });

test("only the lifecycle moves an invoice, in src/ as it is", () => {
  const result = run(REPO_ROOT);
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /only the lifecycle moves an invoice/);
});

test("the state check names each write of an invoice's state made outside the lifecycle", (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "state-writes-"));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  };
  // Allowed: the lifecycle's moves, the repository's SQL, a migration moving every row.
  write("src/invoices/lifecycle.ts", "await invoices.changeStatusIf(irn, from, change, tx);\n");
  write("src/invoices/invoice-repository.ts", 'await tx.updateTable("invoices").set(change).execute();\n');
  write(
    "src/db/migration-0020.ts",
    'await db.updateTable("invoices").set({ status: "SIGNED" }).execute();\n',
  );
  // Breaches: a service moving an invoice itself, a repository of another domain writing its row.
  write(
    "src/invoices/transmits.ts",
    "await invoices.setStatus(irn, { status: 'TRANSMITTING' }, tx);\nawait executeTogether(tx, invoices.inserts(rows, tx));\n",
  );
  write(
    "src/reports/report-repository.ts",
    'await tx.updateTable( "invoices" ).set({ status }).execute();\n',
  );
  const result = run(root);
  assert.equal(result.status, 1);
  const lines = result.stderr.trim().split("\n");
  assert.deepEqual(lines, [
    "state rule broken: src/invoices/transmits.ts:1: setStatus() writes an invoice's state outside the lifecycle",
    "state rule broken: src/invoices/transmits.ts:2: inserts() writes an invoice's state outside the lifecycle",
    'state rule broken: src/reports/report-repository.ts:1: updateTable("invoices") outside the invoice repository',
  ]);
});
