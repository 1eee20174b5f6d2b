import { type Fields, key, minLength, object, TEXTS, text } from "./checks.ts";
import { invalid } from "./envelopes.ts";
import type { Registry } from "./registry.ts";
import type { Rules } from "./rules.ts";

// A party in a document (supplier, customer, payee, tax representative) or made with `/invoice/party`.

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

/** [client] A TIN under 5 characters is refused ("…tin must be at least in length or value 5"). */
export const MIN_TIN = 5;
/** [client] A business description under 5 characters is reported refused (the `business_description_min` rule). */
export const MIN_DESCRIPTION = 5;

/** [client] The country of an address: an alpha-2 code from the countries list (`countries`, its codes). */
export function checkAddress(address: Fields, path: string, countries: ReadonlySet<string>): void {
  for (const name of ["street_name", "city_name", "postal_zone", "lga", "state"]) {
    text(address, name, `${path}.${key(name)}`, false);
  }
  const country = text(address, "country", `${path}.country`, true);
  if (country !== undefined && !countries.has(country)) {
    throw invalid(TEXTS.listed(`${path}.country`, "country code"));
  }
}

/**
 * The contact fields every full party has: [doc] `tin` and `email` mandatory, `telephone` optional
 * but starting with `+`; [client] `business_description` at least 5 characters (a switch).
 */
export function checkContact(party: Fields, path: string, rules: Rules): void {
  const tin = text(party, "tin", `${path}.tin`, true);
  minLength(tin, MIN_TIN, `${path}.tin`);
  const email = text(party, "email", `${path}.email`, true);
  if (email !== undefined && !EMAIL.test(email)) throw invalid(TEXTS.type(`${path}.email`, "a valid email"));
  const telephone = text(party, "telephone", `${path}.telephone`, false);
  if (telephone !== undefined && !telephone.startsWith("+")) {
    throw invalid(`${path}.telephone must start with + (e.g: +2348012345678)`);
  }
  const description = text(party, "business_description", `${path}.businessdescription`, false);
  if (rules.business_description_min) minLength(description, MIN_DESCRIPTION, `${path}.businessdescription`);
}

/**
 * A document's party. [doc] With `id` (a party made with `/invoice/party`) name and address may be
 * left out; otherwise the party carries its name, contact and an address (or `postal_address_id`).
 * [recorded] as a summary: the supplier's `postal_address_id` required (the
 * `supplier_postal_address_id_required` rule, off by default: the sign example sends an address [doc]).
 */
export function checkParty(
  doc: Fields,
  name: string,
  context: { registry: Registry; rules: Rules; countries: ReadonlySet<string>; required: boolean },
): void {
  const path = `invoicerequest.invoice.${key(name)}`;
  const party = object(doc, name, path, context.required);
  if (!party) return;
  const id = text(party, "id", `${path}.id`, false);
  if (id !== undefined) {
    if (!context.registry.party(id))
      throw invalid(`${path}.id must be a valid party, refer to the party apis`);
    return;
  }
  text(party, "party_name", `${path}.partyname`, true);
  checkContact(party, path, context.rules);
  const supplier = name === "accounting_supplier_party";
  const addressId = text(
    party,
    "postal_address_id",
    `${path}.postaladdressid`,
    supplier && context.rules.supplier_postal_address_id_required,
  );
  const address = object(party, "postal_address", `${path}.postaladdress`, addressId === undefined);
  if (address) checkAddress(address, `${path}.postaladdress`, context.countries);
}
