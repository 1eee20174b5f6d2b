import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { test } from "node:test";
import { createSealer } from "../../../src/crypto/sealer.ts";
import { canonicalDocument } from "../../../src/crypto/signer.ts";
import { openDocument } from "../../../src/documents/stored.ts";
import { validateInvoice } from "../../../src/documents/validation/validation.ts";
import { fingerprint } from "../../../src/idempotency/fingerprint.ts";
import { type CheckAnswer, preparation } from "../../../src/invoices/registration/preparation.ts";
import { fixture } from "../../helpers.ts";

const who = { business_id: "5b7d3d2e-8f7a-4c1e-9b1a-2f8e6c4d1a00", service_id: "AB12CD34" };
const business = { id: who.business_id, service_id: who.service_id };
const dataKeys = [{ kid: "k1", key: Buffer.alloc(32, 3) }];
const { publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const prepare = preparation({
  dataKeys,
  qrPublicKeyPem: publicKey.export({ type: "spki", format: "pem" }) as string,
});
const sealer = createSealer(dataKeys);

type Doc = Record<string, unknown>;
/** Documents the check changes in different members, copied on write from the body (validation.ts). */
const variants: Array<[string, (doc: Doc) => Doc]> = [
  ["as it is", (doc) => doc],
  ["its business id in upper case", (doc) => ({ ...doc, business_id: who.business_id.toUpperCase() })],
  ["without invoice_kind", ({ invoice_kind: _, ...doc }) => doc],
  [
    "a line's amount with floating-point noise",
    (doc) => {
      const lines = doc.invoice_line as Doc[];
      const first = lines[0] as Doc;
      const noisy = Number(first.line_extension_amount) + 1e-10;
      return { ...doc, invoice_line: [{ ...first, line_extension_amount: noisy }, ...lines.slice(1)] };
    },
  ],
  [
    "a blank optional text in the customer party",
    (doc) => ({
      ...doc,
      accounting_customer_party: { ...(doc.accounting_customer_party as Doc), email: "   " },
    }),
  ],
];

test("a keyed sign's body canonicalized once: the same fingerprint and the same prepared sign as canonicalized twice", async () => {
  for (const [name, vary] of variants) {
    const text = JSON.stringify(vary(fixture("invoice-full", who) as Doc));
    const job = (withFingerprint: boolean) =>
      prepare({
        check: {
          body: undefined,
          text,
          ctx: { business, strictSupplier: false },
          sign: { certificate: "CERT", signedAt: "2026-12-07T10:00:00.000Z" },
          owner: who.business_id,
          fingerprint: withFingerprint,
        },
      }) as CheckAnswer;
    const [keyed, plain] = [job(true), job(false)];
    assert.ok(keyed.prepared && plain.prepared, `${name}: prepared`);
    assert.equal(
      keyed.fingerprint,
      await fingerprint(JSON.parse(text)),
      `${name}: the event loop's fingerprint`,
    );
    // What the check made of the body, canonicalized afresh.
    const checked = validateInvoice(JSON.parse(text), { business }).document as Doc;
    if (name !== "as it is")
      assert.notEqual(
        canonicalDocument(checked),
        canonicalDocument(JSON.parse(text)),
        `${name}: the check changed it`,
      );
    assert.equal(keyed.prepared.canonical, canonicalDocument(checked), `${name}: the signed form`);
    assert.equal(keyed.prepared.canonical, plain.prepared.canonical, name);
    assert.equal(keyed.prepared.document, plain.prepared.document, `${name}: the stored open part`);
    const irn = String(checked.irn);
    assert.deepEqual(
      openDocument({ irn, document: keyed.prepared.document, sealed: keyed.prepared.sealed }, sealer),
      openDocument({ irn, document: plain.prepared.document, sealed: plain.prepared.sealed }, sealer),
      `${name}: the stored document`,
    );
  }
});
