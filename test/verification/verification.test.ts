import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { compactVerify, createLocalJWKSet } from "jose";
import pino from "pino";
import { loadConfig } from "../../src/config.ts";
import { rotateSandboxKey } from "../../src/crypto/keyring.ts";
import { createSigner } from "../../src/crypto/signer.ts";
import { readToken, tokenOfText, type VerificationClaims } from "../../src/crypto/verification-token.ts";
import { createContext, createServer } from "../../src/main.ts";
import { decodeQrImage } from "../../src/qr/qr-image-decoder.ts";
import { parseImageDataUrl } from "../../src/qr/qr-image-guard.ts";
import { cleanEnv, cli } from "../cli/run.ts";
import { build, fixture, freshInvoice, type Json, tempDir, tenant } from "../helpers.ts";

const API = "/api/v1/einvoice";
type Jwks = { keys: Array<{ kid: string; kty: "OKP"; crv: "Ed25519"; x: string; alg: "EdDSA"; use: "sig" }> };

/** A signed invoice of a fresh business, its full record and the served JWK Set. */
async function signed(t: test.TestContext, env: Record<string, string> = {}) {
  const service = await build(t, env);
  const who = await tenant(service.ctx, { tin: "31845560-0001" });
  const doc = freshInvoice(who);
  const res = await service.app.inject({
    method: "POST",
    url: `${API}/sign`,
    headers: who.headers,
    payload: doc,
  });
  assert.equal(res.statusCode, 200, res.body);
  const irn = String(doc.irn);
  const record = (await service.app.inject({ url: `${API}/${irn}`, headers: who.headers })).json()
    .data as Json & {
    verification_qr: string;
    signature: { kid: string; hash: string };
  };
  const jwks = (await service.app.inject({ url: "/.well-known/jwks.json" })).json() as Jwks;
  return { ...service, who, doc, irn, record, jwks };
}

test("the verification token says the IRN, seller TIN, issue date, payable amount, currency and signed hash, and verifies with jose", async (t) => {
  const { record, jwks, irn, doc } = await signed(t);
  const token = record.verification_qr;
  assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{86}$/);
  const reading = readToken(token, jwks);
  assert.ok(reading.valid, JSON.stringify(reading));
  const expected: VerificationClaims = {
    irn,
    tin: "31845560-0001",
    dt: String(doc.issue_date),
    amt: "693375.00",
    cur: "NGN",
    h: record.signature.hash,
  };
  assert.deepEqual(reading.claims, expected);
  assert.equal(reading.kid, record.signature.kid);
  // An independent JOSE implementation agrees, against the served JWK Set.
  const verified = await compactVerify(token, createLocalJWKSet(jwks as never), {
    algorithms: ["EdDSA", "Ed25519"],
  });
  assert.deepEqual(JSON.parse(new TextDecoder().decode(verified.payload)), expected);
  assert.equal(verified.protectedHeader.kid, record.signature.kid);
  // Small enough for a QR at error correction M that a phone reads easily.
  assert.ok(token.length < 600, `${token.length} characters`);
});

test("a token fails on every single-character change, in our reading and in jose's", async (t) => {
  const { record, jwks } = await signed(t);
  const token = record.verification_qr;
  const keySet = createLocalJWKSet(jwks as never);
  const signatureStart = token.lastIndexOf(".");
  const signature = Buffer.from(token.slice(signatureStart + 1), "base64url");
  let checked = 0;
  for (let i = 0; i < token.length; i++) {
    const was = token[i] as string;
    for (const now of was === "." ? ["A"] : [was === "A" ? "B" : "A", "."]) {
      const changed = token.slice(0, i) + now + token.slice(i + 1);
      assert.equal(readToken(changed, jwks).valid, false, `position ${i}: ${was} → ${now}`);
      // The last character of the signature carries 4 unused bits: a change there alone leaves the
      // signature's bytes as they were. Ours refuses that spelling; jose decodes it leniently.
      const sameSignature =
        i > signatureStart &&
        now !== "." &&
        Buffer.from(changed.slice(signatureStart + 1), "base64url").equals(signature);
      if (!sameSignature) {
        await assert.rejects(
          compactVerify(changed, keySet, { algorithms: ["EdDSA", "Ed25519"] }),
          `jose, position ${i}`,
        );
      }
      checked += 1;
    }
  }
  assert.ok(checked > 2 * 300);
  // Cut short, lengthened, or another key: each says why.
  assert.equal((readToken(token.slice(0, -1), jwks) as { reason: string }).reason, "bad_signature");
  assert.equal((readToken(`${token}A`, jwks) as { reason: string }).reason, "bad_signature");
  assert.equal((readToken("hello", jwks) as { reason: string }).reason, "malformed");
  assert.equal((readToken(token, { keys: [] }) as { reason: string }).reason, "unknown_key");
});

