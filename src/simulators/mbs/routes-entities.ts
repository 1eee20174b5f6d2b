import { object, TEXTS, text } from "./checks.ts";
import type { Endpoint, SimContext } from "./endpoint.ts";
import {
  BUSINESS_NOT_FOUND,
  ENTITY_NOT_FOUND,
  HANDLERS,
  INVALID_LOGIN,
  invalid,
  LOGGED_IN,
  MbsError,
  ok,
  RESOURCE_NOT_FOUND,
  TIN_INFORMATION,
  TIN_NOT_FOUND,
} from "./envelopes.ts";
import { uuidProblem } from "./irn.ts";
import { isObject, pageOf, queryText } from "./paging.ts";
import { checkAddress, checkContact } from "./parties.ts";
import type { Party } from "./registry.ts";
import { type Taxpayer, uuidOf } from "./taxpayers.ts";

/**
 * A taxpayer as an entity with its one business. [recorded] The entity id differs from the business
 * id; [client] the answer carries a `businesses` list with these fields, and the authority says an
 * entity holds one business: a one-element list. The values of `sector`, `support_peppol`,
 * `is_realtime_reporting` and `notification_channels` are the simulator's [unknown].
 */
function entityOf(t: Taxpayer) {
  return {
    id: t.entity_id,
    reference: t.tin,
    name: t.name,
    tin: t.tin,
    email: t.email,
    created_at: t.created_at,
    businesses: [
      {
        id: t.business_id,
        reference: t.tin,
        name: t.name,
        tin: t.tin,
        sector: t.sector,
        irn_template: t.irn_template,
        support_peppol: false,
        is_realtime_reporting: false,
        notification_channels: ["EMAIL"],
        is_active: true,
      },
    ],
  };
}

/** [doc] Entities searched with paging and `reference` (the TIN). */
function searchEntities(ctx: SimContext, query: Record<string, unknown>) {
  const reference = queryText(query, "reference");
  const entities = ctx.registry.taxpayers
    .map(entityOf)
    .filter((e) => !reference || e.reference === reference);
  return ok(pageOf(entities, query, ["created_at", "name", "reference"]));
}

/**
 * [doc] `POST /invoice/party`: `{business_id, party_name, tin, email, telephone?,
 * business_description?, postal_address? or postal_address_id?}`, checked like a document's party
 * (first problem only). A repeat for the same business and TIN answers the party already held.
 */
function createParty(ctx: SimContext, body: unknown) {
  if (!isObject(body)) throw invalid(TEXTS.type("partyrequest", "a JSON object"));
  const businessId = text(body, "business_id", "partyrequest.businessid", true) as string;
  const problem = uuidProblem(businessId);
  if (problem) throw invalid(problem);
  const partyName = text(body, "party_name", "partyrequest.partyname", true) as string;
  checkContact(body, "partyrequest", ctx.rules());
  const addressId = text(body, "postal_address_id", "partyrequest.postaladdressid", false);
  const address = object(body, "postal_address", "partyrequest.postaladdress", false);
  if (address) checkAddress(address, "partyrequest.postaladdress", ctx.codes.countries);
  if (!ctx.registry.taxpayer(businessId)) {
    throw invalid("partyrequest.businessid must be a valid business, refer to the entity apis");
  }
  const input: Omit<Party, "id" | "created_at"> = {
    business_id: businessId,
    party_name: partyName,
    tin: body.tin as string,
    email: body.email as string,
    telephone: (body.telephone as string | undefined) ?? null,
    business_description: (body.business_description as string | undefined) ?? null,
    postal_address: address ?? null,
    postal_address_id: addressId ?? null,
  };
  return ok(ctx.registry.addParty(input).party);
}

/** [doc] A business's parties, with the paging query and `party_name` (and `reference`, the TIN). */
function searchParties(ctx: SimContext, businessId: string, query: Record<string, unknown>) {
  if (!ctx.registry.taxpayer(businessId)) throw new MbsError(404, BUSINESS_NOT_FOUND);
  const reference = queryText(query, "reference");
  const name = queryText(query, "party_name")?.toLowerCase();
  const parties = ctx.registry
    .parties()
    .filter((p) => p.business_id === businessId && (!reference || p.tin === reference))
    .filter((p) => !name || p.party_name.toLowerCase().includes(name));
  return ok(pageOf(parties, query, ["created_at", "party_name", "tin"]));
}

/**
 * [doc] `verify-tin`: the TIN's details in the `{code, data}` envelope, with exactly the fields of
 * the Swagger page's 200 sample: `address`, `email`, `id` (a UUID), `jtb_tin` (empty), `message`
 * "TIN Information", `phone`, `rc_number`, `status` "200 OK", `taxofficer_id`, `taxofficer_name`,
 * `taxpayer_name`, `taxpayer_type`, `tin`. The sample's values set the style: a local phone number,
 * an RC number and a tax officer id of digits, an office's name, type `C` (every simulated taxpayer
 * is a company). Beside the taxpayer's own name, email and TIN, the values are the simulator's
 * [unknown]; `id` is a UUID of the TIN's own, not the entity id: nothing says they are the same.
 */
