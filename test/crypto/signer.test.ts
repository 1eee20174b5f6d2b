import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { test } from "node:test";
import fc from "fast-check";
import {
  canonicalDocument,
  createSigner,
  signedPayloadOf,
  verifySignature,
} from "../../src/crypto/signer.ts";

const pem = () =>
  generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();

test("a signature worked out off the event loop is byte for byte the one worked out on it, and verifies", async () => {
  const signer = createSigner([pem()]);
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        irn: fc.string({ minLength: 1, maxLength: 40 }),
        business_id: fc.uuid(),
        signed_at: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        previous_hash: fc.option(fc.stringMatching(/^[0-9a-f]{64}$/), { nil: null }),
      }),
      fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue(), { maxKeys: 12 }),
      async (fields, document) => {
        const canonical = canonicalDocument(document);
        const onLoop = signer.signCanonical(fields, canonical);
        const offLoop = signer.signCanonicalOffLoop(fields, canonical);
        assert.equal(offLoop.hash, onLoop.hash);
        assert.equal(offLoop.kid, onLoop.kid);
        const value = await offLoop.value;
        assert.equal(value, onLoop.value);
        const verdict = verifySignature(
          signedPayloadOf(fields, canonical),
          { ...offLoop, value },
          signer.jwks(),
        );
        assert.equal(verdict, null);
      },
    ),
    { numRuns: 200 },
  );
});

test("signatures asked for together each sign their own payload", async () => {
  const signer = createSigner([pem()]);
  const fields = { business_id: "b", signed_at: "2026-01-01T00:00:00.000Z", previous_hash: null };
  const pending = Array.from({ length: 32 }, (_, i) =>
    signer.signCanonicalOffLoop({ ...fields, irn: `INV${i}` }, `{"n":${i}}`),
  );
  const values = await Promise.all(pending.map((p) => p.value));
  values.forEach((value, i) => {
    assert.equal(value, signer.signCanonical({ ...fields, irn: `INV${i}` }, `{"n":${i}}`).value);
  });
  assert.equal(new Set(values).size, 32);
});
