import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import pino from "pino";
import { loadConfig } from "../../src/config.ts";
import { newSecret, rotateSandboxDataKey } from "../../src/crypto/keyring.ts";
import { createSealer, sealedKid } from "../../src/crypto/sealer.ts";
import { invoiceRepository } from "../../src/invoices/invoice-repository.ts";
import { createContext, createServer } from "../../src/main.ts";
import { ENGINE, freshDatabase, freshInvoice, type Json, type Tenant, tempDir, tenant } from "../helpers.ts";

const API = "/api/v1/einvoice";

/**
 * One database shared by several instances, each with its own context and keys, as several server
 * processes and the CLI share one in a deployment. Each instance is closed when the test ends, or
 * before by `close`.
 */
async function deployment(t: TestContext) {
  const dir = tempDir(t);
  const database = await freshDatabase(dir);
  const open: Array<() => Promise<void>> = [];
  t.after(async () => {
    for (const close of open.reverse()) await close();
    await database.drop();
  });
  const base = { EINVOICE_DATABASE_URL: database.url, EINVOICE_DATA_DIR: dir, EINVOICE_LOG_LEVEL: "silent" };
  return {
    dir,
    async instance(env: Record<string, string> = {}) {
      const ctx = await createContext(loadConfig({ ...base, ...env }));
      const app = await createServer(ctx, pino({ level: "silent" }));
      let closed = false;
      const close = async () => {
        if (closed) return;
        closed = true;
        await app.close();
        await ctx.close();
      };
      open.push(close);
      return { ctx, app, close };
    },
  };
}
type Instance = Awaited<ReturnType<Awaited<ReturnType<typeof deployment>>["instance"]>>;

async function sign(server: Instance, who: Tenant, invoice: Json): Promise<void> {
  const res = await server.app.inject({
    method: "POST",
    url: `${API}/sign`,
    headers: who.headers,
    payload: invoice,
  });
  assert.equal(res.statusCode, 200, res.body);
}

