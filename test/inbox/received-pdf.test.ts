import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { readBarcodes } from "zxing-wasm/reader";
import { PdfRendererBusy } from "../../src/documents/pdf/pool.ts";
import { invoicePdfs } from "../../src/documents/pdf/service.ts";
import { loadQrDecoder } from "../../src/qr/qr-image-decoder.ts";
import { build, fixture, freshInvoice, type Json, listen, type Tenant, tempDir, tenant } from "../helpers.ts";
import { ownMs, probeHealthz, schedule } from "../security/own-time.ts";

const run = promisify(execFile);
const API = "/api/v1/einvoice";
const withoutPoppler =
  !(fs.existsSync("/usr/bin/pdftotext") && fs.existsSync("/usr/bin/pdftoppm")) &&
  "no pdftotext/pdftoppm in /usr/bin (apt-get install -y poppler-utils): PDF test skipped";

/** A supplier outside this service. */
const SUPPLIER = { business_id: "0b7c6f3e-1a2b-4c3d-8e9f-0a1b2c3d4e5f", service_id: "SUPP1234" };

/** The full fixture as the supplier sent it to `buyer`, pulled from the authority. */
function fromSupplier(buyer: Pick<Tenant, "tin">): Json {
  const doc = freshInvoice(SUPPLIER);
  doc.accounting_customer_party = { ...(doc.accounting_customer_party as Json), tin: buyer.tin };
  return doc;
}

const BACKLOG = { waiting: 4, running: 1, reason: "share" as const, retryAfter: 2 };

const squash = (value: string) => value.replace(/\s+/g, " ");

/** The PDF's text, written to a file of the test's. */
async function pdfText(dir: string, name: string, pdf: Buffer): Promise<string> {
  const file = path.join(dir, `${name}.pdf`);
  fs.writeFileSync(file, pdf);
  const { stdout } = await run("pdftotext", ["-layout", "-enc", "UTF-8", file, "-"], { maxBuffer: 16 << 20 });
  return squash(stdout);
}

/** The QR codes found on the first page at 300 dpi. */
async function codesOn(dir: string, pdf: Buffer): Promise<string[]> {
  const file = path.join(dir, "codes.pdf");
  fs.writeFileSync(file, pdf);
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
    path.join(dir, "codes"),
  ]);
  await loadQrDecoder();
  const found = await readBarcodes(fs.readFileSync(path.join(dir, "codes.png")), {
    formats: ["QRCode"],
    maxNumberOfSymbols: 4,
    tryHarder: true,
  });
  return found.map((r) => r.text);
}

