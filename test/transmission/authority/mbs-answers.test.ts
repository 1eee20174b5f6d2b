import assert from "node:assert/strict";
import { test } from "node:test";
import {
  answerOf,
  CREDENTIAL_REFUSED,
  classify,
  describe,
  failureOf,
  isCredentialRefusal,
  type MbsAnswer,
  NO_ROUTE,
  NO_WEBHOOK,
  NOT_ENABLED,
  SIGNED_NOT_TRANSMITTED,
} from "../../../src/transmission/authority/mbs-answers.ts";

/*
 * The classifier on its own: each verdict it can give, what decides it, and which of two signals in
 * one answer wins. The answers are the MBS spec's (shared/spec/firs-mbs-api.md, sections 1, 2, 4, 7).
 */

/** MBS's error envelope (section 4) [recorded]. */
const envelope = (
  status: number,
  error: Record<string, unknown>,
  message = "error has occurred",
): MbsAnswer => ({
  status,
  body: { code: status, data: null, message, error: { id: "0b1d-e1", handler: "invoice_actions", ...error } },
});
/** [recorded][client] The one public_message of every validation refusal, duplicates included. */
const REFUSED =
  "validation failed: we are unable to process your request. also confirm this is not a duplicate request";
/** [recorded] The no-route 404: `message` only, no `error` object. */
const noRoute = (status = 404): MbsAnswer => ({
  status,
  body: {
    code: status,
    data: null,
    message: "no route found for this path. kindly check your request and try again",
  },
});
const credential = (status = 400): MbsAnswer =>
  envelope(status, { handler: "handler", public_message: "unable to validate api key" });
const verdict = (answer: MbsAnswer) => classify(answer).kind;

test("the texts matched are exactly the spec's, in the case they are compared in", () => {
  // messages() and said() lower-case what MBS says, so the constants they are compared with must be.
  for (const text of [CREDENTIAL_REFUSED, NO_ROUTE, SIGNED_NOT_TRANSMITTED, NO_WEBHOOK]) {
    assert.equal(text, text.toLowerCase(), text);
  }
  assert.equal(CREDENTIAL_REFUSED, "unable to validate api key");
  assert.equal(NO_ROUTE, "no route found for this path");
  assert.equal(NOT_ENABLED, "NOT_ENABLED", "matched as MBS writes it, in the raw body");
});

test("ok: any 2xx, with or without the envelope, whatever its data says", () => {
  for (const status of [200, 201, 202, 204, 299]) {
    assert.equal(verdict({ status, body: { code: status, data: null } }), "ok", String(status));
  }
  assert.equal(verdict({ status: 200, body: { healthy: true } }), "ok", "[recorded] the health check");
  assert.equal(
    verdict({ status: 200, body: { id: "65a1b2c3d4e5f60718293a4b", vatStatus: false } }),
    "ok",
    "[doc] a bare VAT record",
  );
  assert.equal(verdict({ status: 200, body: "" }), "ok");
  assert.equal(
    verdict({ status: 200, body: { code: 200, data: { ok: false } } }),
    "ok",
    "data is kept, not judged",
  );
  // A 2xx that carries NOT_ENABLED or an error object is still a success: status decides first.
  assert.equal(verdict({ status: 200, body: { code: 200, data: { state: NOT_ENABLED } } }), "ok");
  // The seller's own note echoed by download is not the answer's words.
  assert.equal(
    verdict({ status: 200, body: { code: 200, data: { note: "Invoice is Signed but could not transmit" } } }),
    "ok",
  );
  assert.equal(verdict({ status: 300, body: { code: 300 } }), "refused", "300 is not a success");
});

test("partial: the signed-but-not-transmitted text, in an error or inside a 2xx, in any case, wins over every status", () => {
  const words = "Invoice is Signed but could not transmit. Accounting parties APP might be offline or busy";
  assert.equal(verdict(envelope(400, { public_message: words })), "partial");
  assert.equal(verdict(envelope(400, { details: words })), "partial");
  assert.equal(verdict(envelope(400, { sub_message: words.toUpperCase() })), "partial");
  assert.equal(verdict({ status: 200, body: { code: 200, data: { ok: false, message: words } } }), "partial");
  assert.equal(verdict({ status: 200, body: { code: 200, message: words } }), "partial");
  assert.equal(verdict({ status: 502, body: words }), "partial", "a plain-text body is its own words");
  assert.equal(verdict(envelope(503, { public_message: words, sub_message: NOT_ENABLED })), "partial");
});

