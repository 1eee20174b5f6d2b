import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * SQLite's WAL checkpoints, on a thread of their own. By default the connection that commits copies
 * the WAL back into the database file whenever the WAL passes 1,000 pages: a few megabytes written
 * and an fsync of the file, on the event loop, stalling every request in flight (the tail of the
 * sign latency). Here the committing connection only checkpoints past `SAFETY_PAGES` (should this
 * thread fall behind or die), and this thread runs a passive checkpoint every `everyMs`: passive
 * checkpoints never wait for, nor hold up, readers and writers. Durability is unchanged: a commit
 * is on disk in the WAL before it is acknowledged, whoever copies it later.
 */
export function startCheckpointer(file: string, everyMs = 100): { stop(): Promise<void> } {
  const worker = new Worker(THREAD, {
    eval: true,
    workerData: { file, everyMs, sqlite: createRequire(import.meta.url).resolve("better-sqlite3") },
  });
  // Losing the thread costs only speed (the safety threshold takes over), never data.
  worker.on("error", () => {});
  worker.unref();
  return {
    async stop() {
      await worker.terminate();
    },
  };
}

/** Pages after which the committing connection checkpoints by itself (40 MB of WAL). */
export const SAFETY_PAGES = 10_000;

const THREAD = `
const { workerData } = require("node:worker_threads");
const SQLite = require(workerData.sqlite);
const db = new SQLite(workerData.file);
db.pragma("busy_timeout = 1000");
db.pragma("synchronous = FULL");
setInterval(() => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch {
    // Busy or gone for a moment: the next round tries again.
  }
}, workerData.everyMs);
`;
