import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { readBarcodes } from "zxing-wasm/reader";
import { loadQrDecoder } from "../../../src/qr/qr-image-decoder.ts";
import { ARTIFACTS, launchBrowser, screenshot, withoutChromium } from "../../browser.ts";
import { cleanEnv, cli } from "../../cli/run.ts";
import { build, fixture, type Json, listen, tempDir, tenant } from "../../helpers.ts";

const run = promisify(execFile);
const API = "/api/v1/einvoice";
const withoutPoppler =
  !(fs.existsSync("/usr/bin/pdftotext") && fs.existsSync("/usr/bin/pdftoppm")) &&
  "no pdftotext/pdftoppm in /usr/bin (apt-get install -y poppler-utils): PDF test skipped";

/** The sample invoice, signed in a fresh sandbox: what a newcomer does first. */
async function signedSample(t: test.TestContext, env: Record<string, string> = {}) {
  const service = await listen(t, env);
  const who = await tenant(service.ctx, { tin: "20198222-0002" });
  const doc = fixture("invoice-full", who);
  const res = await service.app.inject({
    method: "POST",
    url: `${API}/sign`,
    headers: who.headers,
    payload: doc,
  });
  assert.equal(res.statusCode, 200, res.body);
  const irn = String(doc.irn);
  const record = (await service.app.inject({ url: `${API}/${irn}`, headers: who.headers })).json()
    .data as Json & {
    qr_code: string;
    verification_qr: string;
  };
  return { ...service, who, irn, record };
}

const pdfText = async (file: string) =>
  (await run("pdftotext", ["-layout", "-enc", "UTF-8", file, "-"], { maxBuffer: 16 << 20 })).stdout;

test("GET {IRN}.pdf: the signed invoice as an A4 PDF, under the same tenant rules as GET {IRN}", {
  skip: withoutPoppler,
}, async (t) => {
  const { app, ctx, who, irn, record } = await signedSample(t);
  const res = await app.inject({ url: `${API}/${irn}.pdf`, headers: who.headers });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers["content-type"], "application/pdf");
  assert.match(String(res.headers["content-disposition"]), new RegExp(`filename="${irn}\\.pdf"`));
  assert.equal(res.rawPayload.subarray(0, 5).toString(), "%PDF-");
  const dir = tempDir(t);
  const file = path.join(dir, "invoice.pdf");
  fs.writeFileSync(file, res.rawPayload);
  const text = (await pdfText(file)).replace(/\s+/g, " ");
  for (const field of [
    irn,
    "Okafor Building Supplies Ltd",
    "Lekki Homes Development Co",
    "20198222-0002",
    "31845560-0001",
    "693,375.00",
  ]) {
    assert.ok(text.includes(field), field);
  }
  // Both codes read back from the page are the record's.
  await run("pdftoppm", [
    "-r",
    "300",
    "-png",
    "-f",
    "1",
    "-l",
    "1",
    "-singlefile",
    file,
    path.join(dir, "page"),
  ]);
  await loadQrDecoder();
  const found = await readBarcodes(fs.readFileSync(path.join(dir, "page.png")), {
    formats: ["QRCode"],
    maxNumberOfSymbols: 4,
    tryHarder: true,
  });
  const texts = found.map((r) => r.text);
  assert.ok(texts.includes(record.qr_code), "the platform QR is the stored code");
  assert.ok(texts.includes(record.verification_qr), "the verification QR is the record's");

  const other = await tenant(ctx);
  assert.equal((await app.inject({ url: `${API}/${irn}.pdf`, headers: other.headers })).statusCode, 404);
  assert.equal((await app.inject({ url: `${API}/${irn}.pdf` })).statusCode, 401);
  assert.equal(
    (await app.inject({ url: `${API}/NOPE1-${who.service_id}-20261115.pdf`, headers: who.headers }))
      .statusCode,
    404,
  );
  for (const odd of [".pdf", "%00.pdf", `${"A".repeat(300)}.pdf`, "%E2%80%AE.pdf", "..%2F..%2Fetc.pdf"]) {
    const answer = await app.inject({ url: `${API}/${odd}`, headers: who.headers });
    assert.ok(answer.statusCode < 500 && answer.statusCode >= 400, `${odd}: ${answer.statusCode}`);
  }
});

