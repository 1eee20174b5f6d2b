import assert from "node:assert/strict";
import { test } from "node:test";
import { build, ENGINE, freshInvoice, type Json, storedIrns, tenant } from "../../helpers.ts";
import { signableLines } from "../records/pdf-load.ts";

/*
 * A single validate, sign or sign-transmit hands its JSON body to the preparation thread as text,
 * unparsed on the event loop (JsonText, register.ts `checkText`). What the event loop used to find
 * in the parsed body, the thread now reports: these are the answers that must not change.
 */

const API = "/api/v1/einvoice";

test(`an unparsed body on ${ENGINE}: the business it claims, its bad JSON and its size answered as a parsed one was`, async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const b = await tenant(ctx, { tin: "30198222-0003" });
  const post = (route: string, payload: string, headers: Record<string, string> = {}) =>
    app.inject({
      method: "POST",
      url: `${API}/${route}`,
      headers: { ...a.headers, "content-type": "application/json", ...headers },
      payload,
    });

  // Another business's id: refused as not the caller's, for validate and sign alike.
  const theirs = freshInvoice(b);
  for (const route of ["validate", "sign"]) {
    const res = await post(route, JSON.stringify({ ...theirs, irn: freshInvoice(a).irn }));
    assert.equal(res.statusCode, 400, res.body);
    const violations = res.json().error.violations as Array<{ rule: string; path: string }>;
    assert.deepEqual(violations[0], {
      path: "business_id",
      rule: "business_exists",
      message: `business '${b.business_id}' does not exist or is not the business of these API credentials`,
      actual: b.business_id,
    });
  }
  // Its own id in upper case is its own (UUIDs compare case-insensitively).
  const shouted = freshInvoice(a);
  const signed = await post("sign", JSON.stringify({ ...shouted, business_id: a.business_id.toUpperCase() }));
  assert.equal(signed.statusCode, 200, signed.body);
  // No business_id, or one that is not text: the document's own findings, never a 500.
  for (const business_id of [undefined, 42]) {
    const res = await post("sign", JSON.stringify({ ...freshInvoice(a), business_id }));
    assert.equal(res.statusCode, 400, res.body);
    assert.ok(
      (res.json().error.violations as Array<{ path: string }>).some((v) => v.path === "business_id"),
      res.body,
    );
  }

  // Text that is not JSON: the body parser's own answer, with an Idempotency-Key too.
  const valid = JSON.stringify(freshInvoice(a));
  const broken = valid.slice(0, -2);
  const plain = await post("sign", broken);
  const keyed = await post("sign", broken, { "idempotency-key": "unparsed-1" });
  for (const res of [plain, keyed]) {
    assert.equal(res.statusCode, 400, res.body);
    assert.match(res.json().error.details, /^the request body is not valid JSON/);
  }
  assert.equal((await post("validate", broken)).json().error.details, plain.json().error.details);

  // A document of more lines than the preparation thread checks (isLargeDocument) is read and
  // checked as any body, and signed.
  const large = signableLines(a, 201) as Json;
  const res = await post("sign", JSON.stringify(large));
  assert.equal(res.statusCode, 200, res.body);
  const irns = await storedIrns(ctx, a.business_id);
  assert.ok(irns.includes(String(large.irn)) && irns.includes(String(shouted.irn)));
  assert.equal(irns.length, 2, "nothing else was stored");

  // The same document again: the duplicate compares the stored invoice with the body, parsed then.
  const again = await post("sign", JSON.stringify({ ...shouted, business_id: a.business_id.toUpperCase() }));
  assert.equal(again.statusCode, 400, again.body);
  assert.equal(again.json().message, "IRN already exists.");
  assert.ok(again.headers["einvoice-identical-document"], "the very document: said so");
  const changed = await post("sign", JSON.stringify({ ...shouted, note: "another" }));
  assert.equal(changed.json().message, "IRN already exists.");
  assert.equal(changed.headers["einvoice-identical-document"], undefined, "another document under the IRN");
});
