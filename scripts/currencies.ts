/*
 * `npm run currencies`: writes src/reference/currencies.json, the `currency-list` package's English
 * (en_US) table in the fields API v1's currencies list answers, sorted by code.
 *
 * The package is one JSON file of every locale's table (11 MB): parsed where the service starts, it
 * cost each process and thread that checks or renders amounts about 0.2 s of CPU, for 22 kB of it.
 * (The MBS simulator, which imports nothing of the service, reads the package when it first serves
 * its built-in list.)
 * test/reference/currencies.test.ts fails when the file is not this script's output.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { builtInCurrencies } from "../src/simulators/mbs/currencies.ts";

export const CURRENCIES_JSON = fileURLToPath(new URL("../src/reference/currencies.json", import.meta.url));

/**
 * The table as the package has it today, as the file's text: the MBS simulator's built-in list, which
 * reads the package's English table in these fields.
 */
export function currencyTable(): string {
  return `${JSON.stringify(builtInCurrencies(), null, 2)}\n`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  fs.writeFileSync(CURRENCIES_JSON, currencyTable());
  console.log(`wrote ${path.relative(process.cwd(), CURRENCIES_JSON)}`);
}
