import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { chromium } from "playwright-core";
import { listen, REPO_ROOT, tenant } from "../helpers.ts";

/** Debian's Chromium; CI installs it (`apt-get install -y chromium`), nothing is downloaded at run time. */
const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = path.join(REPO_ROOT, "test", "artifacts");

test("/docs in a browser: enter API-KEY and API-SECRET, try the health check and the states list, see the answers", {
  timeout: 90_000,
  skip:
    !fs.existsSync(CHROMIUM) &&
    `no Chromium at ${CHROMIUM} (apt-get install -y chromium): browser test skipped`,
}, async (t) => {
  const { ctx, url } = await listen(t);
  const a = await tenant(ctx);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  t.after(() => browser.close());
  const page = await browser.newPage();
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  try {
    await page.goto(`${url}/docs`);
    await page.locator(".auth-wrapper button.authorize").click();
    const dialog = page.locator(".modal-ux");
    const inputs = dialog.locator("input");
    await inputs.nth(0).fill(a.api_key);
    await inputs.nth(1).fill(a.api_secret);
    // One form per header; each one's button turns into "Logout" once it is authorized.
    for (let i = 0; i < 2; i++) await dialog.locator("button.authorize").first().click();
    assert.equal(await dialog.locator("button.authorize").count(), 0, "both headers are authorized");
    await dialog.locator("button.btn-done").first().click();

    const tryOut = async (method: string, route: string, expected: RegExp) => {
      const operation = page.locator(`.opblock-${method}`, {
        has: page.locator(`.opblock-summary-path[data-path="${route}"]`),
      });
      await operation.locator(".opblock-summary").click();
      await operation.locator("button.execute").click();
      // The server's answer, as the page shows it under "Server response".
      const live = operation.locator(".live-responses-table", { hasText: expected });
      await live.waitFor();
      assert.match(await live.locator("tbody .response-col_status").first().innerText(), /^\s*200/);
    };
    await tryOut("get", "/", /API is healthy/);
    await tryOut("get", "/api/v1/einvoice/resources/states", /"NG-LA"[\s\S]*"Lagos"|"Lagos"[\s\S]*"NG-LA"/);
    await page.screenshot({ path: path.join(ARTIFACTS, "docs.png"), fullPage: true });
  } catch (err) {
    await page.screenshot({ path: path.join(ARTIFACTS, "docs-failure.png"), fullPage: true });
    throw err;
  }
});
