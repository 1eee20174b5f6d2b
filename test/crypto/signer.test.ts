import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { test } from "node:test";
import canonicalize from "canonicalize";
import fc from "fast-check";
import { canonicalDocument, createSigner, verifySignature } from "../../src/crypto/signer.ts";

const pem = () =>
  generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();

test("a signature made from a document's canonical form verifies over the RFC 8785 text of the whole record", () => {
  const signer = createSigner([pem()]);
  fc.assert(
    fc.property(
      fc.record({
        irn: fc.string({ minLength: 1, maxLength: 40 }),
        business_id: fc.uuid(),
        signed_at: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        previous_hash: fc.option(fc.stringMatching(/^[0-9a-f]{64}$/), { nil: null }),
      }),
      fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue(), { maxKeys: 12 }),
      (fields, document) => {
        const signature = signer.signCanonical(fields, canonicalDocument(document));
        // The payload as a verifier rebuilds it: the reference library, not this project's code.
        const payload = Buffer.from(canonicalize({ ...fields, document }) as string, "utf8");
        assert.equal(verifySignature(payload, signature, signer.jwks()), null);
      },
    ),
    { numRuns: 200 },
  );
});
