import assert from "node:assert/strict";
import { test } from "node:test";
import type { FastifyReply, FastifyRequest } from "fastify";
import { claimAfterCheck, idempotent } from "../../src/idempotency/hook.ts";
import { JsonText } from "../../src/json-text.ts";

/*
 * A keyed sign's deferred claim is handed to its handler once, and kept no longer: its entry holds
 * the request and its reply, and an entry left in place until the request is collected kept every
 * keyed request alive through the young generation's collections (hook.ts, claimAfterCheck).
 */

// The hook's service, none of which a deferred claim calls before its handler claims the key.
const unused = async () => {
  throw new Error("not called: the handler claims the key itself");
};
const hooks = idempotent({
  begin: unused,
  complete: unused,
  release: unused,
  answeredWith: () => {},
  claimWith: () => undefined,
});

/** A keyed JSON sign as the hook meets it: its body left unparsed, its route claiming after the check. */
function keyedSign(key: string) {
  const text = '{"irn":"INV1"}';
  const request = {
    method: "POST",
    headers: { "idempotency-key": key },
    body: new JsonText(text, async () => JSON.parse(text)),
    routeOptions: { url: "/api/v1/einvoice/sign", config: { claimAfterCheck: true } },
    principal: { businessId: "0d6f7a4e-3c1b-4f5e-9a2d-8b7c6e5f4a3b" },
  } as unknown as FastifyRequest;
  const reply = { statusCode: 200, raw: { once() {}, off() {} } } as unknown as FastifyReply;
  return { request, reply };
}

test("a deferred claim is handed to its handler once, and gone once the answer leaves if no handler took it", async () => {
  const taken = keyedSign("taken");
  await hooks.preValidation(taken.request, taken.reply);
  const claim = claimAfterCheck(taken.request);
  assert.equal(typeof claim?.claimWith, "function", "the handler gets its claim");
  assert.equal(claimAfterCheck(taken.request), undefined, "and nothing keeps it after");

  // Refused between the hook and the handler: the answer's leaving lets it go.
  const refused = keyedSign("refused");
  await hooks.preValidation(refused.request, refused.reply);
  assert.equal(await hooks.onSend(refused.request, refused.reply, "{}"), "{}");
  assert.equal(claimAfterCheck(refused.request), undefined);

  // A request without a key has none.
  const plain = keyedSign("unused");
  (plain.request.headers as Record<string, unknown>)["idempotency-key"] = undefined;
  await hooks.preValidation(plain.request, plain.reply);
  assert.equal(claimAfterCheck(plain.request), undefined);
});
