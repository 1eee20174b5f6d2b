import type { Endpoint, SimContext } from "./endpoint.ts";
import { invalid, MbsError, ok, PARTY_NOT_FOUND } from "./envelopes.ts";
import { TRANSMIT_PREFIXES } from "./faults.ts";
import { isObject } from "./paging.ts";
import type { InvoiceRecord, Party, Registry } from "./registry.ts";

/** Where an invoice's delivery stands (`transmit/lookup/…`). */
function transmission(record: InvoiceRecord, registry: Registry) {
  return {
    irn: record.irn,
    business_id: record.business_id,
    status: record.entry_status,
    transmitted: record.transmitted,
    transmitted_at: record.transmitted_at,
    acknowledged: record.acknowledged,
    acknowledged_at: record.acknowledged_at,
    supplier_tin: tinOf(record.document.accounting_supplier_party, registry),
    customer_tin: tinOf(record.document.accounting_customer_party, registry),
  };
}

/** A party's TIN, written in the document or found through the party it references. */
function tinOf(party: unknown, registry: Registry): string | null {
  if (!isObject(party)) return null;
  if (typeof party.tin === "string") return party.tin;
  return typeof party.id === "string" ? (registry.party(party.id)?.tin ?? null) : null;
}

const partiesOf = (record: InvoiceRecord) => [
  record.document.accounting_supplier_party,
  record.document.accounting_customer_party,
];

/** An invoice involves a party when it references the party or names its TIN. */
function involves(record: InvoiceRecord, party: Party, registry: Registry): boolean {
  return partiesOf(record).some(
    (p) => (isObject(p) && p.id === party.id) || tinOf(p, registry) === party.tin,
  );
}

/** The invoices delivered to a receiver and not yet acknowledged by it: those this APP should pull. */
function waiting(registry: Registry) {
  const ours = new Set(registry.taxpayers.map((t) => t.tin));
  return registry
    .invoices()
    .filter((r) => r.transmitted && !r.acknowledged)
    .filter((r) => ours.has(tinOf(r.document.accounting_customer_party, registry) ?? ""))
    .map((r) => ({ ...transmission(r, registry), document: r.document }));
}

function acknowledge(ctx: SimContext, irn: string, body: unknown) {
  if (!isObject(body) || body.message === undefined) throw invalid("transmitrequest.message is required");
  if (body.message !== "ACKNOWLEDGED") throw invalid("transmitrequest.message must be ACKNOWLEDGED");
  const record = ctx.registry.acknowledge(irn);
  return ok({ irn, status: record.entry_status, acknowledged_at: record.acknowledged_at });
}

/** Delivery to the buyer's APP and its lookups; the receiver's side (pull, acknowledge). */
export function transmitEndpoints(ctx: SimContext): Endpoint[] {
  const { registry } = ctx;
  const exchanged = (match: (r: InvoiceRecord) => boolean) =>
    registry
      .invoices()
      .filter((r) => r.transmitted && match(r))
      .map((r) => transmission(r, registry));
  return [
    {
      method: "POST",
      url: "/api/v1/invoice/transmit/:irn",
      handler: "transmit_invoice",
      extra: ["not_enabled", "partial"],
      prefixes: TRANSMIT_PREFIXES,
      // A repeat finds the invoice delivered and answers the same: a retried transmit is harmless.
      handle: (r) => {
        const record = registry.transmit(r.params.irn ?? "");
        return ok({ irn: record.irn, status: "TRANSMITTED", transmitted_at: record.transmitted_at });
      },
    },
    {
      method: "PATCH",
      url: "/api/v1/invoice/transmit/:irn",
      handler: "acknowledge_invoice",
      handle: (r) => acknowledge(ctx, r.params.irn ?? "", r.body),
    },
    {
      method: "GET",
      url: "/api/v1/invoice/transmit/lookup/:irn",
      handler: "lookup_transmission",
      handle: (r) => ok(transmission(registry.found(r.params.irn ?? ""), registry)),
    },
    {
      method: "GET",
      url: "/api/v1/invoice/transmit/lookup/tin/:tin",
      handler: "lookup_transmission_tin",
      handle: (r) => {
        const tin = r.params.tin ?? "";
        return ok(exchanged((t) => partiesOf(t).some((p) => tinOf(p, registry) === tin)));
      },
    },
    {
      method: "GET",
      url: "/api/v1/invoice/transmit/lookup/party/:party_id",
      handler: "lookup_transmission_party",
      handle: (r) => {
        const party = registry.party(r.params.party_id ?? "");
        if (!party) throw new MbsError(404, PARTY_NOT_FOUND);
        return ok(exchanged((t) => involves(t, party, registry)));
      },
    },
    {
      method: "GET",
      url: "/api/v1/invoice/transmit/pull",
      handler: "pull",
      handle: () => ok(waiting(registry)),
    },
    {
      method: "GET",
      url: "/api/v1/invoice/transmit/self-health-check",
      handler: "self_health_check",
      handle: () => ok({ healthy: true, receiving: "ENABLED", taxpayers: registry.taxpayers.length }),
    },
  ];
}
