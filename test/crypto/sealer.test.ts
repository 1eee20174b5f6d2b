import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { createSealer } from "../../src/crypto/sealer.ts";

test("sealed values open only with the same context, and after key rotation", () => {
  const k1 = { kid: "k1", key: randomBytes(32) };
  const k2 = { kid: "k2", key: randomBytes(32) };
  const old = createSealer([k1]);
  const sealed = old.seal("Net 30", "IRN-A");
  assert.ok(!sealed.includes("Net 30"));
  assert.equal(old.open(sealed, "IRN-A"), "Net 30");
  assert.throws(() => old.open(sealed, "IRN-B"));
  const rotated = createSealer([k2, k1]);
  assert.equal(rotated.open(sealed, "IRN-A"), "Net 30", "old rows stay readable");
  assert.ok(rotated.seal("x", "c").startsWith("v1.k2."), "new rows use the first key");
  assert.throws(() => createSealer([k2]).open(sealed, "IRN-A"), /k1/);
  const tampered = `${sealed.slice(0, -2)}${sealed.endsWith("A") ? "B" : "A"}`;
  assert.throws(() => old.open(tampered, "IRN-A"));
});