test("GET inbox/{IRN}.pdf: the received invoice in the same layout, saying whence and its status, without our codes or signature", {
  skip: withoutPoppler,
  timeout: 60_000,
}, async (t) => {
  const { app, ctx } = await build(t);
  const buyer = await tenant(ctx, { tin: "31845560-0001" });
  const other = await tenant(ctx, { tin: "41234567-0001" });
  const doc = fromSupplier(buyer);
  const irn = String(doc.irn);
  const receipt = await ctx.inbox.receive([{ document: doc }], "mbs", "test");
  assert.equal(receipt.stored.length, 1);
  const dir = tempDir(t);

  const res = await app.inject({ url: `${API}/inbox/${irn}.pdf`, headers: buyer.headers });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers["content-type"], "application/pdf");
  assert.equal(res.headers["content-disposition"], `inline; filename="${irn}.pdf"`);
  assert.equal(res.rawPayload.subarray(0, 5).toString(), "%PDF-");
  const text = await pdfText(dir, "received", res.rawPayload);
  const { received_at } = await ctx.inbox.read({ businessId: buyer.business_id, apiKey: "test" }, irn);
  const on = `${received_at.slice(0, 16).replace("T", " ")} UTC`;
  // The same layout as a signed invoice's: parties, lines, totals, payment.
  for (const field of [
    "Commercial Invoice",
    irn,
    "Okafor Building Supplies Ltd",
    "Lekki Homes Development Co",
    "TIN: 31845560-0001",
    "Portland cement 50 kg",
    "693,375.00",
    "Amount payable (NGN)",
    "Net 30.",
    // Where it came from, when, how, and where it stands.
    `Received from Okafor Building Supplies Ltd (TIN 20198222-0002) on ${on} via the tax authority (MBS) · status RECEIVED`,
    "Status RECEIVED",
    `Received ${on} · the supplier's invoice as received: not signed by this service`,
    "page 1 of 1",
  ]) {
    assert.ok(text.includes(field), `${field} in: ${text}`);
  }
  // Not signed here: no platform QR, no verification QR, no key id or hash of ours.
  for (const absent of ["Tax authority QR code", "Scan with a phone to verify", "key id", "Signed "]) {
    assert.ok(!text.includes(absent), absent);
  }
  assert.deepEqual(await codesOn(dir, res.rawPayload), [], "no QR code on the page");

  // Its status follows the buyer's decision.
  await ctx.inbox.acknowledge({ businessId: buyer.business_id, apiKey: "test" }, irn, "test");
  const acknowledged = await app.inject({ url: `${API}/inbox/${irn}.pdf`, headers: buyer.headers });
  assert.equal(acknowledged.statusCode, 200);
  const after = await pdfText(dir, "acknowledged", acknowledged.rawPayload);
  assert.ok(after.includes("status ACKNOWLEDGED"), after);
  assert.ok(after.includes("Status ACKNOWLEDGED"), after);

  // The buyer's only: another business, no credentials, an unknown IRN.
  const crossed = await app.inject({ url: `${API}/inbox/${irn}.pdf`, headers: other.headers });
  assert.equal(crossed.statusCode, 404);
  assert.equal((crossed.json() as Json).message, "Invoice not found");
  assert.equal((await app.inject({ url: `${API}/inbox/${irn}.pdf` })).statusCode, 401);
  assert.equal(
    (await app.inject({ url: `${API}/inbox/NOPE1-SUPP1234-20261115.pdf`, headers: buyer.headers }))
      .statusCode,
    404,
  );
  // The sent invoice's PDF route is not this one: the received IRN is not among the buyer's own invoices.
  assert.equal((await app.inject({ url: `${API}/${irn}.pdf`, headers: buyer.headers })).statusCode, 404);
  for (const odd of [".pdf", "%00.pdf", `${"A".repeat(300)}.pdf`, "..%2F..%2Fetc.pdf"]) {
    const answer = await app.inject({ url: `${API}/inbox/${odd}`, headers: buyer.headers });
    assert.ok(answer.statusCode >= 400 && answer.statusCode < 500, `${odd}: ${answer.statusCode}`);
  }
});

test("a received invoice signed by another business of this service says it came through this service", {
  skip: withoutPoppler,
  timeout: 60_000,
}, async (t) => {
  const { app, ctx } = await build(t);
  const buyer = await tenant(ctx, { tin: "31845560-0001" });
  const seller = await tenant(ctx, { tin: "20198222-0002" });
  const doc = freshInvoice(seller);
  doc.accounting_customer_party = { ...(doc.accounting_customer_party as Json), tin: buyer.tin };
  const signed = await app.inject({
    method: "POST",
    url: `${API}/sign-transmit`,
    headers: seller.headers,
    payload: doc,
  });
  assert.equal(signed.statusCode, 200, signed.body);
  const res = await app.inject({ url: `${API}/inbox/${doc.irn}.pdf`, headers: buyer.headers });
  assert.equal(res.statusCode, 200, res.body);
  const text = await pdfText(tempDir(t), "builtin", res.rawPayload);
  assert.ok(text.includes("via this service, from another business of it · status RECEIVED"), text);
  // The seller's own copy of it is the signed one, with both codes.
  const sent = await app.inject({ url: `${API}/${doc.irn}.pdf`, headers: seller.headers });
  assert.equal(sent.statusCode, 200);
  const sentText = await pdfText(tempDir(t), "sent", sent.rawPayload);
  assert.ok(sentText.includes("Tax authority QR code") && !sentText.includes("Received from"), sentText);
});