function verifyTin(ctx: SimContext, body: unknown) {
  const tin = text(isObject(body) ? body : {}, "tin", "verifytinrequest.tin", true) as string;
  const t = ctx.registry.taxpayerByTin(tin);
  // [unknown] the answer for a TIN MBS does not know.
  if (!t) throw new MbsError(404, TIN_NOT_FOUND, { details: `tin ${tin}` });
  const digits = t.tin.replace(/\D/g, "");
  return ok({
    address: "1 MARINA ROAD, LAGOS ISLAND, LAGOS",
    email: t.email,
    id: uuidOf(ctx.seed, "verify-tin", t.tin),
    jtb_tin: "",
    message: TIN_INFORMATION.message,
    phone: `080${digits.slice(0, 8)}`,
    rc_number: digits.slice(1, 8),
    status: TIN_INFORMATION.status,
    taxofficer_id: String(10 + (Number(digits.slice(0, 8)) % 90)),
    taxofficer_name: "MSTO LAGOS ISLAND",
    taxpayer_name: t.name,
    taxpayer_type: "C",
    tin: t.tin,
  });
}

/** A timestamp with an offset, as the log-in answer's sample `received_at` is [doc]. */
const withOffset = (at: Date) => at.toISOString().replace("Z", "+00:00");

/**
 * [doc] The taxpayer's log-in: `{entity_id, id, message: "User logged in", received_at, status:
 * "200 OK"}`. Each taxpayer signs in with taxpayerLogin()'s email and password.
 */
function authenticate(ctx: SimContext, body: unknown) {
  const fields = isObject(body) ? body : {};
  const email = text(fields, "email", "authenticaterequest.email", true);
  const password = text(fields, "password", "authenticaterequest.password", true);
  const t = ctx.registry.taxpayers.find((x) => x.email === email && x.password === password);
  if (!t) throw new MbsError(400, INVALID_LOGIN);
  return ok({
    entity_id: t.entity_id,
    id: t.user_id,
    message: LOGGED_IN.message,
    received_at: withOffset(new Date()),
    status: LOGGED_IN.status,
  });
}

/** Health, entities, crypto keys, parties, utilities and the resource lists. */
export function entityEndpoints(ctx: SimContext): Endpoint[] {
  const { registry } = ctx;
  const entity = HANDLERS.entity;
  const invoice = HANDLERS.invoice;
  return [
    // [recorded] 200 `{"healthy": true}`, no envelope, no credentials.
    {
      method: "GET",
      url: "/api",
      handler: invoice,
      open: true,
      handle: () => ({ status: 200, body: { healthy: true } }),
    },
    { method: "GET", url: "/api/v1/entity", handler: entity, handle: (r) => searchEntities(ctx, r.query) },
    {
      // [recorded] by entity id only: a business id is not an entity id. An id that is not a UUID
      // (the recorded call sent a TIN, `31569955-0001`) is refused before the credentials are
      // checked (the placeholder key was not): 400, `entity_actions`, `invalid UUID length: 13`
      // and the validation public message. A well-formed id of no entity: 404 [unknown].
      method: "GET",
      url: "/api/v1/entity/:entity_id",
      handler: entity,
      beforeCredentials: (params) => {
        const problem = uuidProblem(params.entity_id ?? "");
        return problem === undefined ? undefined : invalid(problem);
      },
      handle: (r) => {
        const t = registry.entity(r.params.entity_id ?? "");
        if (!t) throw new MbsError(404, ENTITY_NOT_FOUND);
        return ok(entityOf(t));
      },
    },
    {
      // [doc] the content `{public_key, certificate}`; the path is the simulator's [unknown].
      method: "GET",
      url: "/api/v1/invoice/crypto_keys/:business_id",
      handler: invoice,
      handle: async (r) => {
        const t = registry.taxpayer(r.params.business_id ?? "");
        if (!t) throw new MbsError(404, BUSINESS_NOT_FOUND);
        const pem = await t.publicKeyPem();
        return ok({ public_key: Buffer.from(pem).toString("base64"), certificate: t.certificate });
      },
    },
    {
      method: "POST",
      url: "/api/v1/invoice/party",
      handler: invoice,
      handle: (r) => createParty(ctx, r.body),
    },
    {
      method: "GET",
      url: "/api/v1/invoice/party/:business_id",
      handler: invoice,
      handle: (r) => searchParties(ctx, r.params.business_id ?? "", r.query),
    },
    {
      method: "POST",
      url: "/api/v1/utilities/verify-tin/",
      handler: entity,
      handle: (r) => verifyTin(ctx, r.body),
    },
    {
      method: "POST",
      url: "/api/v1/utilities/authenticate",
      handler: entity,
      handle: (r) => authenticate(ctx, r.body),
    },
    {
      // [recorded] `{"code": 200, "data": [...]}`, without credentials.
      method: "GET",
      url: "/api/v1/invoice/resources/:list",
      handler: invoice,
      open: true,
      handle: (r) => {
        const name = r.params.list ?? "";
        const list = Object.hasOwn(ctx.resources, name) ? ctx.resources[name] : undefined;
        if (!list) throw new MbsError(404, RESOURCE_NOT_FOUND, { details: `no resource list ${name}` });
        return ok(list);
      },
    },
  ];
}
