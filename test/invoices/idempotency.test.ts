import assert from "node:assert/strict";
import { test } from "node:test";
import { sameDocument } from "../../src/invoices/duplicates.ts";
import { build, ENGINE, freshInvoice, ISO_TIMESTAMP, type Tenant, tenant } from "../helpers.ts";

const API = "/api/v1/einvoice";
type App = Awaited<ReturnType<typeof build>>["app"];

function post(app: App, path: string, who: Tenant, payload: unknown, key?: string) {
  return app.inject({
    method: "POST",
    url: `${API}/${path}`,
    headers: {
      ...who.headers,
      "content-type": "application/json",
      ...(key ? { "idempotency-key": key } : {}),
    },
    payload: typeof payload === "string" ? payload : JSON.stringify(payload),
  });
}

/** The same JSON, its keys in reverse order and indented. */
function reshuffled(value: unknown): string {
  const reverse = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(reverse)
      : typeof v === "object" && v !== null
        ? Object.fromEntries(
            Object.entries(v)
              .reverse()
              .map(([k, x]) => [k, reverse(x)]),
          )
        : v;
  return JSON.stringify(reverse(value), null, 3);
}

test(`without a key on ${ENGINE}: a repeated sign of the very same document says so; another document does not`, async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const invoice = freshInvoice(a);
  assert.equal((await post(app, "sign", a, invoice)).statusCode, 200);

  for (const path of ["sign", "sign-transmit"]) {
    const same = await post(app, path, a, reshuffled(invoice));
    assert.equal(same.statusCode, 400);
    const body = same.json();
    assert.equal(body.message, "IRN already exists.");
    assert.equal(body.code, 400);
    assert.equal(
      body.error.public_message,
      `This exact invoice is already signed under IRN ${invoice.irn}; treat this as success.`,
    );
    assert.match(body.error.details, /already registered with this exact document, signed at \d{4}-/);
    assert.match(body.timestamp, ISO_TIMESTAMP);

    const changed = await post(app, path, a, { ...invoice, note: "another note" });
    assert.equal(changed.statusCode, 400);
    assert.equal(changed.json().message, "IRN already exists.");
    assert.deepEqual(changed.json().error, [], "the spec's answer, unchanged");
  }

  const batch = await post(app, "batch/sign", a, { invoices: [invoice, { ...invoice, note: "changed" }] });
  const [identical, different] = batch.json().data;
  assert.equal(identical.status, "duplicate");
  assert.equal(identical.message, "IRN already exists.");
  assert.match(identical.details, /with this exact document/);
  assert.equal(different.status, "duplicate");
  assert.equal(different.details, `IRN '${invoice.irn}' is already registered`);
});

test("the same document is recognised whatever the letter case of its business_id (UUIDs are case-insensitive)", () => {
  const who = { business_id: "0d6f7a4e-3c1b-4f5e-9a2d-8b7c6e5f4a3b", service_id: "ABCD1234" };
  const document = freshInvoice(who);
  const shouted = { ...document, business_id: who.business_id.toUpperCase() };
  assert.ok(sameDocument(document, shouted));
  assert.ok(sameDocument(shouted, JSON.parse(reshuffled(document))));
  assert.ok(!sameDocument(document, { ...document, payable_note: "x" }));
  assert.ok(!sameDocument(document, { ...document, irn: String(document.irn).toLowerCase() }));
});
