import assert from "node:assert/strict";
import { test } from "node:test";
import { amountOf, MAX_AMOUNT_TEXT } from "../../src/inbox/amount.ts";

test("an amount received is kept as its exact decimal value, never cut into another number", () => {
  const cases: Array<[unknown, string | null, string?]> = [
    [693375, "693375"],
    [1500000.5, "1500000.5"],
    ["1500000.00", "1500000.00"],
    [`${"0".repeat(39)}1500000.00`, "1500000.00"],
    [`${"0".repeat(5000)}7`, "7"],
    ["  +0042.50 ", "42.50"],
    ["-12.30", "-12.30"],
    ["-0.00", "0.00"],
    ["000", "0"],
    [".5", "0.5"],
    ["5.", "5"],
    [1e21, `1${"0".repeat(21)}`],
    ["1.5E6", "1500000"],
    [1.5e-7, "0.00000015"],
    ["2.50e1", "25.0"],
    [`1${"0".repeat(39)}`, `1${"0".repeat(39)}`],
    [`1${"0".repeat(40)}`, null, "too_long"],
    [`1${"0".repeat(60)}.00`, null, "too_long"],
    [`0.${"1".repeat(60)}`, null, "too_long"],
    [1e300, null, "too_long"],
    ["1e999999999999999999999", null, "too_long"],
    ["9e-400", null, "too_long"],
    ["1,500,000.00", null, "not_decimal"],
    ["NGN 5", null, "not_decimal"],
    [".", null, "not_decimal"],
    ["-", null, "not_decimal"],
    ["1e", null, "not_decimal"],
    ["0x10", null, "not_decimal"],
    [Number.NaN, null, "not_decimal"],
    [Number.POSITIVE_INFINITY, null, "not_decimal"],
    [undefined, null],
    [null, null],
    ["   ", null],
    [true, null],
    [{ value: 5 }, null],
  ];
  for (const [value, kept, problem] of cases) {
    const got = amountOf(value);
    const label = typeof value === "string" ? JSON.stringify(value.slice(0, 60)) : String(value);
    assert.equal(got.kept, kept, label);
    assert.equal(got.problem, problem, label);
    if (got.kept !== null) assert.ok(got.kept.length <= MAX_AMOUNT_TEXT, label);
  }
});

test("a hostile amount costs little", () => {
  const started = performance.now();
  for (const value of [`${"1".repeat(1_000_000)}.x`, `1e${"9".repeat(100_000)}`, "0".repeat(1_000_000)])
    amountOf(value);
  assert.ok(performance.now() - started < 2000);
});
