import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { loadConfig } from "../../src/config.ts";
import { createContext } from "../../src/main.ts";
import { ENGINE, HS_CSV, ISIC_JSON, rawStorage } from "../helpers.ts";
import {
  cli,
  countRows,
  dbEnv,
  failed,
  freePort,
  health,
  oneJson,
  onTeardown,
  openContext,
  startServer,
  TIMEOUT,
  UUID,
  withDatabase,
} from "./run.ts";

test("business add prints the new business; --id and --service-id are echoed", {
  timeout: TIMEOUT * 2,
}, async (t) => {
  const { env } = await dbEnv(t);
  // As a user runs it, once: stdout, stderr and the exit status of `node bin/einvoice.js` itself.
  const added = oneJson(
    await cli(["business", "add", "--name", "Acme Ltd", "--tin", "12345678-0001"], env, { process: true }),
  );
  assert.match(String(added.business_id), UUID);
  assert.match(String(added.service_id), /^[A-Z0-9]{8}$/);
  assert.equal(added.name, "Acme Ltd");
  assert.equal(added.tin, "12345678-0001");

  const id = "6f1c2d3e-4b5a-4c6d-8e7f-901234567890";
  const chosen = oneJson(
    await cli(
      [
        "business",
        "add",
        "--name",
        "Beta Ltd",
        "--tin",
        "87654321-0002",
        "--id",
        id,
        "--service-id",
        "ABCD1234",
      ],
      env,
    ),
  );
  assert.equal(chosen.business_id, id);
  assert.equal(chosen.service_id, "ABCD1234");
});

test("business add rejects an invalid TIN and a duplicate service id or id", {
  timeout: TIMEOUT * 4,
}, async (t) => {
  const db = await dbEnv(t);
  const { env } = db;
  failed(await cli(["business", "add", "--name", "Acme Ltd", "--tin", "ABC"], env), /tin/i);
  failed(await cli(["business", "add", "--name", "Acme Ltd", "--tin", "12345678"], env), /tin/i);

  const id = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
  oneJson(
    await cli(
      [
        "business",
        "add",
        "--name",
        "Acme Ltd",
        "--tin",
        "12345678-0001",
        "--service-id",
        "ABCD1234",
        "--id",
        id,
      ],
      env,
    ),
  );
  failed(
    await cli(
      ["business", "add", "--name", "Other Ltd", "--tin", "12345678-0002", "--service-id", "ABCD1234"],
      env,
    ),
    /ABCD1234/,
  );
  failed(
    await cli(["business", "add", "--name", "Other Ltd", "--tin", "12345678-0002", "--id", id], env),
    /id/,
  );
  failed(await cli(["business", "add", "--name", "Acme Ltd", "--tin", "1-1", "--service-id", "abc"], env));
  // Only the one valid business was stored.
  assert.equal(await countRows(db, "businesses"), 1);
});

test("key create issues credentials that authenticate; the secret is not stored", {
  timeout: TIMEOUT * 3,
}, async (t) => {
  const db = await dbEnv(t);
  const { env, file, dir } = db;
  const business = oneJson(
    await cli(["business", "add", "--name", "Acme Ltd", "--tin", "12345678-0001"], env),
  );
  const businessId = String(business.business_id);
  const key = oneJson(await cli(["key", "create", "--business", businessId], env));
  const apiKey = String(key.api_key);
  const apiSecret = String(key.api_secret);
  assert.ok(apiKey.length >= 16, apiKey);
  assert.ok(apiSecret.length >= 32, apiSecret);
  assert.equal(key.business_id, businessId);

  // On SQLite, without EINVOICE_DATA_DIR: the keys the CLI made beside the file are found by default.
  // (PostgreSQL has no file to put them beside; the data folder is always given there.)
  const ctx = await createContext(
    ENGINE === "sqlite"
      ? loadConfig({ EINVOICE_DATABASE_URL: env.EINVOICE_DATABASE_URL, EINVOICE_LOG_LEVEL: "silent" })
      : loadConfig({ ...env, EINVOICE_LOG_LEVEL: "silent" }),
  );
  onTeardown(t, () => ctx.close());
  assert.equal(ctx.config.dataDir, dir);
  assert.deepEqual(await ctx.businesses.authenticate(apiKey, apiSecret), { businessId, apiKey });
  assert.equal(await ctx.businesses.authenticate(apiKey, `${apiSecret}x`), "wrong_secret");

  const rows = await ctx.db.selectFrom("api_keys").selectAll().execute();
  assert.equal(rows.length, 1);
  assert.equal(rows[0]?.api_key, apiKey);
  const stored = JSON.stringify(rows);
  const secretBody = apiSecret.replace(/^sk_/, "");
  assert.ok(!stored.includes(secretBody), "the secret is not in api_keys");
  assert.ok(!stored.includes(Buffer.from(apiSecret).toString("hex")), "nor in hex");
  assert.ok(!stored.includes(Buffer.from(apiSecret).toString("base64")), "nor in base64");
  if (file !== undefined) {
    // Nor anywhere in the database files.
    for (const f of fs.readdirSync(dir).filter((n) => n.startsWith(path.basename(file)))) {
      assert.ok(!fs.readFileSync(path.join(dir, f)).includes(secretBody), `the secret is not in ${f}`);
    }
  } else {
    // Nor anywhere in the database: every row of every table, as text.
    const stored = await rawStorage(ctx, undefined);
    assert.ok(stored.includes(apiKey), "the scan sees the stored rows");
    assert.ok(!stored.includes(secretBody), "the secret is not in the database");
  }

  failed(await cli(["key", "create", "--business", "00000000-0000-4000-8000-000000000000"], env), /exist/);
});

