import { createHash } from "node:crypto";
import { fraction } from "./faults.ts";
import { address, type PostalAddress, PRODUCTS, SELLERS } from "./inbound-catalog.ts";
import type { Registry } from "./registry.ts";
import { type Taxpayer, uuidOf } from "./taxpayers.ts";

// Invoices that sellers on other access points (APPs) send to this simulator's taxpayers as buyers:
// MBS holds them signed and transmitted, `pull` lists them and `PATCH transmit/{IRN}` acknowledges
// them. Made from the seed, as the fault decisions are (the same seed and index, the same invoice),
// in the document's fields (the MBS spec, section 3; the shared fixtures' names and forms).

/** At most this many invoices per injection, and at start. */
export const MAX_INBOUND = 10_000;
/** [client] The standard VAT rate, in per cent. */
export const VAT_PERCENT = 7.5;
/** How far a `wrong_total` invoice's `payable_amount` is from its `tax_inclusive_amount`. */
export const WRONG_TOTAL_OFFSET = 100;
/** Seeded invoices are transmitted over today and the days before it: this many days in all. */
export const INBOUND_DAYS = 3;

const DAY_MS = 86_400_000;

/** A seller on another APP: never one of the simulator's taxpayers. */
export type ForeignSeller = {
  business_id: string;
  /** [doc][recorded] 8 upper-case hex characters, as in every example. */
  service_id: string;
  tin: string;
  party_name: string;
  email: string;
  telephone: string;
  business_description: string;
  postal_address: PostalAddress;
};

const NUMBER_PREFIXES = ["INV", "SI", "FAC", "BIL", "NGS"] as const;
const DISCOUNT_RATES = [2.5, 5, 10, 12.5] as const;
const DUE_DAYS = [0, 7, 14, 30, 60] as const;
/** [unknown] How many naira one US dollar is taken for, in the seller's prices. */
const NAIRA_PER_DOLLAR = 1500;

const pick = <T>(options: readonly T[], f: number): T => options[Math.floor(f * options.length)] as T;
const minor = (kobo: number) => Math.round(kobo) / 100;
const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

type Draw = (...parts: (string | number)[]) => number;

/**
 * The draws of one invoice, numbers in [0,1) by name: a SHA-256 digest of the seed and the index, as
 * faults.ts draws, mixed with each draw's name by a fast 53-bit hash (cyrb53), so that an invoice of
 * 20 lines costs one digest. Each draw stands on its own: one added or changed moves no other.
 */
function drawsOf(seed: number, index: number): Draw {
  const key = createHash("sha256").update(["mbs-simulator inbound", seed, index].join("\u0000")).digest();
  const k1 = key.readUInt32BE(0);
  const k2 = key.readUInt32BE(4);
  return (...parts) => {
    const text = parts.join("\u0000");
    let h1 = k1 ^ 0xdeadbeef;
    let h2 = k2 ^ 0x41c6ce57;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    return (2_097_152 * (h2 >>> 0) + ((h1 >>> 0) >>> 11)) / 2 ** 53;
  };
}

/** A name as an e-mail domain: letters without their marks, words joined by hyphens. */
function domainOf(name: string): string {
  const plain = name
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/&/g, " and ")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
  return `${plain.slice(0, 40).replace(/-$/, "")}.example`;
}

/**
 * The other APPs' sellers of a seed: each with its own business id, service id and TIN, none a
 * taxpayer's (the TINs in the taxpayers' form, `NNNNNNNN-NNNN`).
 */
