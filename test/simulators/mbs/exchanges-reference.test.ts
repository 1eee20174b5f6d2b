import assert from "node:assert/strict";
import { test } from "node:test";
import type { Json } from "../../helpers.ts";
import { call, simulator, UUID } from "./harness.ts";

// The answers the MBS spec records word for word (sections 1, 2 and 4), and the reference lists with
// their recorded sizes and field names: one row each.

const NO_ROUTE = {
  code: 404,
  data: null,
  message: "no route found for this path. kindly check your request and try again",
};

test("[recorded] the health check, the no-route 404 and the credential 400, exactly", async (t) => {
  const sim = await simulator(t);
  const health = await call(sim, "GET", "/api", { auth: false });
  assert.deepEqual(health, { status: 200, body: { healthy: true } });

  for (const [method, url] of [
    ["GET", "/api/v1/nothing"],
    ["GET", "/api/v2/entity"],
    ["POST", "/v1/vat/postPayment"],
    ["DELETE", "/api/v1/invoice/sign"],
  ] as const) {
    for (const auth of [true, false]) {
      assert.deepEqual(
        await call(sim, method, url, { auth }),
        { status: 404, body: NO_ROUTE },
        `${method} ${url}`,
      );
    }
  }

  // [recorded] seen on entity search, validate, sign, party, confirm, download, update, transmit, pull, authenticate.
  const seen: [string, string][] = [
    ["GET", "/api/v1/entity"],
    ["POST", "/api/v1/invoice/validate"],
    ["POST", "/api/v1/invoice/sign"],
    ["POST", "/api/v1/invoice/party"],
    ["GET", "/api/v1/invoice/confirm/INV1-ABCD1234-20261115"],
    ["GET", "/api/v1/invoice/download/INV1-ABCD1234-20261115"],
    ["PATCH", "/api/v1/invoice/update/INV1-ABCD1234-20261115"],
    ["POST", "/api/v1/invoice/transmit/INV1-ABCD1234-20261115"],
    ["GET", "/api/v1/invoice/transmit/pull"],
    ["POST", "/api/v1/utilities/authenticate"],
  ];
  for (const [method, url] of seen) {
    const reply = await call(sim, method, url, {
      headers: { "x-api-key": "placeholder", "x-api-secret": "placeholder" },
      auth: false,
      ...(method === "GET" ? {} : { body: {} }),
    });
    const { id, ...error } = reply.body.error as Json;
    assert.match(String(id), UUID);
    assert.deepEqual(
      { status: reply.status, body: { ...reply.body, error } },
      {
        status: 400,
        body: {
          code: 400,
          data: null,
          message: "error has occurred",
          error: { handler: "handler", public_message: "unable to validate api key" },
        },
      },
      `${method} ${url}`,
    );
  }
});

test("[recorded] the entity asked for by a TIN with the placeholder key: the UUID refusal, not the credential's", async (t) => {
  const sim = await simulator(t);
  // The recorded call: a TIN where the entity id goes, and the placeholder credential.
  const reply = await call(sim, "GET", "/api/v1/entity/31569955-0001", {
    headers: { "x-api-key": "placeholder", "x-api-secret": "placeholder" },
    auth: false,
  });
  const { id, ...error } = reply.body.error as Json;
  assert.match(String(id), UUID);
  assert.deepEqual(
    { status: reply.status, body: { ...reply.body, error } },
    {
      status: 400,
      body: {
        code: 400,
        data: null,
        message: "error has occurred",
        error: {
          handler: "entity_actions",
          details: "invalid UUID length: 13",
          public_message:
            "validation failed: we are unable to process your request. also confirm this is not a duplicate request",
        },
      },
    },
  );
});

type ListRow = {
  list: string;
  mark: string;
  /** The size MBS's list has, when the simulator's is complete; the least size of an extract. */
  size: number | { atLeast: number };
  fields: string[];
  example?: Json;
};

