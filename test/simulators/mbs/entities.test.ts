import assert from "node:assert/strict";
import { constants, createPrivateKey, publicEncrypt } from "node:crypto";
import { test } from "node:test";
import {
  BAD_CREDENTIAL,
  BODY_TOO_LARGE,
  ENTITY_NOT_FOUND,
  INVALID_LOGIN,
  NO_ROUTE,
  TIN_NOT_FOUND,
  VALIDATION_FAILED,
} from "../../../src/simulators/mbs/envelopes.ts";
import { taxpayerLogin } from "../../../src/simulators/mbs/server.ts";
import type { Json } from "../../helpers.ts";
import { call, data, failure, first, refused, simulator, UUID } from "./harness.ts";

const CLOSED_ROUTES: [string, string][] = [
  ["GET", "/api/v1/entity"],
  // A UUID: an id that is not one is refused before the credentials (the next tests).
  ["GET", "/api/v1/entity/00000000-0000-4000-8000-000000000000"],
  ["GET", "/api/v1/invoice/crypto_keys/x"],
  ["POST", "/api/v1/invoice/party"],
  ["GET", "/api/v1/invoice/party/x"],
  ["POST", "/api/v1/utilities/verify-tin/"],
  ["POST", "/api/v1/utilities/authenticate"],
  ["POST", "/api/v1/invoice/irn/validate"],
  ["POST", "/api/v1/invoice/validate"],
  ["POST", "/api/v1/invoice/sign"],
  ["GET", "/api/v1/invoice/confirm/x"],
  ["GET", "/api/v1/invoice/download/x"],
  ["GET", "/api/v1/invoice/x"],
  ["PATCH", "/api/v1/invoice/update/x"],
  ["POST", "/api/v1/invoice/transmit/x"],
  ["PATCH", "/api/v1/invoice/transmit/x"],
  ["GET", "/api/v1/invoice/transmit/lookup/x"],
  ["GET", "/api/v1/invoice/transmit/lookup/tin/x"],
  ["GET", "/api/v1/invoice/transmit/lookup/party/x"],
  ["GET", "/api/v1/invoice/transmit/pull"],
  ["GET", "/api/v1/invoice/transmit/self-health-check"],
  ["POST", "/api/v1/vat/postpayment"],
  // Under its rule only (by default it is no route at all).
  ["POST", "/v1/vat/postPayment"],
];

test("health answers without credentials", async (t) => {
  const sim = await simulator(t);
  const reply = await call(sim, "GET", "/api", { auth: false });
  assert.equal(reply.status, 200);
  assert.deepEqual(reply.body, { healthy: true });
  const head = await fetch(`${sim.url}/api`, { method: "HEAD" });
  assert.equal(head.status, 200);
  const closed = await fetch(`${sim.url}/api/v1/entity`, { method: "HEAD" });
  assert.equal(closed.status, 400);
});

test("every other route refuses a missing or wrong credential with the authority's 400", async (t) => {
  // The documented VAT path exists only under its rule; then it is as closed as the others.
  const sim = await simulator(t, { rules: { documented_vat_path: true } });
  const variants: { name: string; auth?: boolean; headers?: Record<string, string> }[] = [
    { name: "none", auth: false },
    { name: "wrong secret", headers: { "x-api-secret": "nope" } },
    { name: "key only", auth: false, headers: { "x-api-key": sim.api_key } },
  ];
  for (const [method, url] of CLOSED_ROUTES) {
    for (const v of variants) {
      const reply = await call(sim, method, url, { ...(method === "GET" ? {} : { body: {} }), ...v });
      const error = failure(reply, 400, BAD_CREDENTIAL);
      assert.equal(error.handler, "handler", `${method} ${url} (${v.name})`);
      assert.equal(error.details, undefined);
    }
  }
  // Checked before the body is read: a malformed body does not hide the credential failure.
  failure(await call(sim, "POST", "/api/v1/invoice/sign", { raw: "{", auth: false }), 400, BAD_CREDENTIAL);
});

test("an unknown path answers the authority's 404 body, with or without credentials", async (t) => {
  const sim = await simulator(t);
  for (const auth of [true, false]) {
    for (const [method, url] of [
      ["GET", "/api/v1/nothing"],
      ["POST", "/api/v2/invoice/sign"],
      ["DELETE", "/api/v1/invoice/sign"],
      ["GET", "/"],
    ] as const) {
      const reply = await call(sim, method, url, { auth });
      assert.equal(reply.status, 404);
      assert.deepEqual(reply.body, { code: 404, data: null, message: NO_ROUTE });
    }
  }
});