test("not_enabled: NOT_ENABLED anywhere in a failure's body, before the status is read", () => {
  assert.equal(
    verdict(envelope(400, { public_message: "buyer cannot receive", sub_message: NOT_ENABLED })),
    "not_enabled",
  );
  assert.equal(
    verdict({ status: 400, body: { code: 400, data: { reason: `buyer ${NOT_ENABLED}` } } }),
    "not_enabled",
  );
  assert.equal(verdict({ status: 422, body: NOT_ENABLED }), "not_enabled");
  // A 5xx or a refused credential that names it is still the buyer's matter: retrying will not help.
  assert.equal(verdict(envelope(503, { sub_message: NOT_ENABLED })), "not_enabled");
  assert.equal(
    verdict(envelope(400, { public_message: "unable to validate api key", sub_message: NOT_ENABLED })),
    "not_enabled",
  );
  // MBS writes it in capitals: "not enabled" in a sentence is not the marker.
  assert.equal(verdict(envelope(400, { public_message: "receiving is not enabled" })), "refused");
  // The body is read up to 8,000 characters: a marker past them is not seen.
  const padded = {
    status: 400,
    body: { code: 400, error: { details: "x".repeat(9000), sub_message: NOT_ENABLED } },
  };
  assert.equal(verdict(padded), "refused");
});

test("transient: 408, 425, 429 and every 5xx by status alone, and any failure that is not MBS's envelope", () => {
  for (const status of [408, 425, 429, 500, 502, 503, 504, 599]) {
    assert.equal(verdict({ status, body: null }), "transient", String(status));
    // Even when the envelope's words would read as a refusal.
    assert.equal(
      verdict(envelope(status, { public_message: REFUSED, details: "invalid UUID length: 35" })),
      "transient",
      `${status} envelope`,
    );
  }
  // A proxy's page or a load balancer's text is not MBS's verdict.
  assert.equal(verdict({ status: 400, body: "Bad Request" }), "transient");
  assert.equal(verdict({ status: 404, body: "<html>Not Found</html>" }), "transient");
  assert.equal(verdict({ status: 400, body: null }), "transient");
  assert.equal(verdict({ status: 409, body: ["not", "an", "object"] }), "transient");
  assert.equal(
    verdict({ status: 400, body: { message: "bad gateway config" } }),
    "transient",
    "no code, no error",
  );
  // A transport failure has no status a client could read as MBS's (0 from a reset).
  assert.equal(verdict({ status: 0, body: undefined }), "transient");
});

test("configuration: 401 and 403, the recorded credential 400, the no-route 404, a missing webhook", () => {
  assert.equal(verdict({ status: 401, body: null }), "configuration");
  assert.equal(verdict({ status: 403, body: "<html>Forbidden</html>" }), "configuration");
  assert.equal(verdict(credential()), "configuration");
  assert.equal(
    verdict(envelope(400, { public_message: "Unable To Validate API Key" })),
    "configuration",
    "compared without case",
  );
  assert.equal(verdict(noRoute()), "configuration");
  assert.equal(verdict(envelope(400, { public_message: "webhook url is not setup" })), "configuration");
  assert.equal(verdict(envelope(400, { details: "Webhook URL is not setup for this APP" })), "configuration");

  // Each text counts only where the spec records it: the credential text in public_message of a 400,
  // the no-route text at the start of a 404's message.
  assert.equal(
    verdict(envelope(400, { public_message: REFUSED, details: "unable to validate api key" })),
    "refused",
  );
  assert.equal(
    verdict(envelope(400, { public_message: "unable to validate api key for TIN 1234" })),
    "refused",
  );
  assert.equal(verdict(envelope(404, { public_message: "unable to validate api key" })), "refused");
  assert.equal(verdict(noRoute(400)), "refused", "the no-route text on a 400 is not the no-route answer");
  assert.equal(verdict(envelope(404, {}, "invoice not found; no route found for this path")), "refused");
});

test("refused: any other 4xx in MBS's envelope, whatever its words say about duplicates or trying again", () => {
  for (const details of [
    "invoicerequest.invoice.taxcurrencycode is required",
    "unable to complete this operation at this time, kindly try again later",
    "irn validation failed for this business, refer to the template and try again",
    "irn INV0001-AB12CD34-20261115 is a duplicate",
  ]) {
    assert.equal(verdict(envelope(400, { public_message: REFUSED, details })), "refused", details);
  }
  assert.equal(verdict(envelope(404, { public_message: "invoice not found" })), "refused");
  assert.equal(
    verdict(envelope(422, { handler: "entity_actions", public_message: "entity not found" })),
    "refused",
  );
  assert.equal(
    verdict({ status: 400, body: { code: 400 } }),
    "refused",
    "an envelope with a code and no error",
  );
  assert.equal(
    verdict({ status: 400, body: { error: "bad" } }),
    "refused",
    "an envelope with an error and no code",
  );
});

