import assert from "node:assert/strict";
import { constants, createPublicKey, generateKeyPair, privateDecrypt } from "node:crypto";
import fs from "node:fs";
import { test } from "node:test";
import { promisify } from "node:util";
import { parsePemKeys } from "../../src/crypto/keyring.ts";
import { readQrImage } from "../../src/qr/qr-image-decoder.ts";
import { build, type Json, tenant } from "../helpers.ts";

const API = "/api/v1/einvoice";
const fixture = (name: string) => fs.readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");
const base64 = (pem: string) => Buffer.from(pem).toString("base64");

async function rsa(bits: number, publicExponent = 65537) {
  const { publicKey, privateKey } = await promisify(generateKeyPair)("rsa", {
    modulusLength: bits,
    publicExponent,
  });
  return {
    publicPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
    privatePem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

test("qr-code/create refuses keys whose codes would not fit or cost too much, with a 400 that says why", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const business = await ctx.businesses.find(a.business_id);
  assert.ok(business);
  const irn = `INV001-${a.service_id}-20261115`;
  const create = async (publicKey: string) => {
    const started = performance.now();
    const res = await app.inject({
      method: "POST",
      url: `${API}/qr-code/create`,
      headers: a.headers,
      payload: { public_key: base64(publicKey), certificate: business.certificate, irn },
    });
    return { res, ms: performance.now() - started };
  };
  await create(ctx.qr.publicKeyPem); // the first request pays for compiling the route

  // A real 2048-bit modulus with a 2040-bit public exponent: a public operation as costly as a private one.
  const jwk = createPublicKey((await rsa(2048)).publicPem).export({ format: "jwk" });
  const longExponent = createPublicKey({
    key: { ...jwk, e: Buffer.alloc(255, 0xff).toString("base64url") },
    format: "jwk",
  });
  const evenExponent = createPublicKey({ key: { ...jwk, e: "AQAA" }, format: "jwk" });
  const cases: [string, string, RegExp][] = [
    // Its code is 1,368 base64 characters: the report's 500, for no QR code holds it at level H.
    ["RSA-8192", fixture("rsa-8192.public.pem"), /RSA-8192 key; at most 4096 bits are accepted/],
    ["RSA-4104", fixture("rsa-4104.public.pem"), /RSA-4104 key; at most 4096 bits are accepted/],
    ["RSA-1024", (await rsa(1024)).publicPem, /RSA-1024 key; at least 2048 bits are required/],
    [
      "a 2040-bit exponent",
      longExponent.export({ type: "spki", format: "pem" }).toString(),
      /public exponent/,
    ],
    ["an even exponent", evenExponent.export({ type: "spki", format: "pem" }).toString(), /public exponent/],
  ];
  for (const [what, pem, reason] of cases) {
    const { res, ms } = await create(pem);
    assert.equal(res.statusCode, 400, `${what}: ${res.body}`);
    const body = res.json() as Json & { error: Json };
    assert.equal(body.status, false);
    assert.equal(body.code, 400);
    assert.equal(body.message, "QR Code generation failed");
    assert.match(String(body.error.details), /^public_key cannot make a QR code: /, what);
    assert.match(String(body.error.details), reason, what);
    assert.ok(ms < 1000, `${what}: answered in ${ms.toFixed(0)} ms`);
  }
});

test("the largest key accepted, RSA-4096 with exponent 3, makes a code that fits, reads and opens", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const business = await ctx.businesses.find(a.business_id);
  assert.ok(business);
  const irn = `INV001-${a.service_id}-20261115`;
  const key = await rsa(4096, 3);
  const res = await app.inject({
    method: "POST",
    url: `${API}/qr-code/create`,
    headers: a.headers,
    payload: { public_key: base64(key.publicPem), certificate: business.certificate, irn },
  });
  assert.equal(res.statusCode, 200, res.body);
  const text = await readQrImage(res.json().data.qr_code);
  assert.ok(text);
  assert.equal(text.length, 684, "512 bytes of ciphertext in base64");
  // Node 20 refuses PKCS#1 v1.5 private decryption; the raw block shows the padding and the payload.
  const block = privateDecrypt(
    { key: key.privatePem, padding: constants.RSA_NO_PADDING },
    Buffer.from(text, "base64"),
  );
  assert.deepEqual([...block.subarray(0, 2)], [0, 2]);
  const payload = JSON.parse(block.subarray(block.indexOf(0, 2) + 1).toString("utf8"));
  assert.equal(payload.certificate, business.certificate);
  assert.match(payload.irn, new RegExp(`^${irn}\\.\\d+$`));
});

test("QR keys that codes could not use are refused where the service loads them", async () => {
  const weak = await rsa(1024);
  assert.throws(
    () => parsePemKeys(base64(weak.privatePem), "EINVOICE_QR_KEYS", "RSA"),
    /EINVOICE_QR_KEYS: a key cannot make QR codes: it is an RSA-1024 key; at least 2048 bits are required/,
  );
  const fine = await rsa(2048);
  assert.deepEqual(parsePemKeys(base64(fine.privatePem), "EINVOICE_QR_KEYS", "RSA"), [fine.privatePem]);
});