test("a rotated signing key keeps old tokens verifiable, and old invoices keep their token", () => {
  const pem = () =>
    generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const oldKey = pem();
  const before = createSigner([oldKey]);
  const claims: VerificationClaims = {
    irn: "A1-AB12CD34-20261115",
    tin: "1-2",
    dt: "2026-11-15",
    amt: "1.00",
    cur: "NGN",
    h: "ab",
  };
  const token = before.verificationToken(claims, before.kid);
  const after = createSigner([pem(), oldKey]);
  assert.notEqual(after.kid, before.kid);
  assert.ok(readToken(token, after.jwks()).valid, "the old key is still published");
  // The same invoice's token, asked again after the rotation: the same, under the key that signed it.
  assert.equal(after.verificationToken(claims, before.kid), token);
  // A new invoice's token is under the new key.
  assert.equal(
    (readToken(after.verificationToken(claims, after.kid), after.jwks()) as { kid: string }).kid,
    after.kid,
  );
  // A key withdrawn from the set: its tokens no longer verify, and say why.
  const withdrawn = createSigner([pem()]);
  assert.equal((readToken(token, withdrawn.jwks()) as { reason: string }).reason, "unknown_key");
});

test("after `keys rotate` an old invoice keeps its token, which still verifies; new invoices' tokens use the new key", async (t) => {
  const { record, irn, who, dir, databaseUrl } = await signed(t);
  rotateSandboxKey(dir, "signing");
  const ctx = await createContext(
    loadConfig({ EINVOICE_DATABASE_URL: databaseUrl, EINVOICE_DATA_DIR: dir, EINVOICE_LOG_LEVEL: "silent" }),
  );
  const app = await createServer(ctx, pino({ level: "silent" }));
  t.after(async () => {
    await app.close();
    await ctx.close();
  });
  const again = (await app.inject({ url: `${API}/${irn}`, headers: who.headers })).json().data;
  assert.equal(
    again.verification_qr,
    record.verification_qr,
    "the same token, under the key that signed the invoice",
  );
  const jwks = (await app.inject({ url: "/.well-known/jwks.json" })).json() as Jwks;
  assert.equal(jwks.keys.length, 2);
  assert.ok(readToken(record.verification_qr, jwks).valid);
  assert.match((await app.inject({ url: `/verify?t=${record.verification_qr}` })).body, /Genuine/);
  const next = freshInvoice(who);
  assert.equal(
    (await app.inject({ method: "POST", url: `${API}/sign`, headers: who.headers, payload: next }))
      .statusCode,
    200,
  );
  const fresh = (await app.inject({ url: `${API}/${String(next.irn)}`, headers: who.headers })).json().data;
  const reading = readToken(fresh.verification_qr, jwks);
  assert.ok(reading.valid);
  assert.equal(reading.kid, jwks.keys[0]?.kid);
  assert.notEqual(reading.kid, record.signature.kid);
});

test("verification QR: PNG and SVG decode to the record's text; with EINVOICE_PUBLIC_URL the code opens the page", async (t) => {
  const { app, ctx, who, irn, record } = await signed(t, {
    EINVOICE_PUBLIC_URL: "https://einvoice.example.ng/",
  });
  assert.match(record.verification_qr, /^https:\/\/einvoice\.example\.ng\/verify\?t=[A-Za-z0-9_.-]+$/);
  const png = await app.inject({ url: `${API}/${irn}/verification-qr.png`, headers: who.headers });
  assert.equal(png.statusCode, 200);
  assert.equal(png.headers["content-type"], "image/png");
  const image = parseImageDataUrl(`data:image/png;base64,${png.rawPayload.toString("base64")}`);
  assert.ok(image);
  assert.equal(await decodeQrImage(image), record.verification_qr);
  const svg = await app.inject({ url: `${API}/${irn}/verification-qr.svg`, headers: who.headers });
  assert.equal(svg.statusCode, 200);
  assert.match(svg.body, /^<svg/);
  // Same tenant rules as the invoice: another business gets a 404, no credentials a 401.
  const other = await tenant(ctx);
  assert.equal(
    (await app.inject({ url: `${API}/${irn}/verification-qr.png`, headers: other.headers })).statusCode,
    404,
  );
  assert.equal((await app.inject({ url: `${API}/${irn}/verification-qr.png` })).statusCode, 401);
  assert.equal(tokenOfText(record.verification_qr), record.verification_qr.split("?t=")[1]);
});

