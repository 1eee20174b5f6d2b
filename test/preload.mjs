// Imported by scripts/test.mjs before tsx's loader is registered (see there): kysely and typebox are
// ES modules of hundreds of files each, and loaded here they skip the loader's hooks, which would
// otherwise take a third of each test process's start. Worker threads load what they need themselves.
import { isMainThread } from "node:worker_threads";

if (isMainThread) {
  await import("kysely");
  await import("typebox");
  await import("typebox/value");
}