test("key revoke revokes at once; an unknown key fails", { timeout: TIMEOUT * 4 }, async (t) => {
  const db = await dbEnv(t);
  const { env } = db;
  const business = oneJson(
    await cli(["business", "add", "--name", "Acme Ltd", "--tin", "12345678-0001"], env),
  );
  const key = oneJson(await cli(["key", "create", "--business", String(business.business_id)], env));
  const apiKey = String(key.api_key);
  const apiSecret = String(key.api_secret);

  const ctx = await openContext(t, db);
  assert.equal(typeof (await ctx.businesses.authenticate(apiKey, apiSecret)), "object");

  const revoked = oneJson(await cli(["key", "revoke", apiKey], env));
  assert.equal(revoked.revoked, true);
  assert.equal(revoked.api_key, apiKey);
  // A revoked key is no key: its failures count per address, as an unknown key's do.
  assert.equal(await ctx.businesses.authenticate(apiKey, apiSecret), "unknown_key");

  failed(await cli(["key", "revoke", "ak_doesnotexist"], env), /ak_doesnotexist/);
});

test("catalog import loads products and services; bad kinds and missing files fail", {
  timeout: TIMEOUT * 5,
}, async (t) => {
  const db = await dbEnv(t);
  const { env, dir } = db;
  assert.deepEqual(oneJson(await cli(["catalog", "import", "products", HS_CSV], env)), {
    catalog: "products",
    imported: 5613,
  });
  assert.deepEqual(oneJson(await cli(["catalog", "import", "services", ISIC_JSON], env)), {
    catalog: "services",
    imported: 419,
  });
  assert.equal(await countRows(db, "products"), 5613);
  assert.equal(await countRows(db, "services"), 419);

  failed(await cli(["catalog", "import", "widgets", HS_CSV], env), /widgets/);
  const missing = path.join(dir, "no-such-file.csv");
  failed(await cli(["catalog", "import", "products", missing], env), /no-such-file|ENOENT|not found/i);
  // The failed import left the catalog as it was.
  assert.equal(await countRows(db, "products"), 5613);
});

test("the CLI works against the database a running server is using", { timeout: TIMEOUT * 4 }, async (t) => {
  const { env } = await dbEnv(t, "shared.db");
  const server = await startServer(t, env);
  const anonymous = await fetch(`${server.url}/`);
  assert.equal(anonymous.status, 401);
  await anonymous.arrayBuffer();

  const business = oneJson(
    await cli(["business", "add", "--name", "Acme Ltd", "--tin", "12345678-0001"], env),
  );
  const key = oneJson(await cli(["key", "create", "--business", String(business.business_id)], env));
  const apiKey = String(key.api_key);
  const apiSecret = String(key.api_secret);

  const ok = await health(server.url, apiKey, apiSecret);
  assert.equal(ok.status, 200, server.output());
  assert.deepEqual(ok.body, { code: 200, data: null, message: "API is healthy" });

  // A revocation by the CLI takes effect on the server's very next request.
  oneJson(await cli(["key", "revoke", apiKey], env));
  assert.equal((await health(server.url, apiKey, apiSecret)).status, 401);
});

