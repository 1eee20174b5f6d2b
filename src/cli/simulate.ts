import type { Command } from "commander";
import { startMbsSimulator } from "../simulators/mbs/server.ts";
import { print } from "./output.ts";

function wholeNumber(text: string, option: string): number {
  if (!/^\d{1,9}$/.test(text)) throw new Error(`invalid ${option} "${text}": a whole number`);
  return Number(text);
}

/** Resolves on the first SIGINT or SIGTERM, which then no longer ends the process by itself. */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve(signal);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

type SimulateOptions = { port: string; host: string; faults?: string; seed: string; taxpayers: string };

/** `simulate mbs`: the authority's API, simulated, for connector tests and demos. */
export function simulateCommands(program: Command): void {
  const simulate = program.command("simulate").description("simulators of the services the API talks to");
  simulate
    .command("mbs")
    .description(
      "run a simulator of the authority's MBS e-invoicing API until SIGINT/SIGTERM; prints one JSON line: url, api_key, api_secret, taxpayers",
    )
    .option("--port <n>", "port to listen on (0 picks a free one)", "8090")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option(
      "--faults <spec>",
      "faults, comma-separated name=value: transient|slow|5xx|drop|duplicate|not_enabled|partial|credential=P (0..1), down=A-B[+C-D] (seconds after start), slow_ms=N",
    )
    .option("--seed <n>", "seed of the credentials, taxpayers and fault decisions", "1")
    .option("--taxpayers <n>", "number of test taxpayers", "4")
    .action(async (opts: SimulateOptions) => {
      const sim = await startMbsSimulator({
        port: wholeNumber(opts.port, "--port"),
        host: opts.host,
        seed: wholeNumber(opts.seed, "--seed"),
        taxpayers: wholeNumber(opts.taxpayers, "--taxpayers"),
        ...(opts.faults === undefined ? {} : { faults: opts.faults }),
      });
      // Exactly these keys, in this order: scripts read the line.
      print({ url: sim.url, api_key: sim.api_key, api_secret: sim.api_secret, taxpayers: sim.taxpayers });
      await untilSignal();
      await sim.close();
    });
}
