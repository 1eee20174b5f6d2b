import { SingleBar } from "cli-progress";
import { loadConfig } from "../config.ts";
import { type Context, createContext } from "../main.ts";

/**
 * Every command prints exactly one JSON object on stdout (but `keys generate --env`, whose lines are
 * an .env file's); diagnostics go to stderr.
 */
export function print(result: unknown): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** Runs a command's work against the configured service and prints what it returns. */
export async function withContext<T>(work: (ctx: Context) => Promise<T>): Promise<void> {
  const ctx = await createContext(loadConfig());
  try {
    print(await work(ctx));
  } finally {
    await ctx.close();
  }
}

/** A progress bar on stderr, only when a person watches it: stdout stays one JSON object. */
export function progress(label: string) {
  if (!process.stderr.isTTY) return undefined;
  const bar = new SingleBar({
    format: `${label} [{bar}] {value}/{total}`,
    stream: process.stderr,
    hideCursor: true,
  });
  let started = false;
  return {
    update(done: number, total: number) {
      if (!started) {
        bar.start(total, 0);
        started = true;
      }
      bar.update(done);
    },
    stop: () => started && bar.stop(),
  };
}