const LISTS: ListRow[] = [
  {
    list: "countries",
    mark: "[recorded] 249",
    size: 249,
    fields: [
      "name",
      "alpha_2",
      "alpha_3",
      "country_code",
      "iso_3166_2",
      "region",
      "sub_region",
      "intermediate_region",
      "region_code",
      "sub_region_code",
      "intermediate_region_code",
    ],
    example: {
      name: "Nigeria",
      alpha_2: "NG",
      alpha_3: "NGA",
      country_code: "566",
      iso_3166_2: "ISO 3166-2:NG",
      region: "Africa",
      sub_region: "Sub-Saharan Africa",
      intermediate_region: "Western Africa",
      region_code: "002",
      sub_region_code: "202",
      intermediate_region_code: "011",
    },
  },
  {
    list: "currencies",
    mark: "[recorded] 118 (Swagger), 117 (session): the package's table has 119",
    size: 119,
    fields: ["code", "name", "name_plural", "symbol", "symbol_native", "decimal_digits", "rounding"],
    example: {
      code: "NGN",
      name: "Nigerian Naira",
      name_plural: "Nigerian nairas",
      symbol: "₦",
      symbol_native: "₦",
      decimal_digits: 2,
      rounding: 0,
    },
  },
  {
    list: "invoice-types",
    mark: "[recorded] 20",
    size: 20,
    fields: ["code", "value"],
    example: { code: "380", value: "Credit Note" },
  },
  {
    list: "services-codes",
    mark: "[recorded] 419 ISIC classes; an extract unless loaded from a file",
    size: { atLeast: 10 },
    fields: ["code", "description"],
    example: {
      code: "0111",
      description: "Growing of cereals (except rice), leguminous crops and oil seeds",
    },
  },
  {
    list: "vat-exemptions",
    mark: "[recorded] 236 entries; an extract",
    size: { atLeast: 10 },
    fields: ["heading_no", "harmonized_system_code", "tariff_category", "tariff", "description"],
  },
  {
    list: "tax-categories",
    mark: "[doc] fields [unknown]",
    size: { atLeast: 4 },
    fields: ["code", "value", "percent"],
  },
  { list: "payment-means", mark: "[doc] fields [unknown]", size: { atLeast: 5 }, fields: ["code", "value"] },
  { list: "hs-codes", mark: "[client]", size: { atLeast: 3 }, fields: ["hscode", "description"] },
  { list: "states", mark: "[client]", size: { atLeast: 3 }, fields: ["code", "name"] },
  { list: "lgas", mark: "[client]", size: { atLeast: 3 }, fields: ["code", "name", "state_code"] },
  { list: "invoice-quantity-codes", mark: "[client]", size: { atLeast: 3 }, fields: ["code", "value"] },
];

test("[recorded] the reference lists: {code: 200, data: [...]} without credentials, their sizes and fields", async (t) => {
  const sim = await simulator(t);
  for (const row of LISTS) {
    const reply = await call(sim, "GET", `/api/v1/invoice/resources/${row.list}`, { auth: false });
    assert.equal(reply.status, 200, row.list);
    assert.deepEqual(Object.keys(reply.body).sort(), ["code", "data"]);
    const rows = reply.body.data as Json[];
    if (typeof row.size === "number") assert.equal(rows.length, row.size, `${row.list} ${row.mark}`);
    else assert.ok(rows.length >= row.size.atLeast, `${row.list} ${row.mark}`);
    for (const entry of rows)
      assert.deepEqual(Object.keys(entry), row.fields, `${row.list}: ${JSON.stringify(entry)}`);
    if (row.example) {
      const key = row.fields[0] === "name" ? "alpha_2" : (row.fields[0] as string);
      const found = rows.find((r) => r[key] === row.example?.[key]);
      assert.deepEqual(found, row.example, row.list);
    }
  }
  const countries = (await call(sim, "GET", "/api/v1/invoice/resources/countries", { auth: false })).body
    .data as Json[];
  const antarctica = countries.find((c) => c.alpha_2 === "AQ");
  assert.equal(antarctica?.region, "", "empty string where a country has no region");
  assert.ok(countries.every((c) => /^\d{3}$/.test(String(c.country_code))));
  assert.equal(new Set(countries.map((c) => c.alpha_2)).size, 249);
});
