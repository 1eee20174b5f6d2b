// Imported before tsx's loader is registered, by scripts/test.mjs for each test process and by
// test/cli/run.ts for each `einvoice` process: kysely and typebox (with typebox/value) are ES modules
// of hundreds of files each, and loaded here they skip the loader's hooks, which would otherwise take
// about half of each process's start. Worker threads load what they need themselves.
import { isMainThread } from "node:worker_threads";

if (isMainThread) {
  await import("kysely");
  await import("typebox");
  await import("typebox/value");
}
