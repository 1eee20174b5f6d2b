import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { ENGINE, freshInvoice, type Json, listen, storedIrns, tempDir, tenant } from "../helpers.ts";
import { cli, oneJson, TIMEOUT } from "./run.ts";

const API = "/api/v1/einvoice";
type Line = { source: string; irn: string | null; status: string; message?: string; transmission?: string };
const readReport = (file: string) =>
  fs
    .readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Line);

test(`invoices submit on ${ENGINE}: a JSONL file in batches, a report per document, and a second run resumes`, {
  timeout: TIMEOUT * 3,
}, async (t) => {
  const { app, ctx, url } = await listen(t);
  const a = await tenant(ctx);
  const dir = tempDir(t);
  const before = freshInvoice(a, "invoice-minimal");
  assert.equal(
    (await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: before }))
      .statusCode,
    200,
  );
  const first = freshInvoice(a);
  const second = freshInvoice(a, "invoice-minimal");
  const wrongTotal: Json = {
    ...freshInvoice(a, "invoice-minimal"),
    legal_monetary_total: { payable_amount: -1 },
  };
  const file = path.join(dir, "day.jsonl");
  const lines = [
    JSON.stringify(first),
    JSON.stringify(before),
    "{ not json",
    "",
    JSON.stringify(wrongTotal),
    JSON.stringify(second),
  ];
  fs.writeFileSync(file, `${lines.join("\n")}\n`);
  const args = [
    "invoices",
    "submit",
    file,
    "--api",
    url,
    "--key",
    a.api_key,
    "--secret",
    a.api_secret,
    "--batch-size",
    "2",
  ];

  const summary = oneJson(await cli(args, {}));
  assert.deepEqual(summary, {
    documents: 5,
    signed: 2,
    duplicate: 1,
    invalid: 2,
    skipped: 0,
    report: `${file}.report.jsonl`,
  });
  const report = readReport(`${file}.report.jsonl`);
  const bySource = new Map(report.map((line) => [line.source, line]));
  assert.equal(bySource.get(`${file}:1`)?.status, "signed");
  assert.equal(bySource.get(`${file}:2`)?.status, "duplicate");
  assert.equal(bySource.get(`${file}:2`)?.message, "IRN already exists.");
  assert.match(bySource.get(`${file}:3`)?.message ?? "", /not valid JSON/);
  assert.equal(bySource.get(`${file}:5`)?.status, "invalid");
  assert.equal(bySource.get(`${file}:5`)?.message, "Failed to validate invoice");
  assert.equal(bySource.get(`${file}:6`)?.irn, second.irn);

  // Run again: what is registered is reported as skipped and not sent; the invalid ones are tried again.
  const again = oneJson(await cli(args, {}));
  assert.deepEqual([again.signed, again.duplicate, again.invalid, again.skipped], [0, 0, 2, 3]);
  assert.deepEqual(
    await storedIrns(ctx, a.business_id),
    [before.irn, first.irn, second.irn].map(String).sort(),
  );
  assert.deepEqual(await ctx.audit.verify(a.business_id), { checked: 3, broken: [] });
});

test(`invoices submit on ${ENGINE}: a folder of documents, with --transmit; missing credentials fail clearly`, {
  timeout: TIMEOUT * 3,
}, async (t) => {
  const { ctx, url } = await listen(t);
  const a = await tenant(ctx);
  const dir = tempDir(t);
  const folder = path.join(dir, "outgoing");
  fs.mkdirSync(folder);
  for (const name of ["b.json", "a.json"]) {
    fs.writeFileSync(path.join(folder, name), JSON.stringify(freshInvoice(a, "invoice-minimal")));
  }
  fs.writeFileSync(path.join(folder, "notes.txt"), "not a document");
  const summary = oneJson(
    await cli(["invoices", "submit", folder, "--transmit", "--api", url], {
      EINVOICE_API_KEY: a.api_key,
      EINVOICE_API_SECRET: a.api_secret,
    }),
  );
  assert.equal(summary.signed, 2);
  const report = readReport(String(summary.report));
  assert.deepEqual(
    report.map((line) => [path.basename(line.source), line.status, line.transmission]),
    [
      ["a.json", "signed", "queued"],
      ["b.json", "signed", "queued"],
    ],
  );

  // A fresh report, so the documents are sent (the first report would have them all skipped).
  const refused = await cli(
    [
      ...["invoices", "submit", folder, "--api", url, "--key", a.api_key, "--secret", "sk_wrong"],
      ...["--report", path.join(dir, "other.report.jsonl")],
    ],
    {},
  );
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /401.*Unauthorized/);
  const missing = await cli(["invoices", "submit", folder, "--api", url], { EINVOICE_DATA_DIR: dir });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no API credentials/);
});
