import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import type { ThreadAnswer, ThreadData, ThreadMain, ThreadReply, ThreadRequest } from "./worker-pool.ts";

/**
 * The thread side of src/threads/worker-pool.ts, bundled with the pool's module (thread-bundle.ts):
 * calls its main once, then answers the pool's messages.
 */
export async function serveThread(main: ThreadMain): Promise<void> {
  const { data, timed } = workerData as ThreadData;
  const port = parentPort as MessagePort;
  const handle = (await main(data as never)) as (input: unknown) => unknown;

  port.on("message", async ({ id, inputs }: ThreadRequest) => {
    // A time limit counts from here: not the thread's start-up, nor a message waiting behind another.
    if (timed) port.postMessage({ started: id } satisfies ThreadReply);
    const answers: ThreadAnswer[] = [];
    for (const input of inputs) {
      try {
        // A synchronous answer (the preparation's) is not put off to a microtask of its own.
        const value = handle(input);
        answers.push({ ok: true, value: value instanceof Promise ? await value : value });
      } catch (err) {
        answers.push({ ok: false, message: err instanceof Error ? err.message : String(err) });
      }
    }
    port.postMessage({ id, answers } satisfies ThreadReply);
  });
  port.postMessage({ ready: true } satisfies ThreadReply);
}
