/*
 * The service's entry points, for the CLI, the tests and the benchmarks. The runtime lives in
 * src/runtime: context.ts (the composition root, its outbox side in outbox-wiring.ts), server.ts
 * (the HTTP app and logger), sandbox.ts (demo credentials), serve.ts (serve, the cluster
 * supervisor, workers, shutdown).
 */
export { type Context, createContext, type Logger } from "./runtime/context.ts";
export { type SandboxCredentials, seedSandbox } from "./runtime/sandbox.ts";
export { serve, work } from "./runtime/serve.ts";
export { createLogger, createServer } from "./runtime/server.ts";
