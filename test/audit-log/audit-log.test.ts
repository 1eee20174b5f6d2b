import assert from "node:assert/strict";
import { test } from "node:test";
import { build, fixture, freshInvoice, tenant } from "../helpers.ts";

const API = "/api/v1/einvoice";

test("every change carries its actor; audit verify checks histories against state and the credential log", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = fixture("invoice-full", a);
  const irn = String(invoice.irn);
  await app.inject({ method: "POST", url: `${API}/sign`, headers: a.headers, payload: invoice });
  await app.inject({ url: `${API}/transmit/${irn}`, headers: a.headers });
  await app.inject({
    method: "PATCH",
    url: `${API}/update/${irn}`,
    headers: a.headers,
    payload: { payment_status: "PAID", note: "an attempt to change the document" },
  });
  await app.inject({
    method: "POST",
    url: `${API}/report-fiscalization`,
    headers: a.headers,
    payload: fixture("report-fiscalization", a),
  });

  const record = (await app.inject({ url: `${API}/${irn}`, headers: a.headers })).json().data;
  assert.deepEqual(record.document, invoice, "no endpoint changes a signed document");
  const actors = (record.history as { type: string; actor: string }[]).map((e) => [
    e.type,
    e.actor.split(":")[0],
  ]);
  assert.deepEqual(actors, [
    ["signed", "key"],
    ["transmission_queued", "key"],
    ["transmission_attempt", "outbox"],
    ["transmitted", "outbox"],
    ["payment_updated", "key"],
    ["fiscalization_reported", "key"],
  ]);
  assert.ok(
    (record.history as { actor: string }[]).some((e) => e.actor === `key:${a.api_key}`),
    "the credential, by its key",
  );
  assert.equal(JSON.stringify(record.history).includes(a.api_secret), false);

  const log = await ctx.db
    .selectFrom("audit_log")
    .select(["actor", "action", "subject"])
    .where("business_id", "=", a.business_id)
    .orderBy("id")
    .execute();
  assert.deepEqual(
    log.map((e) => [e.action, e.actor]),
    [
      ["business.created", "cli"],
      ["key.created", "cli"],
    ],
  );
  assert.deepEqual(await ctx.audit.verify(), { checked: 1, broken: [] });

  // A state changed behind the service's back no longer matches the history.
  await ctx.db.updateTable("invoices").set({ payment_status: "REJECTED" }).where("irn", "=", irn).execute();
  let result = await ctx.audit.verify();
  assert.deepEqual(
    result.broken.map((b) => b.reason),
    ["payment_status is REJECTED but the history says PAID"],
  );
  await ctx.db
    .updateTable("invoices")
    .set({ payment_status: "PAID", status: "SIGNED" })
    .where("irn", "=", irn)
    .execute();
  result = await ctx.audit.verify();
  assert.deepEqual(
    result.broken.map((b) => b.reason),
    ["status is SIGNED but the history says TRANSMITTED"],
  );
  await ctx.db.updateTable("invoices").set({ status: "TRANSMITTED" }).where("irn", "=", irn).execute();

  // A credential that appeared without going through the service is found too.
  await ctx.db
    .insertInto("api_keys")
    .values({
      api_key: "ak_smuggled",
      business_id: a.business_id,
      secret_hash: "00",
      created_at: new Date().toISOString(),
      revoked_at: null,
    })
    .execute();
  result = await ctx.audit.verify();
  assert.deepEqual(
    result.broken.map((b) => b.reason),
    ["API key ak_smuggled exists but its creation is not in the audit log"],
  );
  await ctx.db.deleteFrom("api_keys").where("api_key", "=", "ak_smuggled").execute();

  await ctx.businesses.revokeKey(a.api_key, "cli");
  const revoked = await ctx.db
    .selectFrom("audit_log")
    .select(["action", "subject"])
    .where("action", "=", "key.revoked")
    .execute();
  assert.deepEqual(revoked, [{ action: "key.revoked", subject: a.api_key }]);
  await ctx.webhooks.set(a.business_id, "https://erp.example/hooks");
  assert.deepEqual(await ctx.audit.verify(), { checked: 1, broken: [] });
});

test("a credential's actions are attributed to that credential", async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const second = await ctx.businesses.createKey(a.business_id);
  const invoice = freshInvoice(a, "invoice-minimal");
  await app.inject({
    method: "POST",
    url: `${API}/sign`,
    headers: { "api-key": second.api_key, "api-secret": second.api_secret },
    payload: invoice,
  });
  await app.inject({
    method: "PATCH",
    url: `${API}/update/${String(invoice.irn)}`,
    headers: a.headers,
    payload: { payment_status: "PAID" },
  });
  const history = (await app.inject({ url: `${API}/${String(invoice.irn)}`, headers: a.headers })).json().data
    .history as { type: string; actor: string }[];
  assert.deepEqual(
    history.map((e) => [e.type, e.actor]),
    [
      ["signed", `key:${second.api_key}`],
      ["payment_updated", `key:${a.api_key}`],
    ],
  );
});