test("sandbox first start writes demo credentials that work; a restart adds no business", {
  timeout: TIMEOUT * 4,
}, async (t) => {
  const db = await dbEnv(t, "sandbox.db");
  const { env, dir } = db;
  const first = await startServer(t, env);
  const credentialsFile = path.join(dir, "sandbox-credentials.json");
  assert.ok(fs.existsSync(credentialsFile), `no ${credentialsFile}: ${first.output()}`);
  const credentials = JSON.parse(fs.readFileSync(credentialsFile, "utf8")) as Record<string, unknown>;
  for (const k of ["business_id", "service_id", "api_key", "api_secret"]) {
    assert.equal(typeof credentials[k], "string", k);
  }
  assert.match(String(credentials.business_id), UUID);
  assert.match(String(credentials.service_id), /^[A-Z0-9]{8}$/);
  const apiKey = String(credentials.api_key);
  const apiSecret = String(credentials.api_secret);
  const ok = await health(first.url, apiKey, apiSecret);
  assert.equal(ok.status, 200, first.output());
  assert.deepEqual(ok.body, { code: 200, data: null, message: "API is healthy" });
  // The operator password printed at start signs in to the dashboard.
  const printed = /operator dashboard is at \/dashboard \(password ([A-Za-z0-9_-]{16,})\)/.exec(
    first.output(),
  );
  assert.ok(printed, first.output());
  const signIn = await fetch(`${first.url}/dashboard/login`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ password: String(printed[1]) }),
  });
  assert.equal(signIn.status, 303);
  assert.match(String(signIn.headers.get("set-cookie")), /^einvoice_operator=/);
  assert.equal(await first.stop(), 0, "SIGTERM shuts the server down cleanly");

  // The same URL (on PostgreSQL, the same schema): the second start finds the first one's data.
  const second = await startServer(t, env);
  assert.deepEqual(await withDatabase(db, (ctx) => ctx.db.selectFrom("businesses").select("id").execute()), [
    { id: credentials.business_id },
  ]);
  assert.deepEqual(JSON.parse(fs.readFileSync(credentialsFile, "utf8")), credentials);
  assert.equal((await health(second.url, apiKey, apiSecret)).status, 200);
});

test("production serve without its secrets exits non-zero naming the missing settings", {
  timeout: TIMEOUT * 2,
}, async (t) => {
  const { env } = await dbEnv(t, "prod.db");
  const port = String(await freePort());
  const none = await cli(["serve"], { ...env, EINVOICE_MODE: "production", PORT: port });
  failed(none, /EINVOICE_SECRET_PEPPER/);
  assert.match(none.stderr, /EINVOICE_DATA_KEYS/);

  const pepperOnly = await cli(["serve"], {
    ...env,
    EINVOICE_MODE: "production",
    PORT: port,
    EINVOICE_SECRET_PEPPER: Buffer.alloc(32, 7).toString("base64"),
  });
  failed(pepperOnly, /EINVOICE_DATA_KEYS/);
  assert.doesNotMatch(pepperOnly.stderr, /EINVOICE_SECRET_PEPPER/);
});

test("keys generate makes every secret a production start needs: migrate and audit verify run on them", {
  timeout: TIMEOUT * 3,
}, async (t) => {
  const { env } = await dbEnv(t, "prod.db");
  const generated = await cli(["keys", "generate", "--env"], {});
  assert.equal(generated.code, 0, generated.stderr);
  const secrets = Object.fromEntries(
    generated.stdout
      .trim()
      .split("\n")
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
  assert.deepEqual(Object.keys(secrets).sort(), [
    "EINVOICE_DATA_KEYS",
    "EINVOICE_OPERATOR_PASSWORD",
    "EINVOICE_QR_KEYS",
    "EINVOICE_SECRET_PEPPER",
    "EINVOICE_SIGNING_KEYS",
  ]);
  const production = { ...env, ...secrets, EINVOICE_MODE: "production" };
  oneJson(await cli(["migrate"], production));
  assert.deepEqual(oneJson(await cli(["audit", "verify"], production)).broken, []);
  // Fresh each time, and the same set as JSON.
  const again = oneJson(await cli(["keys", "generate"], {}));
  assert.deepEqual(Object.keys(again).sort(), Object.keys(secrets).sort());
  for (const name of Object.keys(secrets)) assert.notEqual(again[name], secrets[name], name);
});

test("keys generate --authority mbs adds the MBS settings to fill in; start-up names each one still empty", {
  timeout: TIMEOUT * 3,
}, async (t) => {
  const { env } = await dbEnv(t, "prod-mbs.db");
  const generated = await cli(["keys", "generate", "--env", "--authority", "mbs"], {});
  assert.equal(generated.code, 0, generated.stderr);
  const lines = generated.stdout.trim().split("\n");
  const settings = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
  assert.equal(settings.EINVOICE_AUTHORITY, "mbs");
  for (const name of ["EINVOICE_MBS_URL", "EINVOICE_MBS_API_KEY", "EINVOICE_MBS_API_SECRET"])
    assert.equal(settings[name], "", `${name} is there to fill in`);
  const production = { ...env, ...settings, EINVOICE_MODE: "production" };
  const refused = await cli(["migrate"], production);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /EINVOICE_AUTHORITY=mbs needs EINVOICE_MBS_URL/);
  const noKey = await cli(["migrate"], { ...production, EINVOICE_MBS_URL: "https://mbs.example" });
  assert.match(noKey.stderr, /EINVOICE_AUTHORITY=mbs needs EINVOICE_MBS_API_KEY/);
  const filled = {
    ...production,
    EINVOICE_MBS_URL: "https://mbs.example",
    EINVOICE_MBS_API_KEY: "key",
    EINVOICE_MBS_API_SECRET: "secret",
  };
  oneJson(await cli(["migrate"], filled));
  const bad = await cli(["keys", "generate", "--authority", "elsewhere"], {});
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /builtin, mbs/);
});
