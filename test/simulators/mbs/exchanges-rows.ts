import assert from "node:assert/strict";
import type { Json } from "../../helpers.ts";
import { UUID } from "./harness.ts";

// The rows of exchanges.test.ts up to the registration of an invoice: entities, log-in, IRN check,
// validate, sign, parties, confirm, download, search. The table's types and checks live here too.

export type Ctx = {
  entity: string;
  business: string;
  service: string;
  tin: string;
  buyerTin: string;
  irn: string;
  irn2: string;
  party?: string;
  doc: Json;
  doc2: Json;
  login: { email: string; password: string };
};
export type Row = {
  name: string;
  mark: "[recorded]" | "[doc]" | "[client]" | "[unknown]";
  method: "GET" | "POST" | "PATCH";
  url: (c: Ctx) => string;
  body?: (c: Ctx) => unknown;
  status: number;
  /** The body's `data` (for a success) or the whole body, checked; may note what later rows need. */
  expect: (body: Json, c: Ctx) => void;
};

export const VALIDATION =
  "validation failed: we are unable to process your request. also confirm this is not a duplicate request";
export const TRY_LATER = "unable to complete this operation at this time, kindly try again later";

/** A success: exactly `{code, data}`; the data goes to `check`. */
export const success =
  (check: (data: Json, c: Ctx) => void = () => undefined) =>
  (body: Json, c: Ctx) => {
    assert.deepEqual(Object.keys(body).sort(), ["code", "data"]);
    assert.equal(body.code, 200);
    check(body.data as Json, c);
  };

/** An error envelope, exactly: `{code, data: null, message, error: {id, handler, details?, public_message}}`. */
export const error =
  (status: number, handler: string, publicMessage: string, details?: string) => (body: Json) => {
    const { id, ...rest } = body.error as Json;
    assert.match(String(id), UUID);
    assert.deepEqual(
      { ...body, error: rest },
      {
        code: status,
        data: null,
        message: "error has occurred",
        error: { handler, ...(details === undefined ? {} : { details }), public_message: publicMessage },
      },
    );
  };

export const keys = (value: unknown) => Object.keys(value as Json).sort();
export const items = (data: Json) => (data as unknown as { items: Json[] }).items;
export const list = (data: Json) => data as unknown as Json[];

