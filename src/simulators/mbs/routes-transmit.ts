import { TEXTS } from "./checks.ts";
import type { Endpoint, SimContext } from "./endpoint.ts";
import { HANDLERS, invalid, MbsError, ok, PARTY_NOT_FOUND } from "./envelopes.ts";
import { ACK_PREFIXES, TRANSMIT_PREFIXES } from "./faults.ts";
import { isRealDate } from "./irn.ts";
import { isObject, type Query, queryText } from "./paging.ts";
import type { InvoiceRecord, Party, Registry } from "./registry.ts";
import type { PullShape } from "./rules.ts";

/** Where an invoice's delivery stands (`transmit/lookup/…`); the shape is the simulator's [unknown]. */
function transmission(record: InvoiceRecord, registry: Registry) {
  return {
    irn: record.irn,
    business_id: record.business_id,
    status: record.entry_status,
    transmitted: record.transmitted,
    transmitted_at: record.transmitted_at,
    delivered: record.acknowledged,
    delivered_at: record.acknowledged_at,
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

/** A `from`/`to` query date, YYYY-MM-DD. */
function dateQuery(query: Query, name: string): string | undefined {
  const value = queryText(query, name);
  if (value !== undefined && !isRealDate(value)) throw invalid(TEXTS.date(name));
  return value;
}

/**
 * [doc] `pull`: the invoices transmitted to this APP's taxpayers (as buyers), with `confirmed`
 * (true/false) and `from`/`to` dates. Reading `confirmed` as "the receipt was acknowledged" is the
 * simulator's [unknown]: `true` lists those acknowledged, `false` those waiting, none given the
 * waiting ones; `from`/`to` bound the transmission date, both days included.
 */
function pull(registry: Registry, query: Query) {
  const confirmed = queryText(query, "confirmed");
  if (confirmed !== undefined && confirmed !== "true" && confirmed !== "false") {
    throw invalid("confirmed must be true or false");
  }
  const from = dateQuery(query, "from");
  const to = dateQuery(query, "to");
  const ours = new Set(registry.taxpayers.map((t) => t.tin));
  const acknowledged = confirmed === "true";
  return registry
    .invoices()
    .filter((r) => r.transmitted && r.acknowledged === acknowledged)
    .filter((r) => ours.has(tinOf(r.document.accounting_customer_party, registry) ?? ""))
    .filter((r) => {
      const day = (r.transmitted_at ?? "").slice(0, 10);
      return (!from || day >= from) && (!to || day <= to);
    })
    .map((r) => ({ ...transmission(r, registry), document: r.document }));
}

/**
 * [unknown] `pull`'s answer: no source shows one. Assumed (the `pull_shape` rule's default `list`):
 * `data` a list of transmission records as `transmit/lookup` answers them, each with the invoice's
 * `document`. The others a connector must tolerate: `documents`, `data` a bare list of the
 * documents; `items`, `data` an object `{items: [records]}`.
 */
function pulled(records: ReturnType<typeof pull>, shape: PullShape) {
  if (shape === "documents") return ok(records.map((r) => r.document));
  if (shape === "items") return ok({ items: records });
  return ok(records);
}

/**
 * The receiver's acknowledgement: [doc] the Swagger example sends no body, [client] a 2026 integrator
 * sends `{"message": "ACKNOWLEDGED"}`: both are taken; another message is refused.
 */
function acknowledge(ctx: SimContext, irn: string, body: unknown) {
  if (body !== undefined && body !== null) {
    if (!isObject(body)) throw invalid(TEXTS.type("transmitrequest", "a JSON object"));
    if (body.message !== undefined && body.message !== "ACKNOWLEDGED") {
      throw invalid(TEXTS.oneOf("transmitrequest.message", ["ACKNOWLEDGED"]));
    }
  }
  const record = ctx.registry.acknowledge(irn);
  return ok({ irn, status: record.entry_status, acknowledged_at: record.acknowledged_at });
}

/** Delivery to the buyer's APP and its lookups; the receiver's side (pull, acknowledge). */
export function transmitEndpoints(ctx: SimContext): Endpoint[] {
  const { registry } = ctx;
  const handler = HANDLERS.invoice;
  const exchanged = (match: (r: InvoiceRecord) => boolean) =>
    registry
      .invoices()
      .filter((r) => r.transmitted && match(r))
      .map((r) => transmission(r, registry));
  return [
    {
      // [doc] POSTed with an empty body. [client] An APP's transmit answer carries `data.ok`; the rest is
      // [unknown]. A repeat finds the invoice delivered and answers the same: a retried transmit is harmless.
      method: "POST",
      url: "/api/v1/invoice/transmit/:irn",
      handler,
      extra: ["not_enabled", "partial", "no_webhook"],
      prefixes: TRANSMIT_PREFIXES,
      handle: (r) => {
        const record = registry.transmit(r.params.irn ?? "");
        return ok({
          ok: true,
          irn: record.irn,
          status: "TRANSMITTED",
          transmitted_at: record.transmitted_at,
        });
      },
    },
    {
      // Every accepted PATCH, first or repeat, is counted (registry.acknowledgements()); the common
      // faults apply, `drop` after the acknowledgement took effect.
      method: "PATCH",
      url: "/api/v1/invoice/transmit/:irn",
      handler,
      prefixes: ACK_PREFIXES,
      handle: (r) => acknowledge(ctx, r.params.irn ?? "", r.body),
    },
    {
      method: "GET",
      url: "/api/v1/invoice/transmit/lookup/:irn",
      handler,
      handle: (r) => ok(transmission(registry.found(r.params.irn ?? ""), registry)),
    },
    {
      method: "GET",
      url: "/api/v1/invoice/transmit/lookup/tin/:tin",
      handler,
      handle: (r) => {
        const tin = r.params.tin ?? "";
        return ok(exchanged((t) => partiesOf(t).some((p) => tinOf(p, registry) === tin)));
      },
    },
    {
      method: "GET",
      url: "/api/v1/invoice/transmit/lookup/party/:party_id",
      handler,
      handle: (r) => {
        const party = registry.party(r.params.party_id ?? "");
        if (!party) throw new MbsError(404, PARTY_NOT_FOUND);
        return ok(exchanged((t) => involves(t, party, registry)));
      },
    },
    {
      method: "GET",
      url: "/api/v1/invoice/transmit/pull",
      handler,
      handle: (r) => pulled(pull(registry, r.query), ctx.rules().pull_shape),
    },
    {
      // [doc] the APP's receiving set-up; the answer's fields are the simulator's [unknown].
      method: "GET",
      url: "/api/v1/invoice/transmit/self-health-check",
      handler,
      handle: () => ok({ healthy: true, receiving: "ENABLED", taxpayers: registry.taxpayers.length }),
    },
  ];
}