test("malformed, non-object and oversized bodies get an envelope, never a 500", async (t) => {
  const sim = await simulator(t);
  refused(
    await call(sim, "POST", "/api/v1/invoice/party", { raw: "{not json" }),
    "request body is not valid JSON",
  );
  refused(
    await call(sim, "POST", "/api/v1/invoice/party", { raw: "[1,2]" }),
    "partyrequest must be a JSON object",
  );
  refused(
    await call(sim, "POST", "/api/v1/invoice/party", { raw: '"text"' }),
    "partyrequest must be a JSON object",
  );
  refused(
    await call(sim, "POST", "/api/v1/utilities/verify-tin/", { raw: "{" }),
    "request body is not valid JSON",
    "entity_actions",
  );
  // Whatever the content type says, the body is read as JSON.
  const plain = { raw: '{"tin":"1"}', headers: { "content-type": "text/plain" } };
  const unknown = failure(
    await call(sim, "POST", "/api/v1/utilities/verify-tin/", plain),
    404,
    TIN_NOT_FOUND,
  );
  assert.equal(unknown.handler, "entity_actions");
  const huge = JSON.stringify({ note: "x".repeat(1024 * 1024) });
  const error = failure(
    await call(sim, "POST", "/api/v1/invoice/validate", { raw: huge }),
    413,
    BODY_TOO_LARGE,
  );
  assert.match(String(error.details), /1048576 bytes/);
});

test("entities: each taxpayer by its own entity id, with its one business, searched with paging", async (t) => {
  const sim = await simulator(t);
  const tp = first(sim);
  assert.notEqual(tp.entity_id, tp.business_id, "[recorded] two different UUIDs");
  assert.match(tp.entity_id, UUID);
  assert.equal(tp.irn_template, `{{invoice_id(e.g:INV00XXX)}}-${tp.service_id}-{{YYYYMMDD(e.g:20250629)}}`);
  const entity = data(await call(sim, "GET", `/api/v1/entity/${tp.entity_id}`));
  assert.equal(entity.id, tp.entity_id);
  assert.equal(entity.name, tp.name);
  assert.deepEqual(entity.businesses, [
    {
      id: tp.business_id,
      reference: tp.tin,
      name: tp.name,
      tin: tp.tin,
      sector: (entity.businesses as Json[])[0]?.sector,
      irn_template: tp.irn_template,
      support_peppol: false,
      is_realtime_reporting: false,
      notification_channels: ["EMAIL"],
      is_active: true,
    },
  ]);
  assert.equal(typeof (entity.businesses as Json[])[0]?.sector, "string");
  for (const id of [tp.business_id, "00000000-0000-4000-8000-000000000000"]) {
    const error = failure(await call(sim, "GET", `/api/v1/entity/${id}`), 404, ENTITY_NOT_FOUND);
    assert.equal(error.handler, "entity_actions");
  }

  type Page = { items: Json[]; page: number; size: number; total: number };
  const search = async (q: string) => data(await call(sim, "GET", `/api/v1/entity?${q}`)) as unknown as Page;
  const all = await search("");
  assert.deepEqual(
    all.items.map((e) => e.id),
    sim.taxpayers.map((x) => x.entity_id),
  );
  assert.equal(all.total, 4);
  const page2 = await search("size=3&page=2&sort_by=created_at");
  assert.deepEqual(
    page2.items.map((e) => e.id),
    [sim.taxpayers[3]?.entity_id],
  );
  const byName = await search("sort_by=name&sort_direction_desc=true");
  assert.deepEqual(
    byName.items.map((e) => e.name),
    sim.taxpayers
      .map((x) => x.name)
      .sort()
      .reverse(),
  );
  const one = await search(`reference=${tp.tin}`);
  assert.deepEqual(
    one.items.map((e) => e.id),
    [tp.entity_id],
  );
  refused(
    await call(sim, "GET", "/api/v1/entity?size=101"),
    "size must be a whole number from 1 to 100",
    "entity_actions",
  );
  refused(await call(sim, "GET", "/api/v1/entity?page=0"), /page must be a whole number/, "entity_actions");
});