test("a received PDF is rendered in the buyer's share of the PDF queue: refused before it is read when that share is used", async () => {
  const calls: string[] = [];
  const row = {
    irn: "INV1-SUPP1234-20261115",
    status: "RECEIVED",
    source: "mbs",
    supplier_tin: "20198222-0002",
    supplier_name: "Okafor Building Supplies Ltd",
    received_at: "2026-11-16T09:30:00.000Z",
  };
  const document = fixture("invoice-minimal", SUPPLIER);
  const inbox = {
    async document(principal: { businessId: string }, irn: string) {
      calls.push(`read ${principal.businessId} ${irn}`);
      return { row, chars: JSON.stringify(document).length, open: () => document };
    },
  };
  let busy: string | undefined;
  const rendered: unknown[] = [];
  const pdfs = invoicePdfs({
    records: {
      printable: async () => assert.fail("no sent invoice is read"),
      operatorPrintable: async () => assert.fail("no sent invoice is read"),
      printedRevision: async () => assert.fail("no sent invoice is read"),
    },
    renderer: {
      admit(business) {
        calls.push(`admit ${business}`);
        if (business === busy) throw new PdfRendererBusy("business busy", BACKLOG);
      },
      async render(input, options) {
        calls.push(`render ${options?.business}`);
        rendered.push(input);
        return Buffer.from("%PDF-stub");
      },
    },
  });
  const buyer = { businessId: "b-1", apiKey: "k" };
  const pdf = await pdfs.receivedPdf(buyer, row.irn, inbox);
  assert.equal(pdf.toString(), "%PDF-stub");
  assert.deepEqual(calls, ["admit b-1", `read b-1 ${row.irn}`, "render b-1"]);
  assert.deepEqual(rendered, [
    {
      irn: row.irn,
      status: "RECEIVED",
      document,
      received: {
        supplierTin: "20198222-0002",
        supplierName: "Okafor Building Supplies Ltd",
        at: "2026-11-16T09:30:00.000Z",
        source: "mbs",
      },
    },
  ]);

  // Its share used: a 503 naming the renderer, and the invoice is not even read.
  calls.length = 0;
  busy = "b-1";
  await assert.rejects(pdfs.receivedPdf(buyer, row.irn, inbox), (err: Error & { code?: string }) => {
    assert.equal(err.code, "service_unavailable", String(err));
    assert.match(err.message, /temporarily unavailable/);
    return true;
  });
  assert.deepEqual(calls, ["admit b-1"]);
});

test("a received invoice of 100,000 lines: its PDF is refused before rendering (422, with the count and the bound) at once, /healthz answers meanwhile, and the next PDF renders", {
  timeout: 120_000,
}, async (t) => {
  const { ctx, url } = await listen(t);
  const buyer = await tenant(ctx, { tin: "31845560-0001" });
  const huge = fromSupplier(buyer);
  const line = (huge.invoice_line as Json[])[0] as Json;
  huge.invoice_line = Array.from({ length: 100_000 }, (_, i) => ({ ...line, item: { name: `Item ${i}` } }));
  const normal = fromSupplier(buyer);
  const receipt = await ctx.inbox.receive([{ document: huge }, { document: normal }], "mbs", "test");
  assert.equal(receipt.stored.length, 2, JSON.stringify(receipt));
  const pdfOf = (doc: Json) => fetch(`${url}${API}/inbox/${String(doc.irn)}.pdf`, { headers: buyer.headers });

  // /healthz, one request at a time, 10 ms apart, while the PDF is asked for; the times are the
  // service's own (a loaded machine's waits for a CPU taken off: see test/security/own-time.ts).
  const probes = probeHealthz(url);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const since = schedule();
  const res = await pdfOf(huge);
  const body = (await res.json()) as Json;
  const ms = ownMs(since);
  await new Promise((resolve) => setTimeout(resolve, 50));
  // Three probes at least, the request's answer among them (seen: three in all on a loaded machine).
  const waits = (await probes.stop(3)).map((wait) => wait.ms);

  assert.equal(res.status, 422, JSON.stringify(body));
  assert.equal(body.code, 422);
  assert.equal(body.status, false);
  assert.equal(body.message, "Invoice too large to print");
  const error = body.error as Json;
  assert.equal(error.handler, "inbox.pdf");
  // Refused on its stored size, before its 30 MB of JSON are parsed.
  assert.match(
    String(error.details),
    /over 2,097,152 characters of JSON; a PDF is printed from at most that/,
  );
  assert.ok(ms < 2000, `answered after ${ms.toFixed(0)} ms of the service's work`);
  const longest = Math.max(...waits);
  t.diagnostic(
    `refused in ${ms.toFixed(0)} ms; /healthz at most ${longest.toFixed(0)} ms over ${waits.length} probes`,
  );
  assert.ok(longest < 200, `/healthz waited ${longest.toFixed(0)} ms (${waits.map(Math.round).join(", ")})`);

  // Nothing was left behind: a normal PDF right after renders, as ever.
  const next = await pdfOf(normal);
  assert.equal(next.status, 200, await next.clone().text());
  assert.equal(
    Buffer.from(await next.arrayBuffer())
      .subarray(0, 5)
      .toString(),
    "%PDF-",
  );
});
