import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import canonicalize from "canonicalize";
import fc from "fast-check";
import { createSealer } from "../../src/crypto/sealer.ts";
import { canonicalDocument, canonicalMembers, joinMembers, signedPayload } from "../../src/crypto/signer.ts";
import { openDocument, storeDocument, storeMembers } from "../../src/documents/stored.ts";
import { fingerprint, fingerprintOfCanonical, fingerprintWhole } from "../../src/idempotency/fingerprint.ts";
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

test("a document stored from its canonical members opens to what storing it whole opens to", () => {
  const sealer = createSealer([{ kid: "k1", key: Buffer.alloc(32, 7) }]);
  const withSealedNote = (document: Record<string, unknown>) => ({
    ...document,
    ...(document.note === undefined ? { note: "a confidential note" } : {}),
  });
  const agrees = (document: Record<string, unknown>) => {
    const members = canonicalMembers(document);
    // Index-like keys and `__proto__` go to the library; the sign then stores the document whole.
    if (!members) return false;
    const irn = "INV1-ABCD1234-20261122";
    const stored = storeMembers(members, irn, sealer);
    const whole = storeDocument(document, irn, sealer);
    assert.deepEqual(openDocument({ irn, ...stored }, sealer), openDocument({ irn, ...whole }, sealer));
    // The open part is stored as its own canonical form; the sealed part holds the sealed fields.
    const open = JSON.parse(whole.document) as Record<string, unknown>;
    assert.equal(stored.document, canonicalize(open));
    assert.equal(stored.sealed === null, whole.sealed === null);
    return true;
  };
  for (const name of ["invoice-full", "invoice-minimal"] as const)
    assert.ok(agrees(withSealedNote(fixture(name, who))));
  let stored = 0;
  fc.assert(
    fc.property(json.object, fc.boolean(), (document: Record<string, unknown>, withNote: boolean) => {
      if (agrees(withNote ? withSealedNote(document) : document)) stored++;
    }),
    { numRuns: 2000 },
  );
  assert.ok(stored > 500, `${stored} of 2,000 documents stored from their members`);
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

test("an Idempotency-Key's body fingerprint is SHA-256 of the reference RFC 8785 form, fed piecewise", async () => {
  const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
  const batch = {
    invoices: Array.from({ length: 150 }, (_, i) => ({ ...fixture("invoice-full", who), irn: `N${i}` })),
  };
  assert.equal(await fingerprint(batch), sha256(canonicalize(batch) as string));
  // Key order and whitespace do not matter; any change of a value does.
  const reordered = JSON.parse(
    JSON.stringify(Object.fromEntries(Object.entries(fixture("invoice-full", who)).reverse()), null, 2),
  );
  assert.equal(await fingerprint(reordered), await fingerprint(fixture("invoice-full", who)));
  assert.notEqual(await fingerprint({ ...reordered, note: "x" }), await fingerprint(reordered));
  await fc.assert(
    fc.asyncProperty(
      json.value,
      fc.array(json.value, { minLength: 60, maxLength: 140 }),
      async (value, many) => {
        assert.equal(await fingerprint(value), sha256(canonicalize(value) as string));
        const nested = { a: many, b: [many] };
        assert.equal(await fingerprint(nested), sha256(canonicalize(nested) as string));
        // The preparation thread's, in one piece: the same for every body, so a key claimed with
        // one is found again with the other (a body the thread does not read is fingerprinted
        // on the event loop).
        assert.equal(fingerprintWhole(value), sha256(canonicalize(value) as string));
        assert.equal(fingerprintWhole(nested), await fingerprint(nested));
      },
    ),
    { numRuns: 300 },
  );
});

test("a document's members reused from the document it was copied on write from: the same members as made afresh, and the same fingerprint", () => {
  const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
  let reused = 0;
  fc.assert(
    fc.property(
      json.object,
      fc.array(fc.tuple(key, fc.constantFrom("keep", "replace", "drop"), json.value), { maxLength: 8 }),
      (body: Record<string, unknown>, edits) => {
        const members = canonicalMembers(body);
        if (!members) return;
        // The preparation thread's fingerprint from the members is the body's fingerprint.
        assert.equal(fingerprintOfCanonical(joinMembers(members)), fingerprintWhole(body));
        assert.equal(fingerprintOfCanonical(joinMembers(members)), sha256(canonicalize(body) as string));
        // A checked document as validation makes one: a shallow copy, some members replaced or
        // dropped or added, the others the body's very values (or equal ones, where a replacement
        // happens to be the same JSON).
        const checked: Record<string, unknown> = JSON.parse(JSON.stringify({ ...body }));
        for (const name of Object.keys(body)) if (Object.hasOwn(checked, name)) checked[name] = body[name];
        for (const [name, edit, value] of edits) {
          if (name === "__proto__") continue;
          if (edit === "replace") checked[name] = value;
          else if (edit === "drop") delete checked[name];
        }
        const fresh = canonicalMembers(checked);
        const again = canonicalMembers(checked, { of: body, members });
        assert.deepEqual(again, fresh);
        if (fresh?.some(([name]) => Object.hasOwn(body, name) && body[name] === checked[name])) reused++;
      },
    ),
    { numRuns: 2000 },
  );
  assert.ok(reused > 200, `${reused} of 2,000 documents reused members`);
});