export function foreignSellers(seed: number, taxpayers: readonly Pick<Taxpayer, "tin" | "service_id">[]) {
  const tins = new Set(taxpayers.map((t) => t.tin));
  const serviceIds = new Set(taxpayers.map((t) => t.service_id));
  return SELLERS.map((seller, k): ForeignSeller => {
    const f = (part: string, attempt = 0) => fraction(seed, "inbound seller", k, part, attempt);
    let attempt = 0;
    let tin = "";
    let serviceId = "";
    do {
      tin = `${10_000_000 + Math.floor(f("tin", attempt) * 90_000_000)}-${String(1 + Math.floor(f("branch", attempt) * 3)).padStart(4, "0")}`;
      serviceId = Math.floor(f("service", attempt) * 2 ** 32)
        .toString(16)
        .padStart(8, "0")
        .toUpperCase();
      attempt += 1;
    } while (tins.has(tin) || serviceIds.has(serviceId));
    tins.add(tin);
    serviceIds.add(serviceId);
    return {
      business_id: uuidOf(seed, "foreign business", k),
      service_id: serviceId,
      tin,
      party_name: seller.name,
      email: `accounts@${domainOf(seller.name)}`,
      telephone: `+234${pick(["80", "81", "70", "90"], f("network"))}${String(Math.floor(f("phone") * 1e8)).padStart(8, "0")}`,
      business_description: seller.description,
      postal_address: seller.address,
    };
  });
}

/** One line, in kobo (cents for USD) so that every sum is exact. */
function lineOf(f: Draw, i: number, dollars: boolean) {
  const product = pick(PRODUCTS, f("product", i));
  const naira = product.min + f("price", i) * (product.max - product.min);
  // Half the prices are whole naira; the others carry kobo.
  const priceKobo = Math.max(
    1,
    dollars
      ? Math.round((naira * 100) / NAIRA_PER_DOLLAR)
      : f("kobo", i) < 0.5
        ? Math.round(naira) * 100
        : Math.round(naira * 100),
  );
  // Dear goods sell by the few, cheap ones by the hundred; litres, metres and hours in quarters.
  const most = naira > 100_000 ? 20 : 400;
  const quantity = product.fractional
    ? (1 + Math.floor(f("quantity", i) * most * 2)) / 4
    : 1 + Math.floor(f("quantity", i) ** 2 * most);
  const gross = Math.round(quantity * priceKobo);
  const discountRate = f("discount", i) < 0.3 ? pick(DISCOUNT_RATES, f("discount rate", i)) : 0;
  const discount = Math.round((gross * discountRate) / 100);
  const feeRate = f("fee", i) < 0.1 ? 1 : 0;
  const fee = Math.round((gross * feeRate) / 100);
  const extension = gross - discount + fee;
  const currency = dollars ? "USD" : "NGN";
  const line: Record<string, unknown> = {
    ...(product.hsn === undefined ? {} : { hsn_code: product.hsn }),
    product_category: product.category,
    ...(discountRate > 0 ? { discount_rate: discountRate, discount_amount: minor(discount) } : {}),
    ...(feeRate > 0 ? { fee_rate: feeRate, fee_amount: minor(fee) } : {}),
    invoiced_quantity: quantity,
    line_extension_amount: minor(extension),
    item: {
      name: product.name,
      description: product.description,
      sellers_item_identification: `${product.unit}-${String(PRODUCTS.indexOf(product) + 101)}`,
    },
    price: {
      price_amount: minor(priceKobo),
      base_quantity: 1,
      // Most APPs send a Rec. 20 code; some, as the authority's examples do, words [doc].
      price_unit: f("unit words", i) < 0.8 ? product.unit : `${currency} per ${product.per}`,
    },
    ...(product.isic === undefined ? {} : { isic_code: product.isic, service_category: product.category }),
  };
  return { line, extension };
}

export type InboundOptions = {
  sellers: readonly ForeignSeller[];
  buyer: Pick<Taxpayer, "tin" | "name" | "email" | "sector">;
  /** ISO timestamp of the transmission; the invoice was issued up to 5 days before. */
  transmittedAt: string;
  /** `payable_amount` off by WRONG_TOTAL_OFFSET from `tax_inclusive_amount`. */
  wrongTotal?: boolean;
};

export type InboundInvoice = { irn: string; business_id: string; document: Record<string, unknown> };

