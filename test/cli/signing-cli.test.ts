import assert from "node:assert/strict";
import { constants, publicEncrypt } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import pino from "pino";
import { createContext, createServer } from "../../src/main.ts";
import { freshInvoice, type Json, tenant } from "../helpers.ts";
import { cli, configOf, type DbEnv, dbEnv, oneJson, openContext, TIMEOUT, withDatabase } from "./run.ts";

const API = "/api/v1/einvoice";

/** Signs `count` invoices in process on the CLI's database (and keys), then closes it. */
async function signSome(db: DbEnv, count: number) {
  const ctx = await createContext(configOf(db));
  const app = await createServer(ctx, pino({ level: "silent" }));
  try {
    const a = await tenant(ctx);
    const irns: string[] = [];
    for (let i = 0; i < count; i++) {
      const invoice = freshInvoice(a, "invoice-full");
      const res = await app.inject({
        method: "POST",
        url: `${API}/sign`,
        headers: a.headers,
        payload: invoice,
      });
      assert.equal(res.statusCode, 200, res.body);
      irns.push(String(invoice.irn));
    }
    const record = (await app.inject({ url: `${API}/${irns[0]}`, headers: a.headers })).json() as Json;
    const jwks = (await app.inject({ url: "/.well-known/jwks.json" })).json() as Json;
    return { tenant: a, irns, record, jwks };
  } finally {
    await app.close();
    await ctx.close();
  }
}

test("audit verify: 0 exit on a sound register, 1 and the broken row after tampering", {
  timeout: TIMEOUT * 2,
}, async (t) => {
  const db = await dbEnv(t);
  const { env } = db;
  const { tenant: a, irns } = await signSome(db, 3);
  const sound = oneJson(await cli(["audit", "verify"], env));
  assert.deepEqual(sound, { checked: 3, broken: [] });

  await withDatabase(db, async (ctx) => {
    const irn = String(irns[1]);
    const row = await ctx.db
      .selectFrom("invoices")
      .select("document")
      .where("irn", "=", irn)
      .executeTakeFirstOrThrow();
    const tampered = row.document.replace('"invoiced_quantity":100', '"invoiced_quantity":10');
    assert.notEqual(tampered, row.document, "the tampering changes the stored document");
    await ctx.db.updateTable("invoices").set({ document: tampered }).where("irn", "=", irn).execute();
  });
  const run = await cli(["audit", "verify", "--business", a.business_id], env);
  assert.equal(run.code, 1);
  const result = JSON.parse(run.stdout) as { checked: number; broken: { irn: string; reason: string }[] };
  assert.equal(result.checked, 3);
  assert.deepEqual(
    result.broken.map((b) => b.irn),
    [irns[1]],
  );
});

test("verify FILE --jwks FILE: a saved record verifies offline; an edited one does not", {
  timeout: TIMEOUT * 2,
}, async (t) => {
  const db = await dbEnv(t);
  const { dir, env } = db;
  const { record, jwks } = await signSome(db, 1);
  const recordFile = path.join(dir, "record.json");
  const jwksFile = path.join(dir, "jwks.json");
  fs.writeFileSync(recordFile, JSON.stringify(record));
  fs.writeFileSync(jwksFile, JSON.stringify(jwks));
  const ok = oneJson(await cli(["verify", recordFile, "--jwks", jwksFile], env));
  assert.equal(ok.valid, true);
  assert.equal(ok.irn, (record.data as Json).irn);

  const edited = structuredClone(record) as Json & { data: { document: Json } };
  edited.data.document.order_reference = "PO-7782";
  fs.writeFileSync(recordFile, JSON.stringify(edited));
  const run = await cli(["verify", recordFile, "--jwks", jwksFile], env);
  assert.equal(run.code, 1);
  assert.equal((JSON.parse(run.stdout) as Json).valid, false);
});

test("business crypto-keys exports what a client needs to build a QR code the service accepts", {
  timeout: TIMEOUT * 2,
}, async (t) => {
  const db = await dbEnv(t);
  const { env } = db;
  const { tenant: a, irns } = await signSome(db, 1);
  const keys = oneJson(await cli(["business", "crypto-keys", "--business", a.business_id], env)) as {
    public_key: string;
    certificate: string;
  };
  assert.match(Buffer.from(keys.public_key, "base64").toString("utf8"), /BEGIN PUBLIC KEY/);
  const code = publicEncrypt(
    { key: Buffer.from(keys.public_key, "base64").toString("utf8"), padding: constants.RSA_PKCS1_PADDING },
    Buffer.from(
      JSON.stringify({ irn: `${irns[0]}.${Math.floor(Date.now() / 1000)}`, certificate: keys.certificate }),
    ),
  ).toString("base64");
  const ctx = await openContext(t, db);
  assert.deepEqual((await ctx.qrCodes.validate(code)).irn, irns[0]);
});

test("keys rotate-signing-key in the sandbox adds a key that the next start signs with", {
  timeout: TIMEOUT * 2,
}, async (t) => {
  const db = await dbEnv(t);
  const { dir, env } = db;
  await signSome(db, 1);
  const rotated = oneJson(await cli(["keys", "rotate-signing-key"], env)) as {
    kid: string;
    rotated: boolean;
  };
  assert.equal(rotated.rotated, true);
  const secrets = JSON.parse(fs.readFileSync(path.join(dir, "secrets.json"), "utf8")) as {
    signing_keys: string[];
  };
  assert.equal(secrets.signing_keys.length, 2);
  const ctx = await openContext(t, db);
  assert.equal(ctx.signer.kid, rotated.kid);
  assert.deepEqual(ctx.signer.jwks().keys.map((k) => k.kid)[0], rotated.kid);
  assert.equal(ctx.signer.jwks().keys.length, 2);
});

test("webhook set prints the secret once; outbox status counts the jobs", {
  timeout: TIMEOUT * 2,
}, async (t) => {
  const db = await dbEnv(t);
  const { env } = db;
  const { tenant: a } = await signSome(db, 2);
  const hook = oneJson(
    await cli(["webhook", "set", "--business", a.business_id, "--url", "https://erp.example/hooks"], env),
  );
  assert.equal(hook.business_id, a.business_id);
  assert.equal(hook.url, "https://erp.example/hooks");
  assert.match(String(hook.secret), /^whsec_/);
  const stored = await withDatabase(db, (ctx) =>
    ctx.db.selectFrom("webhooks").select("secret").executeTakeFirstOrThrow(),
  );
  assert.equal(stored.secret.includes(String(hook.secret)), false, "the secret is stored sealed");
  const bad = await cli(["webhook", "set", "--business", a.business_id, "--url", "ftp://x"], env);
  assert.notEqual(bad.code, 0);

  const status = oneJson(await cli(["outbox", "status"], env)) as {
    jobs: unknown[];
    oldest_pending_age_seconds: unknown;
  };
  assert.deepEqual(status.jobs, []);
  assert.equal(status.oldest_pending_age_seconds, null);
});
