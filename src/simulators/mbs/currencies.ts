import { createRequire } from "node:module";

// [recorded] MBS's `currencies` list: the fields of the widely used "Common-Currency" table (118
// entries in the Swagger capture, 117 in the recorded session). The `currency-list` package carries
// that table's data in its en_US locale, newer than MBS's copy: 119 entries, with BYN and ZWL where
// MBS has BYR, and 11 names or native symbols of today (e.g. "British Pound", "₽.") where MBS has
// the older ones ("British Pound Sterling", "руб."). The built-in list when the simulator is given no
// folder of the authority's lists (resource-files.ts); documents are checked against the list served.

export type Currency = {
  code: string;
  name: string;
  name_plural: string;
  symbol: string;
  symbol_native: string;
  decimal_digits: number;
  rounding: number;
};

let table: readonly Currency[] | undefined;

/**
 * The package's table, read when first asked for: the package is one JSON file of every locale
 * (11 MB, about 0.2 s of CPU to parse), which a simulator given the authority's own lists never
 * needs.
 */
export function builtInCurrencies(): readonly Currency[] {
  // The package is CommonJS with an `exports.default`, which an ESM default import does not unwrap.
  const currencyList = (
    createRequire(import.meta.url)("currency-list") as {
      default: { getAll(locale: string): Record<string, Currency> };
    }
  ).default;
  table ??= Object.values(currencyList.getAll("en_US"))
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
  return table;
}
