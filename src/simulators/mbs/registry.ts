import { randomUUID } from "node:crypto";
import { MbsError, NOT_TRANSMITTED, notRegistered } from "./envelopes.ts";
import type { Taxpayer } from "./taxpayers.ts";

/**
 * [doc] PENDING, PAID, CANCELED (behind the `canceled` rule); [client] PARTIAL (April 2026) and
 * REJECTED (seen in an APP's relay of MBS's confirm answers; this service's connector sends it).
 */
export const PAYMENT_STATUSES = ["PENDING", "PAID", "PARTIAL", "REJECTED", "CANCELED"] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export type Payment = {
  payment_status: PaymentStatus;
  reference: string | null;
  amount: number | null;
  payment_update_date: string | null;
  recorded_at: string;
};

/** SIGNED, then TRANSMITTED (`POST transmit`), then ACKNOWLEDGED (the receiver's `PATCH transmit`). */
export type EntryStatus = "SIGNED" | "TRANSMITTED" | "ACKNOWLEDGED";

export type InvoiceRecord = {
  irn: string;
  business_id: string;
  entry_status: EntryStatus;
  payment_status: PaymentStatus;
  payments: Payment[];
  transmitted: boolean;
  transmitted_at: string | null;
  acknowledged: boolean;
  acknowledged_at: string | null;
  signed_at: string;
  /** The document as signed, kept apart from the request so later answers return it unchanged. */
  document: Record<string, unknown>;
};

export type Party = {
  id: string;
  business_id: string;
  party_name: string;
  tin: string;
  email: string;
  telephone: string | null;
  business_description: string | null;
  postal_address: unknown;
  postal_address_id: string | null;
  created_at: string;
};

export type PaymentUpdate = {
  payment_status: PaymentStatus;
  reference?: string;
  amount?: number;
  payment_update_date?: string;
};