test("only the answer's own words are read, each bounded: a text past 2,000 characters is not matched", () => {
  const late = `${"x".repeat(2000)}webhook url is not setup`;
  assert.equal(verdict(envelope(400, { public_message: late })), "refused");
  assert.equal(
    verdict(envelope(400, { public_message: `${"x".repeat(1970)}webhook url is not setup` })),
    "configuration",
  );
  // data.message is the answer's; the rest of data is the invoice echoed back.
  assert.equal(
    verdict({ status: 400, body: { code: 400, error: {}, data: { message: "webhook url is not setup" } } }),
    "configuration",
  );
  assert.equal(
    verdict({ status: 400, body: { code: 400, error: {}, data: { note: "webhook url is not setup" } } }),
    "refused",
  );
});

test("answerOf keeps the error object's fields verbatim and bounded, and nothing else", () => {
  assert.deepEqual(
    answerOf(
      envelope(400, {
        public_message: REFUSED,
        details: "invalid UUID length: 35",
        sub_message: "S",
        extra: "dropped",
      }),
    ),
    {
      status: 400,
      id: "0b1d-e1",
      handler: "invoice_actions",
      details: "invalid UUID length: 35",
      public_message: REFUSED,
      sub_message: "S",
    },
  );
  assert.deepEqual(answerOf(noRoute()), { status: 404 }, "the no-route answer has no error object");
  assert.deepEqual(answerOf({ status: 502, body: "<html>" }), { status: 502 });
  assert.deepEqual(answerOf(envelope(400, { details: 42, public_message: null })), {
    status: 400,
    id: "0b1d-e1",
    handler: "invoice_actions",
  });
  assert.equal(answerOf(envelope(400, { details: "d".repeat(5000) })).details?.length, 2000);
});

test("isCredentialRefusal: 401, 403 and the recorded credential 400 only", () => {
  assert.equal(isCredentialRefusal({ status: 401, body: null }), true);
  assert.equal(isCredentialRefusal({ status: 403, body: null }), true);
  assert.equal(isCredentialRefusal(credential()), true);
  assert.equal(isCredentialRefusal(noRoute()), false, "a wrong path is configuration, not a credential");
  assert.equal(isCredentialRefusal(envelope(400, { public_message: "webhook url is not setup" })), false);
  assert.equal(isCredentialRefusal(credential(404)), false);
  assert.equal(isCredentialRefusal(envelope(400, { details: "unable to validate api key" })), false);
});

test("describe names the step, the status, the authority's words and the request id", () => {
  assert.equal(
    describe("sign", {
      ...envelope(400, { public_message: REFUSED, details: "invalid UUID length: 35" }),
      requestId: "r-7",
    }),
    `MBS sign answered 400: ${REFUSED}: invalid UUID length: 35 (request r-7)`,
  );
  assert.equal(
    describe("confirm", noRoute()),
    "MBS confirm answered 404: no route found for this path. kindly check your request and try again",
  );
  assert.equal(
    describe("transmit", { status: 502, body: "<html>Bad Gateway</html>" }),
    'MBS transmit answered 502: "<html>Bad Gateway</html>"',
  );
  assert.equal(
    describe("download", { status: 503, body: "z".repeat(500) }).length,
    "MBS download answered 503: ".length + 202,
  );
  assert.equal(describe("validate", { status: 500, body: null }), "MBS validate answered 500");
});

test("failureOf turns each verdict into the failure the outbox acts on", () => {
  const refused = failureOf("validate", envelope(400, { public_message: REFUSED, details: "x" }));
  assert.deepEqual(
    [refused.permanent, refused.hold, refused.state, refused.credential],
    [true, undefined, undefined, false],
  );
  assert.equal(refused.answer?.details, "x");
  const transient = failureOf("sign", { status: 503, body: null });
  assert.deepEqual([transient.permanent, transient.hold, transient.state], [false, undefined, undefined]);
  const held = failureOf("sign", credential());
  assert.deepEqual([held.permanent, held.hold, held.credential], [false, "configuration", true]);
  const wrongHost = failureOf("confirm", noRoute());
  assert.deepEqual(
    [wrongHost.permanent, wrongHost.hold, wrongHost.credential],
    [false, "configuration", false],
  );
  const buyer = failureOf("transmit", envelope(400, { sub_message: NOT_ENABLED }));
  assert.deepEqual([buyer.permanent, buyer.hold, buyer.state], [false, "buyer", "AWAITING_BUYER"]);
  const partial = failureOf(
    "transmit",
    envelope(400, { public_message: "Invoice is Signed but could not transmit." }),
  );
  assert.deepEqual([partial.permanent, partial.hold, partial.state], [false, undefined, "REGISTERED"]);
  // A step that has decided otherwise passes its own verdict: a refused sign is a question, not final.
  const asked = failureOf("sign", envelope(400, { public_message: REFUSED }), { kind: "transient" });
  assert.equal(asked.permanent, false);
  assert.equal(asked.message, `MBS sign answered 400: ${REFUSED}`);
});
