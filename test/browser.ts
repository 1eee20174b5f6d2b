import fs from "node:fs";
import path from "node:path";
import type { TestContext } from "node:test";
import { type Browser, chromium, type Page } from "playwright-core";
import { REPO_ROOT } from "./helpers.ts";

/** Debian's Chromium; CI installs it (`apt-get install -y chromium`), nothing is downloaded at run time. */
const CHROMIUM = "/usr/bin/chromium";
/** Screenshots of the pages the browser tests visit (git-ignored). */
export const ARTIFACTS = path.join(REPO_ROOT, "test", "artifacts");

/** The `skip` option of a browser test: a reason where this machine has no Chromium. */
export const withoutChromium =
  !fs.existsSync(CHROMIUM) &&
  `no Chromium at ${CHROMIUM} (apt-get install -y chromium): browser test skipped`;

/** Headless Chromium, closed when the test ends. */
export async function launchBrowser(t: TestContext): Promise<Browser> {
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
  return browser;
}

/**
 * A full-page screenshot under test/artifacts/. Written aside and renamed into place: test processes
 * running at once (one per engine) may take the same picture, and each must land whole.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const target = path.join(ARTIFACTS, `${name}.png`);
  const aside = `${target}.${process.pid}.tmp.png`;
  await page.screenshot({ path: aside, fullPage: true });
  fs.renameSync(aside, target);
}
