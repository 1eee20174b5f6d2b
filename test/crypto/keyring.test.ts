import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { loadKeyring, parseDataKeys } from "../../src/crypto/keyring.ts";
import { tempDir } from "../helpers.ts";

test("data keys fail fast with a message naming the expected form", () => {
  assert.throws(() => parseDataKeys("nokid"), /kid:base64key/);
  assert.throws(() => parseDataKeys(`k1:${randomBytes(16).toString("base64")}`), /32 bytes/);
  assert.throws(
    () => parseDataKeys(`k1:${randomBytes(32).toString("base64")},k1:${randomBytes(32).toString("base64")}`),
    /repeats/,
  );
});

test("the sandbox keyring is generated once and then reused", (t) => {
  const dir = tempDir(t);
  const settings = {
    mode: "sandbox" as const,
    dataDir: dir,
    secretPepper: undefined,
    dataKeys: undefined,
    qrKeys: undefined,
    signingKeys: undefined,
    operatorPassword: undefined,
  };
  const first = loadKeyring(settings);
  const second = loadKeyring(settings);
  assert.deepEqual(second.pepper, first.pepper);
  assert.deepEqual(second.dataKeys, first.dataKeys);
  assert.deepEqual(second.qrKeys, first.qrKeys);
  assert.deepEqual(second.signingKeys, first.signingKeys);
  assert.ok(first.operatorPassword && first.operatorPassword.length >= 16, "a sandbox operator password");
  assert.equal(second.operatorPassword, first.operatorPassword);
  assert.equal(
    loadKeyring({ ...settings, operatorPassword: "configured-password-1" }).operatorPassword,
    "configured-password-1",
  );
  assert.throws(() => loadKeyring({ ...settings, mode: "production" }), /EINVOICE_SECRET_PEPPER/);
});
