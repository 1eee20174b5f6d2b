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
import { createRequire } from "node:module";

export const CURRENCIES_JSON = new URL("../src/reference/currencies.json", import.meta.url);

/** The table as the package has it today, as the file's text. */
export function currencyTable() {
  const { default: currencyList } = createRequire(import.meta.url)("currency-list");
  const rows = Object.values(currencyList.getAll("en_US"))
    .map((c) => ({
      code: c.code,
      name: c.name,
      name_plural: c.name_plural,
      symbol: c.symbol,
      symbol_native: c.symbol_native,
      decimal_digits: c.decimal_digits,
      rounding: c.rounding,
    }))
    .sort((a, b) => a.code.localeCompare(b.code));
  return `${JSON.stringify(rows, null, 2)}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  fs.writeFileSync(CURRENCIES_JSON, currencyTable());
  console.log(`wrote ${CURRENCIES_JSON.pathname}`);
}