async function signBatch(server: Instance, who: Tenant, invoices: Json[]): Promise<void> {
  const res = await server.app.inject({
    method: "POST",
    url: `${API}/batch/sign`,
    headers: who.headers,
    payload: { invoices },
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.ok(
    (res.json().data as { status: string }[]).every((r) => r.status === "signed"),
    res.body,
  );
}

test(`rotating on ${ENGINE} while a server signs invoices with notes: no row is left under the old key`, async (t) => {
  const { instance } = await deployment(t);
  // Key ids with `_`, which LIKE took for any character: `a_b` matched `axb`.
  const oldKey = `axb:${newSecret.dataKey()}`;
  const newKey = `a_b:${newSecret.dataKey()}`;
  // The server has the new key in its list (step 1 of the rotation), still after the old one.
  const server = await instance({ EINVOICE_DATA_KEYS: `${oldKey},${newKey}` });
  const who = await tenant(server.ctx);
  const invoices: Json[] = [];
  // More than a page of the re-encryption (500).
  for (let batch = 0; batch < 2; batch++) {
    const documents = Array.from({ length: 300 }, () => freshInvoice(who));
    await signBatch(server, who, documents);
    invoices.push(...documents);
  }
  await server.ctx.webhooks.set(who.business_id, "https://erp.example/hooks");

  // Four clients signing one invoice after another, each sign's start and end noted.
  let signing = true;
  const spans: Array<[number, number]> = [];
  const clients = Array.from({ length: 4 }, async () => {
    while (signing) {
      const invoice = freshInvoice(who);
      const started = performance.now();
      await sign(server, who, invoice);
      spans.push([started, performance.now()]);
      invoices.push(invoice);
    }
  });
  await new Promise((resolve) => setTimeout(resolve, 100));

  // The CLI's `keys rotate-data-key`, with the new key first in its list.
  const cli = await instance({ EINVOICE_DATA_KEYS: `${newKey},${oldKey}` });
  const rotationStarted = performance.now();
  const rotated = await cli.ctx.dataKeys.resealAll();
  const rotationEnded = performance.now();
  const signedBefore = invoices.length;
  // The server goes on signing after the rotation, without a restart.
  await new Promise((resolve) => setTimeout(resolve, 300));
  signing = false;
  await Promise.all(clients);
  await cli.close();
  const overlapping = spans.filter(([start, end]) => start < rotationEnded && end > rotationStarted).length;
  t.diagnostic(
    `re-encrypted ${rotated.invoices} invoices in ${(rotationEnded - rotationStarted).toFixed(0)} ms; ${overlapping} signs overlapped it, ${invoices.length - signedBefore} came after`,
  );
  assert.ok(overlapping > 0, "signs ran while the rotation did");
  assert.equal(rotated.kid, "a_b");
  assert.ok(rotated.invoices >= 600, `${rotated.invoices} re-encrypted`);
  assert.equal(rotated.webhooks, 1);
  assert.ok(invoices.length > signedBefore, "the server signed after the rotation");

  const rows = await server.ctx.db.selectFrom("invoices").select(["irn", "sealed"]).execute();
  assert.equal(rows.length, invoices.length);
  const stranded = rows.filter((row) => sealedKid(row.sealed as string) !== "a_b");
  assert.deepEqual(stranded, [], "every row is under the new key");
  await server.close();

  // The old key retired: every note of every invoice still reads.
  const reader = await instance({ EINVOICE_DATA_KEYS: newKey });
  const principal = { businessId: who.business_id, apiKey: who.api_key };
  for (const invoice of invoices) {
    const record = await reader.ctx.records.record(principal, String(invoice.irn));
    assert.equal(record.document.note, invoice.note);
    assert.equal(record.document.payment_terms_note, invoice.payment_terms_note);
  }
  const hook = await reader.ctx.db
    .selectFrom("webhooks")
    .select(["business_id", "secret"])
    .executeTakeFirstOrThrow();
  const [kid, key] = newKey.split(":") as [string, string];
  const opened = createSealer([{ kid, key: Buffer.from(key, "base64") }]).open(hook.secret, hook.business_id);
  assert.match(opened, /^whsec_/);
});

test(`the re-encryption selects rows by exact key id on ${ENGINE}: _ and % are not wildcards`, async (t) => {
  const { instance } = await deployment(t);
  const server = await instance();
  const who = await tenant(server.ctx);
  const kids = ["a_b", "axb", "a%b", "aZZb", "a", "a_"];
  const irns: string[] = [];
  for (const kid of kids) {
    const invoice = freshInvoice(who);
    await sign(server, who, invoice);
    const irn = String(invoice.irn);
    irns.push(irn);
    // The selector reads only the key id: the rest of the value need not open here.
    await server.ctx.db
      .updateTable("invoices")
      .set({ sealed: `v1.${kid}.iv.tag.body` })
      .where("irn", "=", irn)
      .execute();
  }
  const repository = invoiceRepository(server.ctx.db);
  for (const [index, kid] of kids.entries()) {
    const page = await repository.sealedNotUnder(kid, "", 100);
    assert.deepEqual(
      page.map((row) => row.irn),
      irns.filter((_, i) => i !== index).sort(),
      `not under '${kid}'`,
    );
  }
  // Keyset pages: only rows after the given IRN, in order.
  const sorted = [...irns].sort();
  const rest = await repository.sealedNotUnder("none", sorted[2] as string, 100);
  assert.deepEqual(
    rest.map((row) => row.irn),
    sorted.slice(3),
  );
});

test(`a running sandbox server on ${ENGINE} seals under the key rotate-data-key generated, without a restart`, async (t) => {
  const { instance, dir } = await deployment(t);
  const server = await instance();
  const who = await tenant(server.ctx);
  const before = freshInvoice(who);
  await sign(server, who, before);

  // `keys rotate-data-key` in the sandbox: a new key in the key file, then the re-encryption.
  assert.equal(rotateSandboxDataKey(dir), "k2");
  const cli = await instance();
  assert.deepEqual(await cli.ctx.dataKeys.resealAll(), { kid: "k2", invoices: 1, webhooks: 0, received: 0 });
  await cli.close();

  const after = freshInvoice(who);
  await sign(server, who, after);
  await server.ctx.webhooks.set(who.business_id, "https://erp.example/hooks");
  const rows = await server.ctx.db.selectFrom("invoices").select("sealed").execute();
  assert.deepEqual(
    rows.map((row) => sealedKid(row.sealed as string)),
    ["k2", "k2"],
  );
  const hook = await server.ctx.db.selectFrom("webhooks").select("secret").executeTakeFirstOrThrow();
  assert.equal(sealedKid(hook.secret), "k2");
  for (const invoice of [before, after]) {
    const res = await server.app.inject({ url: `${API}/${String(invoice.irn)}`, headers: who.headers });
    assert.equal(res.json().data.document.note, invoice.note);
  }
});

test(`a server without the key rotate-data-key made current answers 503 rather than seal under another (${ENGINE})`, async (t) => {
  const { instance } = await deployment(t);
  const oldKey = `k1:${newSecret.dataKey()}`;
  const newKey = `k2:${newSecret.dataKey()}`;
  const stale = await instance({ EINVOICE_DATA_KEYS: oldKey });
  const who = await tenant(stale.ctx);
  const cli = await instance({ EINVOICE_DATA_KEYS: `${newKey},${oldKey}` });
  await cli.ctx.dataKeys.resealAll();

  const res = await stale.app.inject({
    method: "POST",
    url: `${API}/sign`,
    headers: who.headers,
    payload: freshInvoice(who),
  });
  assert.equal(res.statusCode, 503, res.body);
  assert.equal(res.headers["retry-after"], "5");
  const body = res.json();
  assert.equal(body.status, false);
  assert.match(body.error.details, /data key 'k2'.*EINVOICE_DATA_KEYS/);
  // Nothing sealed, nothing to refuse: an invoice without confidential fields signs.
  await sign(stale, who, freshInvoice(who, "invoice-minimal"));
  assert.equal((await stale.ctx.db.selectFrom("invoices").select("irn").execute()).length, 1);
});

test(`rotating on ${ENGINE} re-encrypts the received invoices too: their notes read once the old key is retired`, async (t) => {
  const { instance } = await deployment(t);
  const oldKey = `r1:${newSecret.dataKey()}`;
  const newKey = `r2:${newSecret.dataKey()}`;
  const server = await instance({ EINVOICE_DATA_KEYS: `${oldKey},${newKey}` });
  const buyer = await tenant(server.ctx, { tin: "31845560-0001" });
  const seller = await tenant(server.ctx, { tin: "20198222-0002" });
  const sent: Json[] = [];
  for (let i = 0; i < 3; i++) {
    const invoice = freshInvoice(seller);
    invoice.accounting_customer_party = { ...(invoice.accounting_customer_party as Json), tin: buyer.tin };
    invoice.note = `delivery ${i}: gate 4, ask for Ngozi`;
    const res = await server.app.inject({
      method: "POST",
      url: `${API}/sign-transmit`,
      headers: seller.headers,
      payload: invoice,
    });
    assert.equal(res.statusCode, 200, res.body);
    sent.push(invoice);
  }
  const cli = await instance({ EINVOICE_DATA_KEYS: `${newKey},${oldKey}` });
  const rotated = await cli.ctx.dataKeys.resealAll();
  await cli.close();
  assert.equal(rotated.received, 3);
  const rows = await server.ctx.db
    .selectFrom("received_invoices")
    .select(["irn", "sealed", "document"])
    .execute();
  assert.equal(rows.length, 3);
  for (const row of rows) {
    assert.equal(sealedKid(row.sealed as string), "r2");
    // The note is sealed, not in the open document.
    assert.ok(!row.document.includes("Ngozi"));
  }
  await server.close();
  const reader = await instance({ EINVOICE_DATA_KEYS: newKey });
  const principal = { businessId: buyer.business_id, apiKey: buyer.api_key };
  for (const invoice of sent) {
    const received = await reader.ctx.inbox.read(principal, String(invoice.irn));
    assert.equal(received.document.note, invoice.note);
  }
});
