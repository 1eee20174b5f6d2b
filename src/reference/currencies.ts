import { createRequire } from "node:module";

// The package is CommonJS with an `exports.default`, which ESM default-import does not unwrap.
const currencyList = (
  createRequire(import.meta.url)("currency-list") as {
    default: { getAll(locale: string): Record<string, Currency> };
  }
).default;

export type Currency = {
  symbol: string;
  name: string;
  symbol_native: string;
  decimal_digits: number;
  rounding: number;
  code: string;
  name_plural: string;
};

export const CURRENCIES: readonly Currency[] = Object.values(currencyList.getAll("en_US"))
  .map((c) => ({
    symbol: c.symbol,
    name: c.name,
    symbol_native: c.symbol_native,
    decimal_digits: c.decimal_digits,
    rounding: c.rounding,
    code: c.code,
    name_plural: c.name_plural,
  }))
  .sort((a, b) => a.code.localeCompare(b.code));
