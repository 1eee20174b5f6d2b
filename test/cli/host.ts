/*
 * A process that runs `einvoice` commands one after another, for the tests about what a command
 * prints and exits with (run.ts's `cli`). Each command is the real program (src/cli/index.ts, as
 * bin/einvoice.js runs it) with its own argv and environment, its writes to stdout and stderr and
 * its exit code captured; what the process start would add, each command loading the whole service
 * again (a few seconds), is paid once. A command must also leave nothing running, as a process of
 * its own would not exit otherwise: what is still open after it is reported, and the host retired.
 */
import { fileURLToPath } from "node:url";

export type HostRequest = { id: number; args: string[]; env: Record<string, string | undefined> };
export type HostReply = { id: number; code: number; stdout: string; stderr: string; leaked: string[] };

const ENTRY = new URL("../../src/cli/index.ts", import.meta.url).href;
const BIN = fileURLToPath(new URL("../../bin/einvoice.js", import.meta.url));

const ownEnv = { ...process.env };
const write = { stdout: process.stdout.write, stderr: process.stderr.write };
let runs = 0;

function setEnv(env: Record<string, string | undefined>): void {
  for (const k of Object.keys(process.env)) delete process.env[k];
  for (const [k, v] of Object.entries(env)) if (v !== undefined) process.env[k] = v;
}

/** Resources in `after` beyond those in `before`, by type (a multiset difference). */
function extra(before: string[], after: string[]): string[] {
  const left = [...before];
  return after.filter((r) => {
    const i = left.indexOf(r);
    if (i === -1) return true;
    left.splice(i, 1);
    return false;
  });
}

async function runOne(request: HostRequest): Promise<HostReply> {
  const before = process.getActiveResourcesInfo();
  const out: string[] = [];
  const err: string[] = [];
  const capture =
    (into: string[]) =>
    (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      into.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
      const done = rest.find((r) => typeof r === "function") as (() => void) | undefined;
      done?.();
      return true;
    };
  setEnv(request.env);
  process.argv = [process.execPath, BIN, ...request.args];
  process.exitCode = undefined;
  process.stdout.write = capture(out) as typeof process.stdout.write;
  process.stderr.write = capture(err) as typeof process.stderr.write;
  try {
    // A new instance of the entry module each time (its dependencies stay loaded): it parses
    // process.argv and runs the command when evaluated, and settles when the command has.
    runs += 1;
    await import(`${ENTRY}?run=${runs}`);
  } catch (e) {
    err.push(`einvoice host: ${String((e as Error)?.stack ?? e)}\n`);
    process.exitCode = 1;
  } finally {
    process.stdout.write = write.stdout;
    process.stderr.write = write.stderr;
    setEnv(ownEnv);
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  // Closing sockets and files completes a moment after the command's last await.
  let leaked = extra(before, process.getActiveResourcesInfo());
  for (let waited = 0; leaked.length > 0 && waited < 2000; waited += 20) {
    // Unreferenced, so this wait is not among the resources it looks at.
    await new Promise((resolve) => setTimeout(resolve, 20).unref());
    leaked = extra(before, process.getActiveResourcesInfo());
  }
  return { id: request.id, code, stdout: out.join(""), stderr: err.join(""), leaked };
}

// One command at a time: process.env, argv and the streams are the process's.
let queue = Promise.resolve();
process.on("message", (request: HostRequest) => {
  queue = queue.then(async () => {
    process.send?.(await runOne(request));
  });
});
// The test process went away: so does its host.
process.on("disconnect", () => process.exit(0));
