import assert from "node:assert/strict";
import { test } from "node:test";
import canonicalize from "canonicalize";
import fc from "fast-check";
import { canonicalDocument, signedPayload } from "../../src/signing/signer.ts";
import { fixture } from "../helpers.ts";

const who = { business_id: "0d6f7a4e-3c1b-4f5e-9a2d-8b7c6e5f4a3b", service_id: "ABCD1234" };

// Keys that sort differently as code units and as JavaScript enumerates them, and keys that are
// special to objects.
const key = fc.oneof(
  fc.string(),
  fc.constantFrom("10", "9", "0", "01", "4294967295", "__proto__", "constructor", "é", "\u{1F600}", "Z", "a"),
);
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.string({ unit: "grapheme" }),
    fc.array(tie("value"), { maxLength: 4 }),
    tie("object"),
  ),
  // Parsed JSON, as the service sees it: `__proto__` is an own key, not the prototype.
  object: fc
    .array(fc.tuple(key, tie("value")), { maxLength: 6 })
    .map((entries) =>
      JSON.parse(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")}}`),
    ),
}));

test("the canonical form is the reference RFC 8785 library's, byte for byte, for any JSON object", () => {
  for (const name of ["invoice-full", "invoice-minimal"] as const) {
    const document = fixture(name, who);
    assert.equal(canonicalDocument(document), canonicalize(document));
  }
  fc.assert(
    fc.property(json.object, (document: Record<string, unknown>) => {
      assert.equal(canonicalDocument(document), canonicalize(document));
    }),
    { numRuns: 2000 },
  );
});

test("the signed payload is RFC 8785 of exactly the signed fields", () => {
  fc.assert(
    fc.property(
      json.object,
      fc.string(),
      fc.option(fc.stringMatching(/^[0-9a-f]{64}$/)),
      (document: Record<string, unknown>, irn: string, previous: string | null) => {
        const fields = {
          irn,
          business_id: who.business_id,
          signed_at: "2026-11-22T10:00:00.000Z",
          previous_hash: previous,
          document,
        };
        assert.equal(signedPayload(fields).toString("utf8"), canonicalize(fields));
      },
    ),
    { numRuns: 1000 },
  );
});
