import assert from "node:assert/strict";
import { test } from "node:test";
import { launchBrowser, screenshot, withoutChromium } from "../browser.ts";
import { listen, tenant } from "../helpers.ts";

test("/docs in a browser: enter API-KEY and API-SECRET, try the health check and the states list, see the answers", {
  timeout: 90_000,
  skip: withoutChromium,
}, async (t) => {
  const { ctx, url } = await listen(t);
  const a = await tenant(ctx);
  const browser = await launchBrowser(t);
  const page = await browser.newPage();
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
    await screenshot(page, "docs");
  } catch (err) {
    await screenshot(page, "docs-failure");
    throw err;
  }
});