test("[recorded] an entity id that is not a UUID is a 400 of entity_actions, answered before the credentials", async (t) => {
  const sim = await simulator(t);
  // The recorded call's: a placeholder key, which was not refused.
  const placeholder = { auth: false, headers: { "x-api-key": "placeholder", "x-api-secret": "placeholder" } };
  const credentials: [string, { auth?: boolean; headers?: Record<string, string> }][] = [
    ["the APP's", {}],
    ["a placeholder", placeholder],
    ["none", { auth: false }],
  ];
  for (const [who, options] of credentials) {
    for (const [id, details] of [
      ["31569955-0001", "invalid UUID length: 13"],
      ["x", "invalid UUID length: 1"],
      ["zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz", "invalid UUID format"],
    ] as const) {
      const reply = await call(sim, "GET", `/api/v1/entity/${id}`, options);
      const { id: errorId, ...error } = reply.body.error as Json;
      assert.match(String(errorId), UUID);
      assert.deepEqual(
        { status: reply.status, body: { ...reply.body, error } },
        {
          status: 400,
          body: {
            code: 400,
            data: null,
            message: "error has occurred",
            error: { handler: "entity_actions", details, public_message: VALIDATION_FAILED },
          },
        },
        `${who} credential, id ${id}`,
      );
    }
  }
  // A UUID with a bad credential: the credential refusal, as on every closed route.
  const refusedKey = await call(sim, "GET", `/api/v1/entity/${first(sim).entity_id}`, placeholder);
  assert.equal(failure(refusedKey, 400, BAD_CREDENTIAL).handler, "handler");
  const head = await fetch(`${sim.url}/api/v1/entity/31569955-0001`, { method: "HEAD" });
  assert.equal(head.status, 400, "HEAD goes the GET route's way");
});

test("crypto keys: a base64 PEM public key that encrypts, and a base64 certificate", async (t) => {
  const sim = await simulator(t);
  const tp = first(sim);
  const keys = data(await call(sim, "GET", `/api/v1/invoice/crypto_keys/${tp.business_id}`));
  const pem = Buffer.from(String(keys.public_key), "base64").toString("utf8");
  assert.match(pem, /^-----BEGIN PUBLIC KEY-----\n[\s\S]+-----END PUBLIC KEY-----\n$/);
  const sealed = publicEncrypt(
    { key: pem, padding: constants.RSA_PKCS1_PADDING },
    Buffer.from('{"irn":"x"}'),
  );
  assert.equal(sealed.length, 256, "RSA 2048");
  assert.match(String(keys.certificate), /^[A-Za-z0-9+/]+=*$/);
  assert.throws(() => createPrivateKey(pem), "only the public half is served");
  const other = data(await call(sim, "GET", `/api/v1/invoice/crypto_keys/${sim.taxpayers[1]?.business_id}`));
  assert.notEqual(other.public_key, keys.public_key, "one key pair per taxpayer");
  failure(await call(sim, "GET", "/api/v1/invoice/crypto_keys/nobody"), 404, "business not found");
});

test("parties: created once per business and TIN, listed with paging", async (t) => {
  const sim = await simulator(t);
  const tp = first(sim);
  const body = {
    business_id: tp.business_id,
    party_name: "Lekki Homes Development Co",
    tin: "31845560-0001",
    email: "accounts@lekkihomes.example",
    telephone: "+2348029876543",
    postal_address: { street_name: "3 Faulks Road", city_name: "Aba", country: "NG" },
  };
  const created = data(await call(sim, "POST", "/api/v1/invoice/party", { body }));
  assert.match(String(created.id), UUID);
  assert.equal(created.party_name, body.party_name);
  assert.deepEqual(created.postal_address, body.postal_address);
  const repeat = data(await call(sim, "POST", "/api/v1/invoice/party", { body }));
  assert.equal(repeat.id, created.id, "a retried create answers the party already held");
  data(await call(sim, "POST", "/api/v1/invoice/party", { body: { ...body, tin: "31845560-0002" } }));

  // One reason per answer, the first rule broken, in the document's wording.
  const party = (change: Json) =>
    call(sim, "POST", "/api/v1/invoice/party", { body: { ...body, ...change } });
  const rows: [Json, string][] = [
    [{ party_name: undefined, tin: undefined }, "partyrequest.partyname is required"],
    [{ tin: "1234" }, "partyrequest.tin must be at least in length or value 5"],
    [{ email: "nobody" }, "partyrequest.email must be a valid email"],
    [{ telephone: "08029876543" }, "partyrequest.telephone must start with + (e.g: +2348012345678)"],
    [{ telephone: 123 }, "partyrequest.telephone must be a string"],
    [
      { business_description: "Shop" },
      "partyrequest.businessdescription must be at least in length or value 5",
    ],
    [
      { postal_address: { city_name: "Aba", country: "Nigeria" } },
      "partyrequest.postaladdress.country must be a valid country code, refer to the invoice resource apis",
    ],
    [{ business_id: "nobody" }, "invalid UUID length: 6"],
    [
      { business_id: "00000000-0000-4000-8000-000000000000" },
      "partyrequest.businessid must be a valid business, refer to the entity apis",
    ],
  ];
  for (const [change, details] of rows) refused(await party(change), details);

  type Page = { items: Json[]; total: number };
  const list = data(
    await call(sim, "GET", `/api/v1/invoice/party/${tp.business_id}?size=1`),
  ) as unknown as Page;
  assert.equal(list.total, 2);
  assert.equal(list.items.length, 1);
  const found = data(
    await call(sim, "GET", `/api/v1/invoice/party/${tp.business_id}?reference=31845560-0002`),
  ) as unknown as Page;
  assert.deepEqual(
    found.items.map((p) => p.tin),
    ["31845560-0002"],
  );
  const byName = data(
    await call(sim, "GET", `/api/v1/invoice/party/${tp.business_id}?party_name=LEKKI`),
  ) as unknown as Page;
  assert.equal(byName.total, 2, "party_name matches a part, in any case");
  const empty = data(
    await call(sim, "GET", `/api/v1/invoice/party/${sim.taxpayers[1]?.business_id}`),
  ) as unknown as Page;
  assert.equal(empty.total, 0);
  failure(await call(sim, "GET", "/api/v1/invoice/party/nobody"), 404, "business not found");
});

