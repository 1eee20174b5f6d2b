#!/usr/bin/env node
// The CLI runs the TypeScript sources, so `npx einvoice` needs no build step: bundled with esbuild
// as the process starts (src/loader/bundle.mjs), which loads them with about a second less of CPU
// than loading each file through tsx took.
import { fileURLToPath } from "node:url";
import { runBundled } from "../src/loader/bundle.mjs";

await runBundled({
  contents: `import ${JSON.stringify(fileURLToPath(new URL("../src/cli/index.ts", import.meta.url)))};`,
  resolveDir: fileURLToPath(new URL(".", import.meta.url)),
  label: "einvoice",
});