test("npx einvoice invoices pdf writes the same PDF from the database", {
  skip: withoutPoppler,
}, async (t) => {
  const service = await build(t);
  const who = await tenant(service.ctx);
  const doc = fixture("invoice-minimal", who);
  assert.equal(
    (await service.app.inject({ method: "POST", url: `${API}/sign`, headers: who.headers, payload: doc }))
      .statusCode,
    200,
  );
  const out = path.join(tempDir(t), "out.pdf");
  const env = cleanEnv({
    EINVOICE_DATABASE_URL: service.databaseUrl,
    EINVOICE_DATA_DIR: service.dir,
  }) as Record<string, string>;
  const written = await cli(["invoices", "pdf", String(doc.irn), "--out", out], env);
  assert.equal(written.code, 0, written.stderr);
  assert.deepEqual(JSON.parse(written.stdout), { irn: doc.irn, written: out, bytes: fs.statSync(out).size });
  assert.ok((await pdfText(out)).includes(String(doc.irn)));
  const missing = await cli(["invoices", "pdf", "NOPE1-AAAAAAAA-20261115", "--out", out], env);
  assert.equal(missing.code, 1);
});

test("a newcomer: sign the sample, download its PDF, scan the verification QR, open the page, verify-qr says valid", {
  skip: withoutPoppler || withoutChromium,
  timeout: 120_000,
}, async (t) => {
  const { app, url, who, irn, record } = await signedSample(t, {
    EINVOICE_PUBLIC_URL: "http://verify.invalid",
  });
  const dir = tempDir(t);
  const file = path.join(dir, `${irn}.pdf`);
  fs.writeFileSync(file, (await app.inject({ url: `${API}/${irn}.pdf`, headers: who.headers })).rawPayload);
  // The first page as a viewer shows it, captured in Chromium for docs/integrating.md.
  await run("pdftoppm", [
    "-r",
    "110",
    "-png",
    "-f",
    "1",
    "-l",
    "1",
    "-singlefile",
    file,
    path.join(dir, "page1"),
  ]);
  const browser = await launchBrowser(t);
  const page = await browser.newPage({ viewport: { width: 930, height: 1290 } });
  const png = fs.readFileSync(path.join(dir, "page1.png")).toString("base64");
  await page.setContent(
    `<body style="margin:0;background:#888"><img style="display:block;margin:8px auto;box-shadow:0 0 6px #333" src="data:image/png;base64,${png}"></body>`,
  );
  await screenshot(page, "invoice-pdf-page1");
  // A phone's camera reads the verification QR: the page's URL with the token.
  await run("pdftoppm", [
    "-r",
    "300",
    "-png",
    "-f",
    "1",
    "-l",
    "1",
    "-singlefile",
    file,
    path.join(dir, "scan"),
  ]);
  await loadQrDecoder();
  const scanned = (
    await readBarcodes(fs.readFileSync(path.join(dir, "scan.png")), {
      formats: ["QRCode"],
      maxNumberOfSymbols: 4,
      tryHarder: true,
    })
  )
    .map((r) => r.text)
    .find((text) => text.startsWith("http://verify.invalid/verify?t="));
  assert.equal(scanned, record.verification_qr);
  // The page it opens (here, on the test's own address).
  const opened = new URL(String(scanned));
  await page.setViewportSize({ width: 760, height: 700 });
  await page.goto(`${url}/verify${opened.search}`);
  assert.match(await page.locator(".verdict").innerText(), /Genuine/);
  assert.match(await page.locator("dl").innerText(), new RegExp(irn));
  await screenshot(page, "verify-page");
  assert.ok(
    fs.existsSync(path.join(ARTIFACTS, "invoice-pdf-page1.png")) &&
      fs.existsSync(path.join(ARTIFACTS, "verify-page.png")),
  );
  // verify-qr on the served PNG, against the served JWK Set.
  const qrPng = path.join(dir, "verification-qr.png");
  fs.writeFileSync(
    qrPng,
    (await app.inject({ url: `${API}/${irn}/verification-qr.png`, headers: who.headers })).rawPayload,
  );
  const verdict = await cli(
    ["verify-qr", qrPng, "--jwks", `${url}/.well-known/jwks.json`],
    cleanEnv({}) as Record<string, string>,
  );
  assert.equal(verdict.code, 0, verdict.stderr);
  assert.equal((JSON.parse(verdict.stdout) as Json).valid, true);
});