/** The header dates: issued up to 5 days before the transmission, due 0 to 60 days after issue. */
function datesOf(f: Draw, transmittedAt: string) {
  const issued = Date.parse(transmittedAt) - 60_000 - Math.floor(f("age") * 5 * DAY_MS);
  const issueDate = dateOf(issued);
  return {
    issue_date: issueDate,
    due_date: dateOf(Date.parse(issueDate) + pick(DUE_DAYS, f("due")) * DAY_MS),
    issue_time: new Date(issued).toISOString().slice(11, 19),
  };
}

/**
 * The `index`-th invoice of a seed from another APP's seller to `buyer`. IRN
 * `{invoice number}-{the seller's service id}-{YYYYMMDD of the issue date}`; type 381 (MBS's
 * commercial invoice), sometimes 396 or 380 (MBS's credit note, with its billing reference);
 * NGN, sometimes USD with tax in NGN; 1 to 20 lines; VAT 7.5%; totals that add up unless
 * `wrongTotal`.
 */
export function inboundInvoice(seed: number, index: number, options: InboundOptions): InboundInvoice {
  const f = drawsOf(seed, index);
  const seller = pick(options.sellers, f("seller"));
  const dates = datesOf(f, options.transmittedAt);
  const kind = f("type");
  const type = kind < 0.75 ? "381" : kind < 0.9 ? "396" : "380";
  const number = `${type === "380" ? "CN" : pick(NUMBER_PREFIXES, f("prefix"))}${String(index + 1).padStart(6, "0")}`;
  const irn = `${number}-${seller.service_id}-${dates.issue_date.replaceAll("-", "")}`;
  const dollars = f("currency") < 0.15;
  const count = 1 + Math.floor(f("lines") ** 2 * 20);
  const lines = Array.from({ length: count }, (_, i) => lineOf(f, i, dollars));
  const net = lines.reduce((sum, l) => sum + l.extension, 0);
  const tax = Math.round((net * VAT_PERCENT) / 100);
  const payable = net + tax + (options.wrongTotal ? WRONG_TOTAL_OFFSET * 100 : 0);
  const billed = dateOf(Date.parse(dates.issue_date) - 30 * DAY_MS);
  const { buyer } = options;
  const document: Record<string, unknown> = {
    business_id: seller.business_id,
    irn,
    ...dates,
    invoice_type_code: type,
    invoice_kind: "B2B",
    payment_status: "PENDING",
    ...(f("note") < 0.4 ? { note: `Delivery to ${buyer.name}, receiving bay ${1 + (index % 4)}` } : {}),
    tax_point_date: dates.issue_date,
    document_currency_code: dollars ? "USD" : "NGN",
    tax_currency_code: "NGN",
    ...(f("order") < 0.5 ? { order_reference: `PO-${1000 + Math.floor(f("order number") * 9000)}` } : {}),
    ...(type === "380"
      ? {
          billing_reference: [
            {
              irn: `INV${String(index + 1).padStart(6, "0")}-${seller.service_id}-${billed.replaceAll("-", "")}`,
              issue_date: billed,
            },
          ],
        }
      : {}),
    accounting_supplier_party: {
      party_name: seller.party_name,
      tin: seller.tin,
      email: seller.email,
      telephone: seller.telephone,
      business_description: seller.business_description,
      postal_address: seller.postal_address,
    },
    accounting_customer_party: {
      party_name: buyer.name,
      tin: buyer.tin,
      email: buyer.email,
      business_description: buyer.sector,
      postal_address: address("3 Creek Road", "Lagos", "101001", "NG-LA-EOS"),
    },
    ...(f("means") < 0.6
      ? { payment_means: [{ payment_means_code: "30", payment_due_date: dates.due_date }] }
      : {}),
    tax_total: [
      {
        tax_amount: minor(tax),
        tax_subtotal: [
          {
            taxable_amount: minor(net),
            tax_amount: minor(tax),
            tax_category: { id: "STANDARD_VAT", percent: VAT_PERCENT },
          },
        ],
      },
    ],
    legal_monetary_total: {
      line_extension_amount: minor(net),
      tax_exclusive_amount: minor(net),
      tax_inclusive_amount: minor(net + tax),
      payable_amount: minor(payable),
    },
    invoice_line: lines.map((l) => l.line),
  };
  return { irn, business_id: seller.business_id, document };
}