/** From the entity to a registered invoice. */
export const REGISTER_ROWS: Row[] = [
  {
    name: "entity search with the paging query and reference",
    mark: "[doc]",
    method: "GET",
    url: (c) => `/api/v1/entity?size=10&page=1&sort_by=name&sort_direction_desc=false&reference=${c.tin}`,
    status: 200,
    expect: success((d, c) =>
      assert.deepEqual(
        items(d).map((e) => e.id),
        [c.entity],
      ),
    ),
  },
  {
    name: "the entity by its id, with a one-element businesses list",
    mark: "[client]",
    method: "GET",
    url: (c) => `/api/v1/entity/${c.entity}`,
    status: 200,
    expect: success((d, c) => {
      assert.equal(d.id, c.entity);
      const businesses = d.businesses as Json[];
      assert.equal(businesses.length, 1);
      const [business] = businesses as [Json];
      assert.deepEqual(keys(business), [
        "id",
        "irn_template",
        "is_active",
        "is_realtime_reporting",
        "name",
        "notification_channels",
        "reference",
        "sector",
        "support_peppol",
        "tin",
      ]);
      assert.equal(business.id, c.business);
      assert.notEqual(business.id, d.id, "[recorded] the entity id and the business id differ");
      assert.equal(
        business.irn_template,
        `{{invoice_id(e.g:INV00XXX)}}-${c.service}-{{YYYYMMDD(e.g:20250629)}}`,
      );
    }),
  },
  {
    name: "a business id is not an entity id",
    mark: "[recorded]",
    method: "GET",
    url: (c) => `/api/v1/entity/${c.business}`,
    status: 404,
    expect: error(404, "entity_actions", "entity not found"),
  },
  {
    name: "the entity by a TIN, which is not a UUID",
    mark: "[recorded]",
    method: "GET",
    url: (c) => `/api/v1/entity/${c.tin}`,
    status: 400,
    expect: error(400, "entity_actions", VALIDATION, "invalid UUID length: 13"),
  },
  {
    name: "taxpayer log-in",
    mark: "[doc]",
    method: "POST",
    url: () => "/api/v1/utilities/authenticate",
    body: (c) => c.login,
    status: 200,
    expect: success((d, c) => {
      assert.deepEqual(keys(d), ["entity_id", "id", "message", "received_at", "status"]);
      assert.equal(d.entity_id, c.entity);
      assert.match(String(d.id), UUID);
      assert.equal(d.message, "User logged in");
      assert.equal(d.status, "200 OK");
      assert.match(String(d.received_at), /^\d{4}-\d{2}-\d{2}T[\d:.]+[+-]\d{2}:\d{2}$/);
    }),
  },
  {
    name: "verify-tin: the Swagger sample's fields",
    mark: "[doc]",
    method: "POST",
    url: () => "/api/v1/utilities/verify-tin/",
    body: (c) => ({ tin: c.tin }),
    status: 200,
    expect: success((d, c) => {
      assert.deepEqual(keys(d), [
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
      assert.match(String(d.id), UUID);
      assert.deepEqual([d.jtb_tin, d.message, d.status, d.tin], ["", "TIN Information", "200 OK", c.tin]);
    }),
  },
  {
    name: "irn/validate: the IRN on the business's template",
    mark: "[doc]",
    method: "POST",
    url: () => "/api/v1/invoice/irn/validate",
    body: (c) => ({ business_id: c.business, invoice_reference: "INV0001", irn: c.irn }),
    status: 200,
    expect: success((d) => assert.equal(d.ok, true, "[client] integrators read data.ok")),
  },
  {
    name: "irn/validate: another service id",
    mark: "[client]",
    method: "POST",
    url: () => "/api/v1/invoice/irn/validate",
    body: (c) => ({
      business_id: c.business,
      invoice_reference: "INV0001",
      irn: "INV0001-ZZZZ9999-20261115",
    }),
    status: 400,
    expect: error(
      400,
      "invoice_actions",
      VALIDATION,
      "irn validation failed for this business, refer to the template and try again",
    ),
  },
  {
    name: "validate registers nothing",
    mark: "[doc]",
    method: "POST",
    url: () => "/api/v1/invoice/validate",
    body: (c) => c.doc,
    status: 200,
    expect: success((d) => assert.equal(d.ok, true, "[client] integrators read data.ok")),
  },
  {
    name: "confirm of an IRN not registered",
    mark: "[unknown]",
    method: "GET",
    url: (c) => `/api/v1/invoice/confirm/${c.irn}`,
    status: 404,
    expect: (body, c) =>
      error(404, "invoice_actions", "invoice not found", `irn ${c.irn} is not registered`)(body),
  },
  {
    name: "sign: 200 in the {code, data} envelope",
    mark: "[client]",
    method: "POST",
    url: () => "/api/v1/invoice/sign",
    body: (c) => c.doc,
    status: 200,
    expect: success((d, c) => assert.deepEqual(d, { ok: true, irn: c.irn, status: "SIGNED" })),
  },
  {
    name: "sign of a registered IRN",
    mark: "[client]",
    method: "POST",
    url: () => "/api/v1/invoice/sign",
    body: (c) => c.doc,
    status: 400,
    expect: error(400, "invoice_actions", VALIDATION, TRY_LATER),
  },
  {
    name: "sign of a second invoice, to the other taxpayer",
    mark: "[client]",
    method: "POST",
    url: () => "/api/v1/invoice/sign",
    body: (c) => c.doc2,
    status: 200,
    expect: success(),
  },
  {
    name: "create a party",
    mark: "[doc]",
    method: "POST",
    url: () => "/api/v1/invoice/party",
    body: (c) => ({
      business_id: c.business,
      party_name: "Lekki Homes Development Co",
      tin: "31845560-0001",
      email: "accounts@lekkihomes.example",
      telephone: "+2348029876543",
      business_description: "Residential construction",
      postal_address: {
        street_name: "3 Faulks Road",
        city_name: "Aba",
        postal_zone: "450002",
        country: "NG",
      },
    }),
    status: 200,
    expect: success((d, c) => {
      assert.match(String(d.id), UUID);
      c.party = String(d.id);
    }),
  },
  {
    name: "search parties by name, with paging",
    mark: "[doc]",
    method: "GET",
    url: (c) => `/api/v1/invoice/party/${c.business}?size=5&page=1&party_name=lekki`,
    status: 200,
    expect: success((d, c) =>
      assert.deepEqual(
        items(d).map((p) => p.id),
        [c.party],
      ),
    ),
  },
  {
    name: "confirm of a registered IRN, with transmitted and delivered",
    mark: "[client]",
    method: "GET",
    url: (c) => `/api/v1/invoice/confirm/${c.irn}`,
    status: 200,
    expect: success((d, c) => {
      assert.equal(d.irn, c.irn);
      assert.equal(d.transmitted, false);
      assert.equal(d.delivered, false);
      assert.equal(d.payment_status, "PENDING");
      // [client] what integrators read besides: the dates.
      assert.deepEqual([d.issue_date, d.due_date], ["2026-11-15", "2026-12-15"]);
      assert.equal(typeof d.sync_date, "string");
    }),
  },
  {
    name: "download: the registered document",
    mark: "[doc]",
    method: "GET",
    url: (c) => `/api/v1/invoice/download/${c.irn}`,
    status: 200,
    expect: success((d, c) => {
      assert.deepEqual(keys(d), ["business_id", "data", "document", "irn", "iv_hex", "pub", "signed_at"]);
      assert.deepEqual(d.document, c.doc);
    }),
  },
  {
    name: "search a business's invoices with the documented filters",
    mark: "[doc]",
    method: "GET",
    url: (c) =>
      `/api/v1/invoice/${c.business}?size=10&page=1&sort_by=irn&sort_direction_desc=true&irn=${c.irn}` +
      "&payment_status=PENDING&entry_status=SIGNED&invoice_type_code=381&issue_date=2026-11-15" +
      "&due_date=2026-12-15&tax_currency_code=NGN&document_currency_code=NGN",
    status: 200,
    expect: success((d, c) =>
      assert.deepEqual(
        items(d).map((i) => i.irn),
        [c.irn],
      ),
    ),
  },
];
