import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { createSealer, freshNonce } from "../../src/crypto/sealer.ts";

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

test("each sealed value has a nonce of its own, across refills of the nonces' pool", () => {
  const sealer = createSealer([{ kid: "k1", key: randomBytes(32) }]);
  // 2,000 values take the pool's 341 nonces about six times over.
  const nonces = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const sealed = sealer.seal("Net 30", `IRN-${i}`);
    const iv = sealed.split(".")[2] ?? "";
    assert.equal(Buffer.from(iv, "base64url").length, 12);
    nonces.add(iv);
    assert.equal(sealer.open(sealed, `IRN-${i}`), "Net 30");
  }
  assert.equal(nonces.size, 2000, "no nonce repeats");
  // A nonce handed out keeps its bytes after the pool is refilled.
  const first = freshNonce();
  const kept = Buffer.from(first);
  for (let i = 0; i < 1000; i++) freshNonce();
  assert.deepEqual(first, kept);
});
