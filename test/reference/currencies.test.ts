import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { CURRENCIES_JSON, currencyTable } from "../../scripts/currencies.ts";
import { CURRENCIES } from "../../src/reference/currencies.ts";
import { builtInCurrencies } from "../../src/simulators/mbs/currencies.ts";

test("the currencies kept in src/reference/currencies.json are the currency-list package's English table (npm run currencies)", () => {
  assert.equal(fs.readFileSync(CURRENCIES_JSON, "utf8"), currencyTable());
  const codes = CURRENCIES.map((c) => c.code);
  assert.equal(codes.length, 119);
  assert.deepEqual(codes, [...codes].sort());
  assert.ok(codes.includes("NGN") && codes.includes("BYN") && !codes.includes("BYR"));
  const naira = CURRENCIES.find((c) => c.code === "NGN");
  assert.deepEqual(naira && Object.keys(naira), [
    "symbol",
    "name",
    "symbol_native",
    "decimal_digits",
    "rounding",
    "code",
    "name_plural",
  ]);
  assert.equal(naira?.decimal_digits, 2);
  // The simulator's built-in list reads the package itself: it imports nothing of the service.
  assert.deepEqual(
    builtInCurrencies().map((c) => c.code),
    codes,
  );
});