/** The simulator's whole state, in memory: every change to an invoice goes through these methods. */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a factory: the registry's moves are its closures, each short
export function createRegistry(taxpayers: readonly Taxpayer[]) {
  const invoices = new Map<string, InvoiceRecord>();
  const registrations = new Map<string, number>();
  const refusedSigns = new Map<string, number>();
  /** Every accepted `PATCH transmit/{IRN}` (the first, which changes the state, and each repeat). */
  const acknowledgements = new Map<string, number>();
  /** The IRNs of invoices other APPs' sellers sent to our taxpayers, in the order they came. */
  const inbound = new Set<string>();
  const parties = new Map<string, Party>();
  const vatReports = new Map<string, Record<string, unknown>>();
  const now = () => new Date().toISOString();

  const found = (irn: string): InvoiceRecord => {
    const record = invoices.get(irn);
    if (!record) throw notRegistered(irn);
    return record;
  };

  return {
    taxpayers,
    taxpayer: (businessId: string) => taxpayers.find((t) => t.business_id === businessId),
    entity: (entityId: string) => taxpayers.find((t) => t.entity_id === entityId),
    taxpayerByTin: (tin: string) => taxpayers.find((t) => t.tin === tin),
    invoice: (irn: string) => invoices.get(irn),
    invoices: () => [...invoices.values()],
    found,
    registrations: () => new Map(registrations),
    refusedSigns: () => new Map(refusedSigns),
    acknowledgements: () => new Map(acknowledgements),
    /** The invoices from other APPs' sellers (`deliver`), in the order they came. */
    inbound: () => [...inbound].map(found),

    /** Registers a signed document under its IRN; false when the IRN is taken (nothing changes). */
    register(irn: string, businessId: string, document: Record<string, unknown>): boolean {
      if (invoices.has(irn)) {
        // A client that signs again what it registered already: what a connector must never do.
        refusedSigns.set(irn, (refusedSigns.get(irn) ?? 0) + 1);
        return false;
      }
      invoices.set(irn, {
        irn,
        business_id: businessId,
        entry_status: "SIGNED",
        payment_status: "PENDING",
        payments: [],
        transmitted: false,
        transmitted_at: null,
        acknowledged: false,
        acknowledged_at: null,
        signed_at: now(),
        document: structuredClone(document),
      });
      registrations.set(irn, (registrations.get(irn) ?? 0) + 1);
      return true;
    },

    /**
     * An invoice another APP's seller signed and MBS transmitted to one of our taxpayers (as buyer):
     * registered signed and transmitted at once, so `pull` lists it until it is acknowledged. It is
     * no sign of ours: `registrations()` does not count it. False when the IRN is taken (nothing changes).
     */
    deliver(
      irn: string,
      businessId: string,
      document: Record<string, unknown>,
      transmittedAt: string,
    ): boolean {
      if (invoices.has(irn)) return false;
      invoices.set(irn, {
        irn,
        business_id: businessId,
        entry_status: "TRANSMITTED",
        payment_status: "PENDING",
        payments: [],
        transmitted: true,
        transmitted_at: transmittedAt,
        acknowledged: false,
        acknowledged_at: null,
        signed_at: transmittedAt,
        document: structuredClone(document),
      });
      inbound.add(irn);
      return true;
    },

    /** Delivery to the buyer's APP; a repeat finds it done and changes nothing. */
    transmit(irn: string): InvoiceRecord {
      const record = found(irn);
      if (!record.transmitted) {
        record.transmitted = true;
        record.transmitted_at = now();
        record.entry_status = "TRANSMITTED";
      }
      return record;
    },

    /** The receiver's acknowledgement; a repeat changes nothing but is counted in `acknowledgements()`. */
    acknowledge(irn: string): InvoiceRecord {
      const record = found(irn);
      if (!record.transmitted) throw new MbsError(400, NOT_TRANSMITTED, { details: `irn ${irn}` });
      acknowledgements.set(irn, (acknowledgements.get(irn) ?? 0) + 1);
      if (!record.acknowledged) {
        record.acknowledged = true;
        record.acknowledged_at = now();
        record.entry_status = "ACKNOWLEDGED";
      }
      return record;
    },

    /**
     * [client] Only a registered (signed) invoice is updated: `found` throws otherwise. Which moves
     * between the statuses MBS takes, no material records, so every one is taken (PAID after
     * CANCELED, PENDING after PAID…): refusing one would make a connector handle a refusal MBS may
     * never give. A same-status repeat but of PARTIAL is accepted and changes nothing, so a client
     * that retries after losing the answer succeeds; PARTIAL may repeat (another instalment).
     */
    updatePayment(irn: string, update: PaymentUpdate): InvoiceRecord {
      const record = found(irn);
      const to = update.payment_status;
      if (record.payment_status === to && to !== "PARTIAL") return record;
      // A PARTIAL repeated with the same reference, amount and date is a client's retry of one
      // payment whose answer it lost, not a second payment (the simulator's assumption).
      const replay = record.payments.some(
        (p) =>
          p.payment_status === "PARTIAL" &&
          p.reference === (update.reference ?? null) &&
          p.amount === (update.amount ?? null) &&
          p.payment_update_date === (update.payment_update_date ?? null),
      );
      if (to === "PARTIAL" && replay) return record;
      record.payment_status = to;
      record.payments.push({
        payment_status: to,
        reference: update.reference ?? null,
        amount: update.amount ?? null,
        payment_update_date: update.payment_update_date ?? null,
        recorded_at: now(),
      });
      return record;
    },

    party: (id: string) => parties.get(id),
    parties: () => [...parties.values()],

    /** A party is one per business and TIN: a repeat answers the first, so a retried create is harmless. */
    addParty(input: Omit<Party, "id" | "created_at">): { party: Party; created: boolean } {
      const existing = [...parties.values()].find(
        (p) => p.business_id === input.business_id && p.tin === input.tin,
      );
      if (existing) return { party: existing, created: false };
      const party = { id: randomUUID(), ...input, created_at: now() };
      parties.set(party.id, party);
      return { party, created: true };
    },

    /** A VAT report by its key (`irn:` or `vendor:` and the id): a repeat is answered, not recorded again. */
    vatReport: (key: string) => vatReports.get(key),
    vatReports: () => [...vatReports.values()],
    addVatReport(key: string, report: Record<string, unknown>) {
      vatReports.set(key, report);
    },
  };
}

export type Registry = ReturnType<typeof createRegistry>;
