import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { REPO_ROOT } from "../helpers.ts";

const SCRIPT = path.join(REPO_ROOT, "scripts", "check-imports.mjs");
const run = (cwd: string) => spawnSync(process.execPath, [SCRIPT], { cwd, encoding: "utf8" });

test("the layering rules hold for src/ as it is", () => {
  const result = run(REPO_ROOT);
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /layering rules hold/);
});

test("the layering check names each kind of breach, with the import that makes it", (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "imports-"));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  };
  write("src/http/envelope.ts", "export const ok = 1;\n");
  write(
    "src/invoices/service.ts",
    'import { ok } from "../http/envelope.ts";\nimport "../reports/service.ts";\n',
  );
  write("src/invoices/invoice-routes.ts", 'import { ok } from "../http/envelope.ts";\n');
  write("src/reports/report-service.ts", 'export { x } from "../invoices/service.ts";\n');
  write("src/crypto/signer.ts", 'const m = await import("../invoices/service.ts");\n');
  write("src/transmission/outbox.ts", 'import type { X } from "../invoices/service.ts";\n');
  write("src/simulators/mbs/server.ts", 'import { DeliveryError } from "../../transmission/outbox.ts";\n');
  write(
    "src/outbox/settle.ts",
    'import type { X } from "../transmission/delivery.ts";\nimport { y } from "../webhooks/notifier.ts";\n',
  );
  write(
    "src/outbox/claims.ts",
    'import type { Z } from "../invoices/service.ts";\nimport "../db/database.ts";\n',
  );
  const result = run(root);
  assert.equal(result.status, 1);
  const out = result.stderr;
  assert.match(out, /outside http imports http: src\/invoices\/service\.ts -> src\/http\/envelope\.ts/);
  // A domain's *routes.ts is its HTTP edge.
  assert.doesNotMatch(out, /src\/invoices\/invoice-routes\.ts -> src\/http/);
  assert.match(out, /crypto imports a domain: src\/crypto\/signer\.ts -> src\/invoices\/service\.ts/);
  assert.match(
    out,
    /transmission imports invoices: src\/transmission\/outbox\.ts -> src\/invoices\/service\.ts/,
  );
  assert.match(
    out,
    /cycle edge: invoices -> reports \(src\/invoices\/service\.ts -> src\/reports\/service\.ts\)/,
  );
  assert.match(out, /cycle edge: reports -> invoices/);
  assert.match(
    out,
    /simulators import the service: src\/simulators\/mbs\/server\.ts -> src\/transmission\/outbox\.ts/,
  );
  // The outbox is generic: the sides that queue jobs in it and handle them are not its to import.
  assert.match(
    out,
    /outbox imports transmission: src\/outbox\/settle\.ts -> src\/transmission\/delivery\.ts/,
  );
  assert.match(out, /outbox imports webhooks: src\/outbox\/settle\.ts -> src\/webhooks\/notifier\.ts/);
  assert.match(out, /outbox imports invoices: src\/outbox\/claims\.ts -> src\/invoices\/service\.ts/);
  assert.doesNotMatch(out, /outbox imports db/);
});
