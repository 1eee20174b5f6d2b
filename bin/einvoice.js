#!/usr/bin/env node
// The CLI runs the TypeScript sources directly through tsx, so `npx einvoice` needs no build step.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/index.ts");
