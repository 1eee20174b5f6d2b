import assert from "node:assert/strict";
import { test } from "node:test";
import type { Page } from "playwright-core";
import { launchBrowser, screenshot, withoutChromium } from "../browser.ts";
import { fixture, freshInvoice, type Json } from "../helpers.ts";
import { pair } from "../transmission/pair.ts";

const API = "/api/v1/einvoice";

/** The IRNs listed in the invoices table, in order. */
const listedIrns = (page: Page) => page.locator("#invoices tbody tr td:first-child").allInnerTexts();

test("/dashboard in a browser: sign in, businesses and credentials, invoice search, an invoice's record, a failed transmission re-queued, a received invoice read and rejected", {
  timeout: 120_000,
  skip: withoutChromium,
}, async (t) => {
  // A gateway whose authority is down, and the first failed delivery final: a failed transmission.
  const { authority, authorityPort, gateway, local } = await pair(t, {
    EINVOICE_MAX_ATTEMPTS: "1",
    EINVOICE_TRANSMIT_WAIT_MS: "2000",
  });
  const { app, ctx, url } = gateway;
  const sign = async (path: string, body: Json) =>
    app.inject({ method: "POST", url: `${API}/${path}`, headers: local.headers, payload: body });
  const signed = [freshInvoice(local), freshInvoice(local, "invoice-minimal")];
  const older = freshInvoice(local);
  older.issue_date = "2026-10-01";
  older.irn = String(older.irn).replace(/-\d{8}$/, "-20261001");
  (older.accounting_customer_party as Json).tin = "55555555-0001";
  for (const doc of [...signed, older]) assert.equal((await sign("sign", doc)).statusCode, 200);
  const failing = freshInvoice(local);
  const failed = await sign("sign-transmit", failing);
  assert.equal(failed.json().message, "Transmission failed", failed.body);
  // Two invoices a supplier on another access point sent to the business, one whose total is wrong.
  const supplier = { business_id: "0b7c6f3e-1a2b-4c3d-8e9f-0a1b2c3d4e5f", service_id: "SUPP1234" };
  const incoming = ["INB1", "INB2"].map((number) => {
    const doc = fixture("invoice-full", supplier);
    doc.irn = `${number}${process.pid}-${supplier.service_id}-20261115`;
    doc.accounting_supplier_party = {
      ...(doc.accounting_supplier_party as Json),
      party_name: "Àdìsá <Paints> & Co",
      tin: "55555555-0001",
    };
    doc.accounting_customer_party = { ...(doc.accounting_customer_party as Json), tin: local.tin };
    return doc;
  });
  (incoming[1]?.legal_monetary_total as Json).payable_amount = 700000;
  const receipt = await ctx.inbox.receive(
    incoming.map((document) => ({ document })),
    "mbs",
    "test",
  );
  assert.equal(receipt.stored.length, 2, JSON.stringify(receipt));
  const received = incoming.map((doc) => String(doc.irn));
  const wrongTotal = String(received[1]);

  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  try {
    // Signed out: the overview sends to the sign-in page, which comes back to it afterwards.
    await page.goto(`${url}/dashboard`);
    assert.match(page.url(), /\/dashboard\/login\?next=%2Fdashboard$/);
    await page.locator("input[name=password]").fill("not the password at all");
    await page.locator("button", { hasText: "Sign in" }).click();
    await page.locator("[role=alert]", { hasText: "not the operator password" }).waitFor();
    await screenshot(page, "dashboard-login");
    await page.locator("input[name=password]").fill(String(ctx.operator.password));
    await page.locator("button", { hasText: "Sign in" }).click();
    await page.waitForURL(`${url}/dashboard`);

    const tile = (label: string) => page.locator(".tile", { hasText: label }).locator("strong").innerText();
    assert.equal(await tile("invoices signed"), "4");
    assert.equal(await tile("failed transmissions"), "1");
    await screenshot(page, "dashboard-overview");

    // A business added through the form, a credential created for it (its secret works) and revoked.
    await page.locator("nav a", { hasText: "Businesses" }).click();
    await page.locator("input[name=name]").fill("Browser <Test> Co");
    await page.locator("input[name=tin]").fill("87654321-0001");
    await page.locator("button", { hasText: "Add business" }).click();
    await page.locator("h1", { hasText: "Browser <Test> Co" }).waitFor();
    await page.locator("[role=status]", { hasText: "Business added" }).waitFor();
    await page.locator("button", { hasText: "Create a credential" }).click();
    const apiKey = await page.locator("#api-key").innerText();
    const apiSecret = await page.locator("#api-secret").innerText();
    await screenshot(page, "dashboard-new-credential");
    const health = () => app.inject({ url: "/", headers: { "api-key": apiKey, "api-secret": apiSecret } });
    assert.equal((await health()).statusCode, 200, "the credential shown works at once");
    await page.locator("a", { hasText: "Back to Browser <Test> Co" }).click();
    const row = page.locator("tr", { hasText: apiKey });
    await row.locator("button", { hasText: "Revoke" }).click();
    await page.locator("[role=status]", { hasText: "Credential revoked" }).waitFor();
    assert.equal(await page.locator("tr", { hasText: apiKey }).locator(".badge").innerText(), "revoked");
    assert.equal((await health()).statusCode, 401, "a revoked credential fails at once");
    await screenshot(page, "dashboard-business");
    await page.locator("nav a", { hasText: "Businesses" }).click();
    await page.locator("td", { hasText: "Browser <Test> Co" }).waitFor();
    await screenshot(page, "dashboard-businesses");

    // Invoice search: all, then by IRN, by TIN, by issue date, by status.
    await page.locator("nav a", { hasText: "Invoices" }).click();
    assert.equal((await listedIrns(page)).length, 4);
    const search = async (fill: () => Promise<void>) => {
      await page.locator("a", { hasText: "Clear" }).click();
      await fill();
      await page.locator("button", { hasText: "Search" }).click();
      await page.waitForURL(/\/dashboard\/invoices\?/);
      return (await listedIrns(page)).sort();
    };
    const first = String(signed[0]?.irn);
    assert.deepEqual(await search(() => page.locator("input[name=irn]").fill(first)), [first]);
    assert.deepEqual(await search(() => page.locator("input[name=tin]").fill("55555555-0001")), [
      String(older.irn),
    ]);
    assert.deepEqual(await search(() => page.locator("input[name=to]").fill("2026-10-31")), [
      String(older.irn),
    ]);
    assert.deepEqual(
      await search(async () => {
        await page.locator("select[name=status]").selectOption("TRANSMISSION_FAILED");
      }),
      [String(failing.irn)],
    );
    await screenshot(page, "dashboard-invoices");

    // The record: QR image drawn, history, outbox job with its error.
    await page.locator("#invoices a", { hasText: String(failing.irn) }).click();
    await page.locator("h1", { hasText: String(failing.irn) }).waitFor();
    const qrWidth = await page
      .locator(".qr img")
      .evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth);
    assert.ok(qrWidth >= 200, `the QR image is drawn (${qrWidth} px)`);
    const history = await page.locator("#history tbody td:nth-child(2)").allInnerTexts();
    assert.deepEqual(history.slice(0, 3), ["signed", "transmission_queued", "transmission_attempt"]);
    assert.equal(history.at(-1), "transmission_failed");
    await screenshot(page, "dashboard-invoice");

    // The authority comes back; the operator re-queues the failed transmission; a worker delivers it.
    await authority.app.listen({ port: authorityPort, host: "127.0.0.1" });
    gateway.startWorker();
    await page.locator("nav a", { hasText: "Outbox" }).click();
    const failedRow = page.locator("#failed-transmissions tr", { hasText: String(failing.irn) });
    await screenshot(page, "dashboard-outbox");
    await failedRow.locator("button", { hasText: "Re-queue" }).click();
    await page.locator("[role=status]", { hasText: "Transmission re-queued" }).waitFor();
    await page.goto(`${url}/dashboard/invoices/${failing.irn}`);
    for (let i = 0; (await page.locator(".facts .badge").first().innerText()) !== "TRANSMITTED"; i++) {
      assert.ok(i < 100, "the re-queued invoice is delivered");
      await new Promise((resolve) => setTimeout(resolve, 100));
      await page.reload();
    }
    assert.ok(
      (await page.locator("#history tr", { hasText: "transmission_queued" }).allInnerTexts()).some((r) =>
        r.includes("dashboard"),
      ),
      "the re-queue is in the history under the dashboard's name",
    );
    await page.locator("nav a", { hasText: "Outbox" }).click();
    assert.equal(await page.locator("#failed-transmissions").count(), 0, "no failed transmission is left");

    // The business's received invoices: counted on its page, listed, filtered, one read and rejected.
    await page.goto(`${url}/dashboard/businesses/${local.business_id}`);
    const awaiting = page.locator("#received-counts .tile", { hasText: "awaiting a decision" });
    assert.equal(await awaiting.locator("strong").innerText(), "2");
    await awaiting.click();
    await page.waitForURL(/\/inbox\?status=RECEIVED$/);
    const listedReceived = () => page.locator("#received tbody tr td:first-child").allInnerTexts();
    assert.deepEqual((await listedReceived()).sort(), [...received].sort());
    assert.deepEqual(await page.locator("#received tbody tr td:nth-child(2)").allInnerTexts(), [
      "Àdìsá <Paints> & Co",
      "Àdìsá <Paints> & Co",
    ]);
    await page.locator("a", { hasText: "Clear" }).click();
    await page.locator("input[name=supplier_tin]").fill("99999999-0001");
    await page.locator("button", { hasText: "Search" }).click();
    await page.waitForURL(/supplier_tin=99999999-0001/);
    assert.deepEqual(await listedReceived(), []);
    await page.locator("input[name=supplier_tin]").fill("55555555-0001");
    await page.locator("button", { hasText: "Search" }).click();
    await page.waitForURL(/supplier_tin=55555555-0001/);
    assert.equal((await listedReceived()).length, 2);
    await screenshot(page, "dashboard-inbox");
    await page.locator("#received a", { hasText: wrongTotal }).click();
    await page.locator("h1", { hasText: wrongTotal }).waitFor();
    assert.equal(await page.locator("#supplier").innerText(), "Àdìsá <Paints> & Co");
    assert.equal(await page.locator("#payable").innerText(), "700000 NGN");
    const findings = await page.locator("#checks tbody tr").allInnerTexts();
    assert.ok(
      findings.some((f) => f.includes("total_payable") && f.includes("legal_monetary_total.payable_amount")),
      findings.join("\n"),
    );
    await screenshot(page, "dashboard-received");
    await page.locator("input[name=reason]").fill("the total does not add up");
    await page.locator("#decide button", { hasText: "Reject" }).click();
    await page.locator("[role=status]", { hasText: "Invoice rejected" }).waitFor();
    assert.equal(await page.locator("#status .badge").innerText(), "REJECTED");
    assert.equal(await page.locator("#reason").innerText(), "the total does not add up");
    assert.equal(await page.locator("#decide").count(), 0, "no decision left to make");
    assert.deepEqual(
      (await page.locator("#history tbody tr").allInnerTexts()).map((r) => r.split("\t").slice(1, 3)),
      [
        ["received", "test"],
        ["rejected", "dashboard"],
      ],
    );
    await page.locator("a", { hasText: "its received invoices" }).click();
    assert.equal(
      await page.locator("#received tr", { hasText: wrongTotal }).locator(".badge").first().innerText(),
      "REJECTED",
    );

    await page.locator("button", { hasText: "Sign out" }).click();
    await page.goto(`${url}/dashboard/outbox`);
    assert.match(page.url(), /\/dashboard\/login/, "signed out");
  } catch (err) {
    await screenshot(page, "dashboard-failure");
    throw err;
  }
});
