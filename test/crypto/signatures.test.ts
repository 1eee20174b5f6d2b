import assert from "node:assert/strict";
import { createHash, createPublicKey, verify } from "node:crypto";
import { test } from "node:test";
import canonicalize from "canonicalize";
import pino from "pino";
import { loadConfig } from "../../src/config.ts";
import { rotateSandboxKey } from "../../src/crypto/keyring.ts";
import { verifyRecord } from "../../src/crypto/verify-record.ts";
import { createContext, createServer } from "../../src/main.ts";
import { build, fixture, freshInvoice, type Json, tenant } from "../helpers.ts";

const API = "/api/v1/einvoice";
type Jwks = { keys: { kty: string; crv: string; x: string; kid: string }[] };
type Record = Json & {
  irn: string;
  business_id: string;
  signed_at: string;
  previous_hash: string | null;
  document: Json;
  signature: { alg: string; kid: string; hash: string; value: string };
};

/** What a third party does with nothing but the record and the JWK Set: no code of this project. */
function independentlyVerify(record: Record, jwks: Jwks): boolean {
  const { irn, business_id, signed_at, previous_hash, document } = record;
  const payload = Buffer.from(
    canonicalize({ irn, business_id, signed_at, previous_hash, document }) as string,
    "utf8",
  );
  if (createHash("sha256").update(payload).digest("hex") !== record.signature.hash) return false;
  const jwk = jwks.keys.find((k) => k.kid === record.signature.kid);
  if (!jwk) return false;
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: jwk.x }, format: "jwk" });
  return verify(null, payload, key, Buffer.from(record.signature.value, "base64url"));
}

test("the JWK Set is public and a record verifies with it alone; one changed character breaks it", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = fixture("invoice-full", a);
  await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: invoice });

  const jwksRes = await app.inject({ url: "/.well-known/jwks.json" });
  assert.equal(jwksRes.statusCode, 200);
  const jwks = jwksRes.json() as Jwks;
  assert.equal(jwks.keys.length, 1);
  const [key] = jwks.keys;
  assert.equal(key?.kty, "OKP");
  assert.equal(key?.crv, "Ed25519");
  assert.match(key?.kid ?? "", /^[A-Za-z0-9_-]{43}$/);
  assert.equal(JSON.stringify(jwks).includes('"d"'), false, "no private part is published");

  const record = (await app.inject({ url: `${API}/${String(invoice.irn)}`, headers: a.headers })).json()
    .data as Record;
  assert.equal(record.signature.alg, "EdDSA");
  assert.equal(record.signature.kid, key?.kid);
  assert.equal(record.previous_hash, null, "the first invoice of a business starts its chain");
  assert.deepEqual(record.document, invoice, "the signed document is the invoice as submitted, plaintext");
  assert.equal(independentlyVerify(record, jwks), true);
  assert.equal(verifyRecord(record, jwks).valid, true);

  const tampered = structuredClone(record);
  tampered.document.payment_terms_note = String(record.document.payment_terms_note).replace(
    "Net 30",
    "Net 90",
  );
  assert.equal(independentlyVerify(tampered, jwks), false);
  assert.match(verifyRecord(tampered, jwks).reason ?? "", /hash/);
  const otherDate = { ...structuredClone(record), signed_at: record.signed_at.replace(/.$/, "Y") };
  assert.equal(verifyRecord(otherDate, jwks).valid, false);
  const forged = {
    ...structuredClone(record),
    signature: {
      ...record.signature,
      value: record.signature.value.replace(/^./, (c) => (c === "A" ? "B" : "A")),
    },
  };
  assert.match(verifyRecord(forged, jwks).reason ?? "", /signature/);
});

test("consecutive invoices of a business link through previous_hash; businesses have separate chains", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const b = await tenant(ctx);
  const irns: string[] = [];
  for (let i = 0; i < 3; i++) {
    const invoice = freshInvoice(a, "invoice-minimal");
    irns.push(String(invoice.irn));
    assert.equal(
      (await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: invoice }))
        .statusCode,
      200,
    );
  }
  const otherFirst = freshInvoice(b, "invoice-minimal");
  await app.inject({ method: "POST", url: `${API}/sign-transmit`, headers: b.headers, payload: otherFirst });
  const records = await Promise.all(
    irns.map(
      async (irn) => (await app.inject({ url: `${API}/${irn}`, headers: a.headers })).json().data as Record,
    ),
  );
  assert.equal(records[0]?.previous_hash, null);
  assert.equal(records[1]?.previous_hash, records[0]?.signature.hash);
  assert.equal(records[2]?.previous_hash, records[1]?.signature.hash);
  const bRecord = (await app.inject({ url: `${API}/${String(otherFirst.irn)}`, headers: b.headers })).json()
    .data as Record;
  assert.equal(bRecord.previous_hash, null, "business B's chain is its own");
  assert.deepEqual(await ctx.audit.verify(), { checked: 4, broken: [] });
});

