import assert from "node:assert/strict";
import { test } from "node:test";
import { lgaCode } from "../../src/reference/lgas.ts";

test("LGA codes: the rule reproduces the known codes and resolves clashes deterministically", () => {
  const none = new Set<string>();
  assert.equal(lgaCode("Aba North", none), "ANO");
  assert.equal(lgaCode("Aba South", none), "ASO");
  assert.equal(lgaCode("Arochukwu", none), "ARO");
  assert.equal(lgaCode("Bende", none), "BEN");
  assert.equal(lgaCode("Isiala Ngwa North", none), "INN");
  assert.equal(lgaCode("Urue-Offong/Oruko", none), "UOO");
  assert.equal(lgaCode("Jama'are", none), "JAM");
  assert.equal(lgaCode("Aba North", new Set(["ANO"])), "ABA");
});