test("utilities: verify-tin knows the taxpayers; authenticate returns a taxpayer's entity id", async (t) => {
  const sim = await simulator(t);
  const tp = first(sim);
  const answers: Json[] = [];
  for (const url of ["/api/v1/utilities/verify-tin/", "/api/v1/utilities/verify-tin"]) {
    const details = data(await call(sim, "POST", url, { body: { tin: tp.tin } }));
    // [doc] the Swagger sample's fields, and no others.
    assert.deepEqual(Object.keys(details), [
      "address",
      "email",
      "id",
      "jtb_tin",
      "message",
      "phone",
      "rc_number",
      "status",
      "taxofficer_id",
      "taxofficer_name",
      "taxpayer_name",
      "taxpayer_type",
      "tin",
    ]);
    const { id, phone, rc_number, taxofficer_id, address, taxofficer_name, ...own } = details;
    assert.deepEqual(own, {
      email: taxpayerLogin(tp).email,
      jtb_tin: "",
      message: "TIN Information",
      status: "200 OK",
      taxpayer_name: tp.name,
      taxpayer_type: "C",
      tin: tp.tin,
    });
    assert.match(String(id), UUID);
    assert.notEqual(id, tp.entity_id, "the TIN record's id: nothing says it is the entity's");
    // In the sample's style: digits, as "06012138317", "1401999", "23".
    assert.match(String(phone), /^0\d{10}$/);
    assert.match(String(rc_number), /^\d+$/);
    assert.match(String(taxofficer_id), /^\d+$/);
    for (const value of [address, taxofficer_name]) assert.ok(typeof value === "string" && value.length > 0);
    answers.push(details);
  }
  assert.deepEqual(answers[1], answers[0], "the same TIN, the same answer");
  const other = data(
    await call(sim, "POST", "/api/v1/utilities/verify-tin/", { body: { tin: sim.taxpayers[1]?.tin } }),
  );
  assert.notEqual(other.id, answers[0]?.id);
  failure(
    await call(sim, "POST", "/api/v1/utilities/verify-tin/", { body: { tin: "99999999-0001" } }),
    404,
    TIN_NOT_FOUND,
  );
  refused(
    await call(sim, "POST", "/api/v1/utilities/verify-tin/", { body: {} }),
    "verifytinrequest.tin is required",
    "entity_actions",
  );

  const login = taxpayerLogin(tp);
  assert.equal(login.email, `${tp.service_id.toLowerCase()}@mbs-simulator.test`);
  const who = data(await call(sim, "POST", "/api/v1/utilities/authenticate", { body: login }));
  assert.deepEqual(
    { ...who, id: "", received_at: "" },
    { entity_id: tp.entity_id, id: "", message: "User logged in", received_at: "", status: "200 OK" },
  );
  const wrong = { ...login, password: "guess" };
  failure(await call(sim, "POST", "/api/v1/utilities/authenticate", { body: wrong }), 400, INVALID_LOGIN);
  refused(
    await call(sim, "POST", "/api/v1/utilities/authenticate", { body: { email: login.email } }),
    "authenticaterequest.password is required",
    "entity_actions",
  );
});