test("concurrent signs for one business still form a single unbroken chain", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoices = Array.from({ length: 40 }, () => freshInvoice(a, "invoice-minimal"));
  const results = await Promise.all(
    invoices.map((payload, i) =>
      app.inject({
        method: "POST",
        url: `${API}/${i % 2 === 0 ? "sign" : "sign-transmit"}`,
        headers: a.headers,
        payload,
      }),
    ),
  );
  assert.deepEqual(new Set(results.map((r) => r.statusCode)), new Set([200]));
  const result = await ctx.audit.verify(a.business_id);
  assert.deepEqual(result, { checked: 40, broken: [] });
  const hashes = new Set<string>();
  const previous = new Set<string | null>();
  for (const invoice of invoices) {
    const record = (await app.inject({ url: `${API}/${String(invoice.irn)}`, headers: a.headers })).json()
      .data as Record;
    hashes.add(record.signature.hash);
    previous.add(record.previous_hash);
  }
  assert.equal(previous.size, 40, "no two invoices claim the same predecessor: the chain does not fork");
  assert.equal([...previous].filter((p) => p !== null && !hashes.has(p)).length, 0);
});

test("audit verify finds a tampered row, a forged signature and a removed tail", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoices = Array.from({ length: 4 }, () => freshInvoice(a, "invoice-full"));
  for (const payload of invoices)
    await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload });
  assert.deepEqual(await ctx.audit.verify(), { checked: 4, broken: [] });

  // Tampering goes straight to the tables, past every rule of the service.
  const tamper = (irn: string, change: { document?: string; signature?: string | null }) =>
    ctx.db.updateTable("invoices").set(change).where("irn", "=", irn).execute();
  const [first, second, , last] = invoices.map((i) => String(i.irn)) as [string, string, string, string];
  const original = await ctx.db
    .selectFrom("invoices")
    .select(["document", "signature"])
    .where("irn", "=", second)
    .executeTakeFirstOrThrow();
  await tamper(second, { document: original.document.replace("Okafor", "0kafor") });
  let result = await ctx.audit.verify();
  assert.deepEqual(
    result.broken.map((b) => [b.irn, b.reason]),
    [[second, "hash does not match the payload"]],
  );

  await tamper(second, { document: original.document });
  const forged = await ctx.db
    .selectFrom("invoices")
    .select("signature")
    .where("irn", "=", first)
    .executeTakeFirstOrThrow();
  await tamper(second, { signature: forged.signature });
  result = await ctx.audit.verify(a.business_id);
  assert.deepEqual(
    result.broken.map((b) => [b.irn, b.reason]),
    [[second, "signature does not verify"]],
  );

  await tamper(second, { signature: original.signature });
  assert.deepEqual(await ctx.audit.verify(), { checked: 4, broken: [] }, "restored, the chain holds again");
  await ctx.db.deleteFrom("invoice_events").where("irn", "=", last).execute();
  await ctx.db.deleteFrom("invoices").where("irn", "=", last).execute();
  result = await ctx.audit.verify();
  assert.equal(result.checked, 3);
  assert.equal(result.broken.length, 1, JSON.stringify(result.broken));
  assert.match(result.broken[0]?.reason ?? "", /chain head/);
});

test("signing keys rotate: new invoices use the new key, old records still verify from the published set", async (t) => {
  const { app, ctx, dir, databaseUrl } = await build(t);
  const a = await tenant(ctx);
  const before = freshInvoice(a, "invoice-minimal");
  await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: before });
  const oldRecord = (await app.inject({ url: `${API}/${String(before.irn)}`, headers: a.headers })).json()
    .data as Record;
  const oldQr = oldRecord.qr_code as string;

  rotateSandboxKey(dir, "signing");
  rotateSandboxKey(dir, "qr");
  const ctx2 = await createContext(
    loadConfig({
      EINVOICE_DATABASE_URL: databaseUrl,
      EINVOICE_DATA_DIR: dir,
      EINVOICE_LOG_LEVEL: "silent",
    }),
  );
  const app2 = await createServer(ctx2, pino({ level: "silent" }));
  t.after(async () => {
    await app2.close();
    await ctx2.close();
  });
  const after = freshInvoice(a, "invoice-minimal");
  await app2.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: after });
  const newRecord = (await app2.inject({ url: `${API}/${String(after.irn)}`, headers: a.headers })).json()
    .data as Record;
  const jwks = (await app2.inject({ url: "/.well-known/jwks.json" })).json() as Jwks;
  assert.equal(jwks.keys.length, 2);
  assert.notEqual(newRecord.signature.kid, oldRecord.signature.kid);
  assert.equal(jwks.keys[0]?.kid, newRecord.signature.kid, "the current key is listed first");
  assert.equal(independentlyVerify(oldRecord, jwks), true);
  assert.equal(independentlyVerify(newRecord, jwks), true);
  assert.equal(newRecord.previous_hash, oldRecord.signature.hash, "the chain continues across the rotation");
  assert.deepEqual(await ctx2.audit.verify(), { checked: 2, broken: [] });
  const validated = await app2.inject({
    method: "POST",
    url: `${API}/qr-code/validate`,
    headers: a.headers,
    payload: { code: oldQr },
  });
  assert.equal(validated.statusCode, 200, "a QR code printed before the QR key rotation still reads");
});
