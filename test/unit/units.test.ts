import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { irnProblem, isRealDate, parseIrn } from "../../src/crypto/irn.ts";
import { loadKeyring, parseDataKeys } from "../../src/crypto/keyring.ts";
import { unpadPkcs1v15 } from "../../src/crypto/qr.ts";
import { createSealer } from "../../src/crypto/sealer.ts";
import { summarize } from "../../src/errors.ts";
import { prefersXml, referenceXml } from "../../src/http/xml.ts";
import { lgaCode } from "../../src/reference/lgas.ts";
import { pointerToPath, schemaViolations } from "../../src/schema/violations.ts";
import { tempDir } from "../helpers.ts";

test("IRN parsing: template, service id and a real calendar date", () => {
  assert.deepEqual(parseIrn("INV0001-94ND90NR-20240611"), {
    invoiceNumber: "INV0001",
    serviceId: "94ND90NR",
    date: "2024-06-11",
  });
  assert.match((parseIrn("INV-0001-94ND90NR-20240611") as { error: string }).error, /must look like/);
  assert.match((parseIrn("INV0001-94nd90nr-20240611") as { error: string }).error, /uppercase/);
  assert.match((parseIrn("INV0001-94ND90N-20240611") as { error: string }).error, /8 uppercase/);
  assert.match((parseIrn("INV0001-94ND90NR-20230229") as { error: string }).error, /calendar date/);
  assert.equal(irnProblem("INV0001-94ND90NR-20240229", "94ND90NR"), null, "2024 is a leap year");
  assert.match(irnProblem("INV0001-94ND90NR-20240611", "AAAAAAAA") ?? "", /not this business's service id/);
});

test("real calendar dates", () => {
  for (const d of ["2024-02-29", "2026-12-31", "2000-02-29"]) assert.equal(isRealDate(d), true, d);
  for (const d of [
    "2023-02-29",
    "1900-02-29",
    "2026-04-31",
    "2026-00-10",
    "2026-1-01",
    "20261101",
    "2026-11-01T00:00",
  ]) {
    assert.equal(isRealDate(d), false, d);
  }
});

test("LGA codes: the rule reproduces the known codes and resolves clashes deterministically", () => {
  const none = new Set<string>();
  assert.equal(lgaCode("Aba North", none), "ANO");
  assert.equal(lgaCode("Aba South", none), "ASO");
  assert.equal(lgaCode("Arochukwu", none), "ARO");
  assert.equal(lgaCode("Bende", none), "BEN");
  assert.equal(lgaCode("Isiala Ngwa North", none), "INN");
  assert.equal(lgaCode("Urue-Offong/Oruko", none), "UOO");
  assert.equal(lgaCode("Jama'are", none), "JAM");
  assert.equal(lgaCode("Aba North", new Set(["ANO"])), "ABA");
});

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

test("data keys and config parsing fail fast with a message naming the setting", () => {
  assert.throws(() => parseDataKeys("nokid"), /kid:base64key/);
  assert.throws(() => parseDataKeys(`k1:${randomBytes(16).toString("base64")}`), /32 bytes/);
  assert.throws(
    () => parseDataKeys(`k1:${randomBytes(32).toString("base64")},k1:${randomBytes(32).toString("base64")}`),
    /repeats/,
  );
  assert.throws(
    () => loadConfig({ PORT: "eighty" }),
    (e: unknown) => e instanceof ConfigError && /PORT/.test(e.message),
  );
  assert.throws(() => loadConfig({ EINVOICE_DATABASE_URL: "mysql://x" }), /EINVOICE_DATABASE_URL/);
  assert.throws(
    () => loadConfig({ EINVOICE_MODE: "production" }),
    /EINVOICE_SECRET_PEPPER, EINVOICE_DATA_KEYS, EINVOICE_QR_KEYS, EINVOICE_SIGNING_KEYS/,
  );
  const config = loadConfig({ EINVOICE_DATABASE_URL: "sqlite:/srv/einvoice/main.db" });
  assert.deepEqual(config.database, { engine: "sqlite", file: "/srv/einvoice/main.db" });
  assert.equal(config.dataDir, "/srv/einvoice");
  assert.equal(config.port, 8080);
  assert.equal(config.host, "127.0.0.1");
  assert.equal(config.mode, "sandbox");
  assert.equal(config.trustProxy, false);
  assert.equal(loadConfig({ EINVOICE_TRUST_PROXY: "true" }).trustProxy, true);
  assert.throws(() => loadConfig({ EINVOICE_TRUST_PROXY: "2" }), /not a number of hops/);
  assert.equal(
    loadConfig({ EINVOICE_TRUST_PROXY: "10.0.0.0/8, 127.0.0.1" }).trustProxy,
    "10.0.0.0/8,127.0.0.1",
  );
  assert.throws(() => loadConfig({ EINVOICE_TRUST_PROXY: "everyone" }), /EINVOICE_TRUST_PROXY/);
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

test("Accept negotiation prefers XML only when asked", () => {
  assert.equal(prefersXml(undefined), false);
  assert.equal(prefersXml("*/*"), false);
  assert.equal(prefersXml("application/json"), false);
  assert.equal(prefersXml("application/xml"), true);
  assert.equal(prefersXml("text/xml, application/json"), true);
  assert.equal(prefersXml("application/xml;q=0.5, application/json"), false);
  assert.equal(prefersXml("application/json;q=0.2, application/xml;q=0.9"), true);
  assert.equal(
    referenceXml([{ code: "58", value: "Banker's Draft & <Co>" }]),
    '<?xml version="1.0" encoding="UTF-8"?>\n<response><code>200</code><data><item><code>58</code><value>Banker&apos;s Draft &amp; &lt;Co&gt;</value></item></data></response>\n',
  );
});

test("schema errors become violations with readable paths", () => {
  assert.equal(pointerToPath("/invoice_line/0/price/price_amount"), "invoice_line[0].price.price_amount");
  assert.equal(pointerToPath(""), "");
  const violations = schemaViolations([
    { instancePath: "/accounting_supplier_party", keyword: "required", params: { missingProperty: "tin" } },
    { instancePath: "/invoice_line/1/invoiced_quantity", keyword: "type", params: { type: "number" } },
    { instancePath: "/issue_date", keyword: "format", params: { format: "date" } },
  ]);
  assert.deepEqual(
    violations.map((v) => [v.path, v.rule, v.message]),
    [
      ["accounting_supplier_party.tin", "required", "is required"],
      ["invoice_line[1].invoiced_quantity", "type", "must be a number"],
      ["issue_date", "format", "must be a real calendar date written YYYY-MM-DD"],
    ],
  );
  assert.match(summarize([...violations, ...violations]), /and 3 more/);
});

test("PKCS#1 v1.5 unpadding accepts exactly 00 02 PS(≥8 nonzero) 00 M", () => {
  const block = (head: number[], ps: number, message: string) =>
    Buffer.concat([Buffer.from(head), Buffer.alloc(ps, 0x5a), Buffer.from([0]), Buffer.from(message)]);
  assert.equal(unpadPkcs1v15(block([0, 2], 8, "hello"))?.toString(), "hello");
  assert.equal(unpadPkcs1v15(block([0, 2], 200, '{"irn":"x"}'))?.toString(), '{"irn":"x"}');
  assert.equal(unpadPkcs1v15(block([0, 2], 8, ""))?.toString(), "", "an empty message is well formed");
  assert.equal(unpadPkcs1v15(block([0, 2], 7, "hello")), null, "padding shorter than 8 bytes");
  assert.equal(unpadPkcs1v15(block([0, 1], 8, "hello")), null, "block type 1 is for signatures");
  assert.equal(unpadPkcs1v15(block([1, 2], 8, "hello")), null, "the first byte must be 0");
  assert.equal(
    unpadPkcs1v15(Buffer.concat([Buffer.from([0, 2]), Buffer.alloc(30, 7)])),
    null,
    "no separator",
  );
});
