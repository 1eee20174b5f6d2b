import { parentPort, workerData } from "node:worker_threads";
import { type PreparationInput, type PreparationKeys, preparation } from "./preparation.ts";

const prepare = preparation(workerData as PreparationKeys);

parentPort?.on("message", ({ id, inputs }: { id: number; inputs: PreparationInput[] }) => {
  try {
    parentPort?.postMessage({ id, results: inputs.map(prepare) });
  } catch (err) {
    parentPort?.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