/** When the `index`-th of the invoices seeded at start was transmitted: today or a day before it. */
export function seededTransmission(seed: number, index: number, now: number): string {
  const day = index % INBOUND_DAYS;
  const midnight = Math.floor(now / DAY_MS) * DAY_MS;
  const f = fraction(seed, "inbound", index, "transmitted");
  // Today's only up to now; the earlier days' at any time of the day.
  const at = day === 0 ? midnight + f * (now - midnight) : midnight - day * DAY_MS + f * (DAY_MS - 1);
  return new Date(Math.floor(at)).toISOString();
}

export type InboundSummary = {
  irn: string;
  business_id: string;
  supplier_tin: string;
  buyer_tin: string;
  transmitted_at: string;
};

/**
 * The simulator's source of inbound invoices: generates them in index order (the same seed and
 * calls, the same invoices) and registers each through the registry, signed and transmitted.
 */
export function createInbound(seed: number, registry: Registry) {
  const sellers = foreignSellers(seed, registry.taxpayers);
  let next = 0;

  const buyerAt = (i: number) => registry.taxpayers[i % registry.taxpayers.length] as Taxpayer;
  /**
   * Registers the next invoice, to `buyer` or else to the taxpayer its index falls on (round the
   * taxpayers); an index whose IRN is taken (by a caller's document) is skipped.
   */
  const one = (buyer: Taxpayer | undefined, at: (index: number) => string, wrongTotal: boolean): string => {
    for (;;) {
      const index = next++;
      const transmittedAt = at(index);
      const invoice = inboundInvoice(seed, index, {
        sellers,
        buyer: buyer ?? buyerAt(index),
        transmittedAt,
        wrongTotal,
      });
      if (registry.deliver(invoice.irn, invoice.business_id, invoice.document, transmittedAt)) {
        return invoice.irn;
      }
    }
  };

  return {
    sellers,
    /** `count` invoices, to `buyer` or else spread over the taxpayers, all transmitted at `transmittedAt`. */
    generate(options: { count: number; buyer?: Taxpayer; transmittedAt: string; wrongTotal?: boolean }) {
      return Array.from({ length: options.count }, () =>
        one(options.buyer, () => options.transmittedAt, options.wrongTotal === true),
      );
    },
    /** The invoices of the start: spread over the taxpayers and over the last INBOUND_DAYS days. */
    seed(count: number, now = Date.now()): string[] {
      return Array.from({ length: count }, () =>
        one(undefined, (index) => seededTransmission(seed, index, now), false),
      );
    },
    /** A caller's document, as it is, transmitted at `transmittedAt`; false when its IRN is taken. */
    deliver(irn: string, businessId: string, document: Record<string, unknown>, transmittedAt: string) {
      return registry.deliver(irn, businessId, document, transmittedAt);
    },
    /** What identifies a delivered invoice, for the start-up line and the control endpoint. */
    summary(irn: string): InboundSummary {
      const record = registry.found(irn);
      const tinOf = (name: string) => {
        const party = record.document[name];
        return typeof party === "object" && party !== null && "tin" in party ? String(party.tin) : "";
      };
      return {
        irn,
        business_id: record.business_id,
        supplier_tin: tinOf("accounting_supplier_party"),
        buyer_tin: tinOf("accounting_customer_party"),
        transmitted_at: record.transmitted_at ?? "",
      };
    },
  };
}

export type InboundSource = ReturnType<typeof createInbound>;
