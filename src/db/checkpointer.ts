import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { THREAD_EXEC_ARGV } from "../threads/thread-bundle.ts";

/**
 * SQLite's WAL checkpoints, on a thread of their own. By default the connection that commits copies
 * the WAL back into the database file whenever the WAL passes 1,000 pages: a few megabytes written
 * and an fsync of the file, on the event loop, stalling every request in flight (the tail of the
 * sign latency). Here the committing connection only checkpoints past `SAFETY_WAL_BYTES` (should this
 * thread fall behind or die), and this thread runs a passive checkpoint every `everyMs`: passive
 * checkpoints never wait for, nor hold up, readers and writers. Durability is unchanged: a commit
 * is on disk in the WAL before it is acknowledged, whoever copies it later.
 */
export function startCheckpointer(file: string, everyMs = 100): { stop(): Promise<void> } {
  const worker = new Worker(THREAD, {
    eval: true,
    execArgv: THREAD_EXEC_ARGV,
    workerData: { file, everyMs, sqlite: createRequire(import.meta.url).resolve("better-sqlite3") },
  });
  // Losing the thread costs only speed (the safety threshold takes over), never data.
  worker.on("error", () => {});
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  return {
    /**
     * Asks the thread to close its connection and end, and waits for it. Not `terminate()` first:
     * a thread stopped while still opening its connection (an app closed right after it started)
     * made better-sqlite3 raise an error into a dying isolate, which aborts the whole process. The
     * thread reads the request only once its opening is done; if it has not ended in time, it is
     * terminated.
     */
    async stop() {
      worker.postMessage("stop");
      const late = setTimeout(() => void worker.terminate(), STOP_WAIT_MS);
      await exited;
      clearTimeout(late);
    },
  };
}

/** How long a checkpointer thread is given to end by itself. */
const STOP_WAIT_MS = 5000;

/** The WAL's size past which the committing connection checkpoints by itself, whatever its pages' size. */
export const SAFETY_WAL_BYTES = 40 * 1024 * 1024;

const THREAD = `
const { workerData, parentPort } = require("node:worker_threads");
const SQLite = require(workerData.sqlite);
const db = new SQLite(workerData.file);
db.pragma("busy_timeout = 1000");
db.pragma("synchronous = FULL");
const rounds = setInterval(() => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch {
    // Busy or gone for a moment: the next round tries again.
  }
}, workerData.everyMs);
parentPort.once("message", () => {
  clearInterval(rounds);
  db.close();
  parentPort.close();
});
`;
