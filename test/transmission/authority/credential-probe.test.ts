import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type TestContext, test } from "node:test";
import { DeliveryError } from "../../../src/transmission/authority/connector.ts";
import { credentialProbe, probedAuthority } from "../../../src/transmission/authority/credential-probe.ts";
import { mbsAuthority, PROBE_PATH } from "../../../src/transmission/authority/mbs.ts";

/*
 * The MBS connector's credential probe, and how a refusal that reads as a refused credential is
 * judged by it, against a real HTTP server that answers each path what the test says: the probe is
 * the only evidence the authority hold opens on, so what it sends and what it makes of each answer
 * is checked here call by call.
 */

type Answer = { status: number; type?: string; body: string; delayMs?: number };
type Seen = { method: string; url: string; body: string; secret: string | undefined };

/** [recorded] The credential refusal, exactly (the MBS spec, section 1). */
const CREDENTIAL: Answer = {
  status: 400,
  body: JSON.stringify({
    code: 400,
    data: null,
    message: "error has occurred",
    error: {
      id: "7c0d6a4e-2f4b-4f5e-9a61-0c1d2e3f4a5b",
      handler: "handler",
      public_message: "unable to validate api key",
    },
  }),
};
const OK: Answer = { status: 200, body: JSON.stringify({ code: 200, data: { items: [] } }) };
const NOT_REGISTERED: Answer = {
  status: 404,
  body: JSON.stringify({ code: 404, data: null, message: "not found" }),
};
const FIREWALL: Answer = { status: 403, type: "text/html", body: "<html><h1>Request blocked</h1></html>" };

async function upstream(t: TestContext, answers: Record<string, Answer>) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = req.url ?? "";
      const secret = req.headers["x-api-secret"];
      seen.push({
        method: req.method ?? "",
        url,
        body: Buffer.concat(chunks).toString(),
        secret: String(secret),
      });
      const key = Object.keys(answers).find((prefix) => `${req.method} ${url}`.startsWith(prefix));
      const answer = key ? answers[key] : NOT_REGISTERED;
      const send = () =>
        res
          .writeHead(answer?.status ?? 500, { "content-type": answer?.type ?? "application/json" })
          .end(answer?.body);
      if (answer?.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const connector = mbsAuthority({ url, apiKey: "k-123", apiSecret: "s-456", callTimeoutMs: 500 });
  return { seen, connector, set: (more: Record<string, Answer>) => Object.assign(answers, more) };
}

const PROBE = `GET ${PROBE_PATH}`;
const delivery = {
  irn: "INV1-AB12CD34-20240611",
  businessId: "b",
  document: { irn: "INV1-AB12CD34-20240611" },
};

test("the probe is entity search with the credential and no content: 2xx passes, 401/403 and the credential 400 refuse, the rest tell nothing", async (t) => {
  const { seen, connector, set } = await upstream(t, {});
  const probe = connector.probe;
  assert.ok(probe);
  const cases: Array<[Answer, string]> = [
    [OK, "passed"],
    [CREDENTIAL, "refused"],
    [{ status: 401, body: "" }, "refused"],
    [FIREWALL, "refused"],
    [{ status: 503, body: "<html>busy</html>" }, "unanswered"],
    [
      {
        status: 404,
        body: JSON.stringify({ code: 404, data: null, message: "no route found for this path" }),
      },
      "unanswered",
    ],
  ];
  for (const [answer, outcome] of cases) {
    set({ [PROBE]: answer });
    const said = await probe(AbortSignal.timeout(2000));
    assert.equal(said.outcome, outcome, JSON.stringify(answer));
    if (said.outcome === "refused")
      assert.match(said.message, /^MBS credential probe \(entity search\) answered 4/);
  }
  assert.ok(seen.every((s) => `${s.method} ${s.url}` === PROBE && s.body === "" && s.secret === "s-456"));
  // No answer within the call's limit: a DeliveryError, which the shared probe reads as unanswered.
  set({ [PROBE]: { ...OK, delayMs: 1000 } });
  const shared = credentialProbe({ probe, timeoutMs: 2000 });
  const late = await shared.fresh();
  assert.equal(late.outcome, "unanswered");
  assert.match(late.outcome === "unanswered" ? late.message : "", /no answer within 500 ms/);
});

test("the probe is asked once for refusals that come together, its answer stands a few seconds, and `fresh` asks again", async (t) => {
  const { seen, connector } = await upstream(t, { [PROBE]: OK });
  assert.ok(connector.probe);
  const probe = credentialProbe({ probe: connector.probe, timeoutMs: 2000, memoMs: 300 });
  const together = await Promise.all(Array.from({ length: 10 }, () => probe.ask()));
  assert.ok(together.every((said) => said.outcome === "passed"));
  assert.equal(seen.length, 1, "one call for ten refusals at once");
  await probe.ask();
  assert.equal(seen.length, 1, "within the memo: no call");
  await probe.fresh();
  assert.equal(seen.length, 2, "the hold's probe asks anew");
  await new Promise((resolve) => setTimeout(resolve, 350));
  await probe.ask();
  assert.equal(seen.length, 3, "past the memo: asked again");
});

test("a delivery refused as a credential is judged by the probe: refused → the hold's error in the probe's words; passed → this request's own, counted; no answer → retried", async (t) => {
  const { seen, connector, set } = await upstream(t, {
    "GET /api/v1/invoice/confirm/": NOT_REGISTERED,
    "POST /api/v1/invoice/validate": FIREWALL,
  });
  const probe = connector.probe;
  assert.ok(probe);
  const probed = (memoMs: number) =>
    probedAuthority(connector, credentialProbe({ probe, timeoutMs: 2000, memoMs }));
  const attempt = async (authority: ReturnType<typeof probed>) =>
    authority.deliver(delivery, AbortSignal.timeout(5000)).then(
      () => assert.fail("delivered"),
      (err: unknown) => {
        assert.ok(err instanceof DeliveryError, String(err));
        return err;
      },
    );

  // The bare connector reads the firewall's 403 as a refused credential: what the probe then judges.
  const raw = await attempt(connector as ReturnType<typeof probed>);
  assert.equal(raw.credential, true);

  set({ [PROBE]: OK });
  const passed = await attempt(probed(0));
  assert.equal(passed.credential, false);
  assert.equal(passed.hold, undefined);
  assert.equal(passed.permanent, false, "counted against the job's budget, not failed for good");
  assert.match(passed.message, /^MBS validate answered 403: "<html><h1>Request blocked<\/h1><\/html>"/);
  assert.match(
    passed.message,
    /refused for this request, not for the credential, which passed the credential probe/,
  );
  assert.deepEqual(passed.answer, { status: 403 });

  set({ [PROBE]: CREDENTIAL });
  const refused = await attempt(probed(0));
  assert.equal(refused.credential, true);
  assert.equal(refused.hold, "configuration");
  assert.match(
    refused.message,
    /^MBS credential probe \(entity search\) answered 400: unable to validate api key/,
  );
  assert.doesNotMatch(
    refused.message,
    /Request blocked|validate answered/,
    "nothing of the request's answer",
  );

  set({ [PROBE]: { status: 502, type: "text/html", body: "<html>bad gateway</html>" } });
  const unknown = await attempt(probed(0));
  assert.equal(unknown.credential, false);
  assert.equal(unknown.permanent, false);
  assert.match(unknown.message, /whether the credential was refused is not known/);

  // Each attempt asked its own probe (no memo): confirm, validate, probe.
  const probes = seen.filter((s) => `${s.method} ${s.url}` === PROBE).length;
  assert.equal(probes, 3);
});
