import fs from "node:fs";
import type { Command } from "commander";
import { postmanEnvironment } from "../runtime/postman-environment.ts";
import { startMbsSimulator } from "../simulators/mbs/server.ts";
import { print } from "./output.ts";

function wholeNumber(text: string, option: string): number {
  if (!/^\d{1,9}$/.test(text)) throw new Error(`invalid ${option} "${text}": a whole number`);
  return Number(text);
}

/** The environment variable standing for `--resources` when the option is not given. */
export const RESOURCES_VARIABLE = "EINVOICE_MBS_SIMULATOR_RESOURCES";

/**
 * The folder of the authority's reference lists: the option, else the variable (empty is unset, as
 * for every other variable); an option given empty is refused rather than read as "none".
 */
function resourcesFolder(option: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (option !== undefined) {
    if (option.trim() === "") throw new Error('invalid --resources "": the folder of the authority\'s lists');
    return option;
  }
  const variable = env[RESOURCES_VARIABLE];
  return variable === undefined || variable.trim() === "" ? undefined : variable;
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

type SimulateOptions = {
  port: string;
  host: string;
  faults?: string;
  rules?: string;
  servicesCodes?: string;
  resources?: string;
  seed?: string;
  expose?: boolean;
  taxpayers: string;
  inbound: string;
  postmanEnvironment?: string;
};

/** `simulate mbs`: the authority's API, simulated, for connector tests and demos. */
export function simulateCommands(program: Command): void {
  const simulate = program.command("simulate").description("simulators of the services the API talks to");
  simulate
    .command("mbs")
    .description(
      "run a simulator of the authority's MBS e-invoicing API until SIGINT/SIGTERM; prints one JSON line: url, api_key, api_secret, taxpayers (entity_id, business_id, service_id, tin, name, irn_template) and, with --inbound, inbound (irn, business_id, supplier_tin, buyer_tin, transmitted_at)",
    )
    .option("--port <n>", "port to listen on (0 picks a free one)", "8090")
    .option(
      "--host <host>",
      "address to listen on: loopback (127.0.0.1, ::1, localhost) unless --expose",
      "127.0.0.1",
    )
    .option("--expose", "allow a --host beyond loopback (anyone reaching it can use the printed credentials)")
    .option(
      "--faults <spec>",
      "faults, comma-separated name=value: credential|transient|5xx|try_later|duplicate|not_enabled|partial|no_webhook|drop|slow=P (0..1), down=A-B[+C-D] (seconds after start), slow_ms=N",
    )
    .option(
      "--rules <spec>",
      "switches for unsettled MBS rules, comma-separated name=on|off: price_unit_limit, invoice_kind_required, supplier_postal_address_id_required, item_description_required, business_description_min, irn_date_is_issue_date, canceled, documented_vat_path, duplicate_at_validate; confirm_unregistered=404|400; pull_shape=list|documents|items",
    )
    .option("--services-codes <file>", "a JSON file of ISIC Rev. 4 classes served as the services-codes list")
    .option(
      "--resources <dir>",
      `a folder of the authority's reference lists as its sandbox served them (countries.json, currencies.json, invoice-types.json, vat-exemptions.json, services-codes.json), served exactly and checked against; default: ${RESOURCES_VARIABLE}, else the built-in lists`,
    )
    .option(
      "--seed <n>",
      "seed of the taxpayers and fault decisions (default 1) and of the API key and secret, which are random without it",
    )
    .option("--taxpayers <n>", "number of test taxpayers", "4")
    .option(
      "--postman-environment <file>",
      "write a Postman environment for postman/mbs.postman_collection.json: this simulator's URL and credentials, and its first taxpayer",
    )
    .option(
      "--inbound <n>",
      "invoices from other access points' sellers waiting in pull at start, spread over the taxpayers as buyers and over the last 3 days (more while running: POST /_simulator/inbound)",
      "0",
    )
    .action(async (opts: SimulateOptions) => {
      const resourcesDir = resourcesFolder(opts.resources, process.env);
      const sim = await startMbsSimulator({
        port: wholeNumber(opts.port, "--port"),
        host: opts.host,
        ...(opts.expose === true ? { expose: true } : {}),
        ...(opts.seed === undefined ? {} : { seed: wholeNumber(opts.seed, "--seed") }),
        taxpayers: wholeNumber(opts.taxpayers, "--taxpayers"),
        inbound: wholeNumber(opts.inbound, "--inbound"),
        ...(opts.faults === undefined ? {} : { faults: opts.faults }),
        ...(opts.rules === undefined ? {} : { rules: opts.rules }),
        ...(opts.servicesCodes === undefined ? {} : { isicFile: opts.servicesCodes }),
        ...(resourcesDir === undefined ? {} : { resourcesDir }),
      });
      // A diagnostic, so stdout stays the one line scripts read: which lists a connector test meets.
      process.stderr.write(`einvoice: simulate mbs: ${sim.referenceLists}\n`);
      if (opts.postmanEnvironment !== undefined) {
        fs.writeFileSync(opts.postmanEnvironment, mbsPostmanEnvironment(sim), { mode: 0o600 });
      }
      // Exactly these keys, in this order: scripts read the line. `inbound` only when some were made.
      print({
        url: sim.url,
        api_key: sim.api_key,
        api_secret: sim.api_secret,
        taxpayers: sim.taxpayers,
        ...(sim.inbound.length > 0 ? { inbound: sim.inbound } : {}),
      });
      await untilSignal();
      await sim.close();
    });
}

/**
 * The simulator as a Postman environment for postman/mbs.postman_collection.json, whose requests
 * name the same variables an environment of the authority's own sandbox fills: switching between
 * the two is switching environments.
 */
function mbsPostmanEnvironment(sim: Awaited<ReturnType<typeof startMbsSimulator>>): string {
  const [taxpayer] = sim.taxpayers;
  const environment = postmanEnvironment(
    "MBS simulator",
    {
      baseUrl: sim.url,
      api_key: sim.api_key,
      api_secret: sim.api_secret,
      business_id: taxpayer?.business_id ?? "",
      service_id: taxpayer?.service_id ?? "",
      tin: taxpayer?.tin ?? "",
      entity_id: taxpayer?.entity_id ?? "",
    },
    "5c0f7d1e-2a4b-4e8f-b1d3-93a6c2e7f804",
  );
  return `${JSON.stringify(environment, null, 2)}\n`;
}
