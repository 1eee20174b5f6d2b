import { irnTemplate } from "./documents.ts";
import type { Endpoint, SimContext } from "./endpoint.ts";
import {
  BUSINESS_NOT_FOUND,
  ENTITY_NOT_FOUND,
  INVALID_LOGIN,
  invalid,
  MbsError,
  ok,
  RESOURCE_NOT_FOUND,
  TIN_NOT_FOUND,
} from "./envelopes.ts";
import { isObject, pageOf, queryText } from "./paging.ts";
import type { Party } from "./registry.ts";
import { RESOURCES } from "./resources.ts";
import type { Taxpayer } from "./taxpayers.ts";

/**
 * A taxpayer as an entity with its one business. The entity id is the business id: the spec lets them
 * differ, but one id per taxpayer keeps the printed line enough to find both.
 */
function entityOf(t: Taxpayer) {
  return {
    id: t.business_id,
    reference: t.tin,
    name: t.name,
    tin: t.tin,
    email: t.email,
    created_at: t.created_at,
    businesses: [
      {
        id: t.business_id,
        name: t.name,
        tin: t.tin,
        reference: t.tin,
        service_id: t.service_id,
        irn_template: irnTemplate(t.service_id),
        support_peppol: false,
        is_realtime_reporting: false,
        notification_channels: ["EMAIL"],
      },
    ],
  };
}

function searchEntities(ctx: SimContext, query: Record<string, unknown>) {
  const reference = queryText(query, "reference");
  const entities = ctx.registry.taxpayers
    .map(entityOf)
    .filter((e) => !reference || e.reference === reference);
  return ok(pageOf(entities, query, ["created_at", "name", "reference"]));
}

const optionalText = (body: Record<string, unknown>, name: string): string | null => {
  const value = body[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw invalid(`partyrequest.${name.replaceAll("_", "")} must be a string`);
  return value;
};

/** `POST /invoice/party`: 201 when created, 200 with the party already held for that business and TIN. */
function createParty(ctx: SimContext, body: unknown) {
  if (!isObject(body)) throw invalid("partyrequest must be a JSON object");
  const problems = ["business_id", "party_name", "tin", "email"]
    .filter((name) => typeof body[name] !== "string" || body[name] === "")
    .map((name) => `partyrequest.${name.replaceAll("_", "")} is required`);
  if (problems.length > 0) throw invalid(problems.join("; "));
  const businessId = body.business_id as string;
  if (!ctx.registry.taxpayer(businessId)) throw invalid("partyrequest.businessid is invalid");
  if (body.postal_address !== undefined && !isObject(body.postal_address)) {
    throw invalid("partyrequest.postaladdress must be an object");
  }
  const input: Omit<Party, "id" | "created_at"> = {
    business_id: businessId,
    party_name: body.party_name as string,
    tin: body.tin as string,
    email: body.email as string,
    telephone: optionalText(body, "telephone"),
    business_description: optionalText(body, "business_description"),
    postal_address: body.postal_address ?? null,
    postal_address_id: optionalText(body, "postal_address_id"),
  };
  const { party, created } = ctx.registry.addParty(input);
  return ok(party, created ? 201 : 200);
}

function searchParties(ctx: SimContext, businessId: string, query: Record<string, unknown>) {
  if (!ctx.registry.taxpayer(businessId)) throw new MbsError(404, BUSINESS_NOT_FOUND);
  const reference = queryText(query, "reference");
  const parties = ctx.registry
    .parties()
    .filter((p) => p.business_id === businessId && (!reference || p.tin === reference));
  return ok(pageOf(parties, query, ["created_at", "party_name", "tin"]));
}

function verifyTin(ctx: SimContext, body: unknown) {
  if (!isObject(body) || typeof body.tin !== "string" || body.tin === "") {
    throw invalid("verifytinrequest.tin is required");
  }
  const t = ctx.registry.taxpayerByTin(body.tin);
  if (!t) throw new MbsError(404, TIN_NOT_FOUND, { details: `tin ${body.tin}` });
  return ok({
    address: "1 Marina Road, Lagos Island, Lagos",
    email: t.email,
    id: t.business_id,
    jtb_tin: t.tin,
    message: "TIN is valid",
    name: t.name,
    phone: "+2348000000000",
    rc_number: `RC${t.tin.slice(0, 6)}`,
    status: "ACTIVE",
    taxofficer_id: "LAGOS-MTO-1",
    tin: t.tin,
  });
}

/** Sign-in of a taxpayer (see taxpayerLogin for the email and password each one has). */
function authenticate(ctx: SimContext, body: unknown) {
  if (!isObject(body) || typeof body.email !== "string" || typeof body.password !== "string") {
    throw invalid("authenticaterequest.email and authenticaterequest.password are required");
  }
  const t = ctx.registry.taxpayers.find((x) => x.email === body.email && x.password === body.password);
  if (!t) throw new MbsError(400, INVALID_LOGIN);
  return ok({ entity_id: t.business_id, business_id: t.business_id, name: t.name, tin: t.tin });
}

/** Health, entities, crypto keys, parties, utilities and the resource lists. */
export function entityEndpoints(ctx: SimContext): Endpoint[] {
  const { registry } = ctx;
  const taxpayer = (id: string, message: string) => {
    const found = registry.taxpayer(id);
    if (!found) throw new MbsError(404, message);
    return found;
  };
  return [
    {
      method: "GET",
      url: "/api",
      handler: "health",
      open: true,
      handle: () => ({ status: 200, body: { healthy: true } }),
    },
    {
      method: "GET",
      url: "/api/v1/entity",
      handler: "search_entities",
      handle: (r) => searchEntities(ctx, r.query),
    },
    {
      method: "GET",
      url: "/api/v1/entity/:entity_id",
      handler: "get_entity",
      handle: (r) => ok(entityOf(taxpayer(r.params.entity_id ?? "", ENTITY_NOT_FOUND))),
    },
    {
      // The spec names no path for the crypto keys (only their content): this one is the simulator's.
      method: "GET",
      url: "/api/v1/invoice/crypto_keys/:business_id",
      handler: "crypto_keys",
      handle: (r) => {
        const t = taxpayer(r.params.business_id ?? "", BUSINESS_NOT_FOUND);
        return ok({ public_key: Buffer.from(t.publicKeyPem).toString("base64"), certificate: t.certificate });
      },
    },
    {
      method: "POST",
      url: "/api/v1/invoice/party",
      handler: "create_party",
      handle: (r) => createParty(ctx, r.body),
    },
    {
      method: "GET",
      url: "/api/v1/invoice/party/:business_id",
      handler: "search_parties",
      handle: (r) => searchParties(ctx, r.params.business_id ?? "", r.query),
    },
    {
      method: "POST",
      url: "/api/v1/utilities/verify-tin/",
      handler: "verify_tin",
      handle: (r) => verifyTin(ctx, r.body),
    },
    {
      method: "POST",
      url: "/api/v1/utilities/authenticate",
      handler: "authenticate",
      handle: (r) => authenticate(ctx, r.body),
    },
    {
      method: "GET",
      url: "/api/v1/invoice/resources/:list",
      handler: "resources",
      open: true,
      handle: (r) => {
        const name = r.params.list ?? "";
        const list = Object.hasOwn(RESOURCES, name) ? RESOURCES[name] : undefined;
        if (!list)
          throw new MbsError(404, RESOURCE_NOT_FOUND, { details: `no resource list ${r.params.list}` });
        return ok(list);
      },
    },
  ];
}
