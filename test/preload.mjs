// Imported before tsx's loader is registered, by test/cli/run.ts for the process that runs
// `einvoice` commands one after another (test/cli/host.ts, the one test process still loaded
// through tsx): kysely and typebox (with typebox/value) are ES modules of hundreds of files each,
// and loaded here they skip the loader's hooks, which would otherwise take about half of the
// process's start. Worker threads load what they need themselves.
import { isMainThread } from "node:worker_threads";

if (isMainThread) {
  await import("kysely");
  await import("typebox");
  await import("typebox/value");
}