test("the public /verify page: the facts of a valid token and the invoice's state; a changed or foreign token says so and shows nothing", async (t) => {
  const { app, record, irn, who } = await signed(t);
  const token = record.verification_qr;
  const page = await app.inject({ url: `/verify?t=${token}` });
  assert.equal(page.statusCode, 200);
  assert.match(String(page.headers["content-type"]), /^text\/html/);
  assert.match(String(page.headers["content-security-policy"]), /default-src 'none'/);
  for (const fact of [
    irn,
    "31845560-0001",
    "693,375.00 NGN",
    record.signature.hash,
    record.signature.kid,
    "Genuine",
  ]) {
    assert.ok(page.body.includes(fact), fact);
  }
  assert.match(page.body, /yes: signed</);
  assert.ok(
    !page.body.toLowerCase().includes("payment"),
    "the payment status is more than the token carries",
  );
  // Nothing the token does not carry: no buyer, no lines, no note.
  const document = fixture("invoice-full", who);
  for (const secret of [
    (document.accounting_customer_party as Json).party_name,
    document.note,
    "Portland cement",
  ]) {
    assert.ok(!page.body.includes(String(secret)), String(secret));
  }
  const tampered = `${token.slice(0, 40)}${token[40] === "A" ? "B" : "A"}${token.slice(41)}`;
  const refused = await app.inject({ url: `/verify?t=${encodeURIComponent(tampered)}` });
  assert.equal(refused.statusCode, 200);
  assert.match(refused.body, /Not verified/);
  assert.ok(!refused.body.includes(irn), "an invalid token's claims are not shown as facts");
  const foreign = createSigner([
    generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  ]).verificationToken({ irn, tin: "1-1", dt: "2026-01-01", amt: "1.00", cur: "NGN", h: "00" }, null);
  assert.match(
    (await app.inject({ url: `/verify?t=${foreign}` })).body,
    /signing key this service does not publish/,
  );
  assert.match((await app.inject({ url: "/verify" })).body, /Scan the verification QR code/);
  // The URL form of the code, pasted whole, works too.
  const viaUrl = await app.inject({
    url: `/verify?t=${encodeURIComponent(`https://x.example/verify?t=${token}`)}`,
  });
  assert.match(viaUrl.body, /Genuine/);
});

test("no IRN or token input is a 5xx: fuzzed", async (t) => {
  const { app, who, record } = await signed(t);
  const token = record.verification_qr;
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const pieces = [
    "",
    ".",
    "..",
    "%00",
    "%ff",
    "é",
    "ẹ",
    "\u202e",
    "../",
    "%2e%2e%2f",
    "A".repeat(5000),
    "=",
    "&t=",
    "eyJ",
    token,
  ];
  for (let i = 0; i < 300; i++) {
    let text = "";
    for (let j = 0; j < 1 + Math.floor(random() * 4); j++)
      text += pieces[Math.floor(random() * pieces.length)];
    if (random() < 0.5) {
      const at = Math.floor(random() * token.length);
      text = token.slice(0, at) + String.fromCharCode(Math.floor(random() * 0xd7ff)) + token.slice(at + 1);
    }
    const page = await app.inject({ url: `/verify?t=${encodeURIComponent(text)}` });
    assert.ok(page.statusCode < 500, `${page.statusCode} for ${JSON.stringify(text.slice(0, 80))}`);
    for (const suffix of ["verification-qr.png", "verification-qr.svg", ""]) {
      const res = await app.inject({
        url: `${API}/${encodeURIComponent(text.slice(0, 200))}/${suffix}`,
        headers: who.headers,
      });
      assert.ok(res.statusCode < 500, `${res.statusCode} for ${suffix} ${JSON.stringify(text.slice(0, 80))}`);
    }
  }
  const raw = await app.inject({ url: "/verify?t=%E0%A4%A&t=x" });
  assert.ok(raw.statusCode < 500, String(raw.statusCode));
});

test("npx einvoice verify-qr reads a PNG or a text and checks it against the JWK Set; exits 1 when it does not verify", async (t) => {
  const { app, who, irn, jwks, record } = await signed(t);
  const dir = tempDir(t);
  const png = path.join(dir, "verification.png");
  fs.writeFileSync(
    png,
    (await app.inject({ url: `${API}/${irn}/verification-qr.png`, headers: who.headers })).rawPayload,
  );
  const jwksFile = path.join(dir, "jwks.json");
  fs.writeFileSync(jwksFile, JSON.stringify(jwks));
  const env = cleanEnv({});
  const ok = await cli(["verify-qr", png, "--jwks", jwksFile], env as Record<string, string>);
  assert.equal(ok.code, 0, ok.stderr);
  const said = JSON.parse(ok.stdout) as Json;
  assert.equal(said.valid, true);
  assert.equal(said.irn, irn);
  assert.equal(said.amt, "693375.00");
  assert.equal(said.h, record.signature.hash);
  const token = record.verification_qr;
  const changed = `${token.slice(0, -3)}${token.at(-3) === "A" ? "B" : "A"}${token.slice(-2)}`;
  const bad = await cli(["verify-qr", changed, "--jwks", jwksFile], env as Record<string, string>);
  assert.equal(bad.code, 1);
  assert.equal((JSON.parse(bad.stdout) as Json).reason, "bad_signature");
});
