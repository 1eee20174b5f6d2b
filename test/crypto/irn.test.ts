import assert from "node:assert/strict";
import { test } from "node:test";
import { irnProblem, isRealDate, parseIrn } from "../../src/crypto/irn.ts";

test("IRN parsing: template, service id and a real calendar date", () => {
  assert.deepEqual(parseIrn("INV0001-94ND90NR-20240611"), {
    invoiceNumber: "INV0001",
    serviceId: "94ND90NR",
    date: "2024-06-11",
  });
  assert.match((parseIrn("INV-0001-94ND90NR-20240611") as { error: string }).error, /must look like/);
  assert.match((parseIrn("INV0001-94nd90nr-20240611") as { error: string }).error, /uppercase/);
  assert.match((parseIrn("INV0001-94ND90N-20240611") as { error: string }).error, /8 uppercase/);
  assert.match((parseIrn("INV0001-94ND90NR-20230229") as { error: string }).error, /calendar date/);
  assert.equal(irnProblem("INV0001-94ND90NR-20240229", "94ND90NR"), null, "2024 is a leap year");
  assert.match(irnProblem("INV0001-94ND90NR-20240611", "AAAAAAAA") ?? "", /not this business's service id/);
});

test("real calendar dates", () => {
  for (const d of ["2024-02-29", "2026-12-31", "2000-02-29"]) assert.equal(isRealDate(d), true, d);
  for (const d of [
    "2023-02-29",
    "1900-02-29",
    "2026-04-31",
    "2026-00-10",
    "2026-1-01",
    "20261101",
    "2026-11-01T00:00",
  ]) {
    assert.equal(isRealDate(d), false, d);
  }
});
