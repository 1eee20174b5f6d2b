import type { Sealer } from "../crypto/sealer.ts";
import { type Db, type Executor, writeTransaction } from "../db/database.ts";
import type { Business } from "../db/schema.ts";
import { storeDocument } from "../documents/stored.ts";
import { messageOf } from "../outbox/failure.ts";
import type { WebhookNotifier } from "../webhooks/notifier.ts";
import type { InboxRepository, NewReceived, ReceivedEvent } from "./inbox-repository.ts";
import {
  addressOf,
  type Checked,
  checkReceived,
  type Incoming,
  plainTin,
  type Validate,
} from "./received-checks.ts";
import { asSigned, type Signer } from "./signer.ts";

/** Where a received invoice came from: pulled from the authority, or signed by a business of this service. */
export type Source = "mbs" | "builtin";

/** An incoming invoice; handed over by a business of this service (builtin), with that business's id. */
export type Handed = Incoming & { signer?: string };

/** What a batch of incoming invoices became. */
export type Receipt = {
  /** Stored now, each once. */
  stored: Array<{ irn: string; businessId: string; warnings: number }>;
  /** Stored before (another pull, another process): left as they were. */
  already: number;
  /** Not for any business of this service, or without an IRN: not stored, not acknowledged. */
  unaddressed: Array<{ irn: string | null; reason: string }>;
};

/** How long the TINs of this service's businesses are kept before they are read again. */
const BUYERS_TTL_MS = 5000;

/**
 * How invoices reach the inbox: checked each on its own, stored once per buyer and IRN, each with
 * its history entry and `invoice.received` event in the transaction that stores it. What arrives
 * from a source is checked outside any transaction (a large document on the validation thread);
 * what a business of this service hands over is checked in the caller's.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a service factory: checking, storing, and the two ways in, each short
export function inboxReceiving(deps: {
  db: Db;
  inbox: Pick<InboxRepository, "store" | "addEvents" | "known">;
  businesses: { list(tx?: Executor): Promise<Business[]> };
  sealer: Pick<Sealer, "seal">;
  notifier: Pick<WebhookNotifier, "notifyMany">;
  /** Checks received documents (the validation pool's, which takes large ones off the event loop). */
  validate?: Validate;
}) {
  const { db, inbox, sealer, notifier } = deps;

  type Known = { buyers: Map<string, string>; signers: Map<string, Signer>; until: number };
  let cached: Known | undefined;
  /**
   * Plain TIN → the business whose inbox it is; the first registered where two share a TIN. Kept
   * for BUYERS_TTL_MS: every delivery of the builtin authority asks (a business registered since
   * receives from then on). Read in the caller's transaction: on SQLite it holds the one connection.
   * With them, each business's TIN and name, as the signer of what it hands over.
   */
  async function known(tx: Executor, fresh = false): Promise<Known> {
    if (!fresh && cached && cached.until > Date.now()) return cached;
    const buyers = new Map<string, string>();
    const signers = new Map<string, Signer>();
    for (const business of await deps.businesses.list(tx)) {
      const tin = plainTin(business.tin);
      if (!buyers.has(tin)) buyers.set(tin, business.id);
      signers.set(business.id, { tin: business.tin, name: business.name });
    }
    cached = { buyers, signers, until: Date.now() + BUYERS_TTL_MS };
    return cached;
  }
  const buyersOf = async (tx: Executor) => (await known(tx)).buyers;

  /** The business that signed a handed-over invoice: one registered since the list was read is read anew. */
  async function signerOf(id: string, tx: Executor): Promise<Signer> {
    const signer = (await known(tx)).signers.get(id) ?? (await known(tx, true)).signers.get(id);
    if (!signer) throw new Error(`the business ${id} that signed a handed-over invoice is not registered`);
    return signer;
  }

  function rowOf(
    checked: Extract<Checked, { accepted: true }>,
    incoming: Incoming,
    source: Source,
    at: string,
  ): NewReceived {
    const stored = storeDocument(incoming.document, checked.irn, sealer);
    return {
      business_id: checked.businessId,
      irn: checked.irn,
      source,
      supplier_tin: checked.supplierTin,
      supplier_name: checked.supplierName,
      customer_tin: checked.customerTin,
      issue_date: checked.issueDate,
      invoice_type_code: checked.invoiceTypeCode,
      currency: checked.currency,
      payable_amount: checked.payableAmount,
      document: stored.document,
      sealed: stored.sealed,
      checks: JSON.stringify(checked.warnings),
      warnings: checked.warnings.length,
      status: "RECEIVED",
      acknowledgement: "none",
      reason: null,
      received_at: at,
      decided_at: null,
      updated_at: at,
    };
  }

  /** What the checks made of a batch, before any of it is stored. */
  type Prepared = {
    at: string;
    rows: NewReceived[];
    checkedOf: Map<string, Extract<Checked, { accepted: true }>>;
    unaddressed: Receipt["unaddressed"];
    /** Stored before, found so before any check. */
    already: number;
  };

  /**
   * Checks each incoming invoice and makes its row, each on its own: one that the checks or the
   * store cannot take (a document built to break them) is set aside with its reason, and the others
   * go on. A source's own set-aside entries (a listed entry over a bound) are reported as they are.
   */
  async function prepare(
    items: readonly Handed[],
    source: Source,
    validate: Validate | undefined,
    tx: Executor,
  ): Promise<Prepared> {
    const buyers = await buyersOf(tx);
    // What a source hands over again (a day pulled again, or going on where it stopped) and is
    // stored already is not checked again: one indexed read instead of the checks' work.
    const addresses = items.map((item) =>
      validate !== undefined && item.setAside === undefined ? addressOf(item, buyers) : undefined,
    );
    const storedAlready = await inbox.known(
      addresses.filter((address) => address !== undefined),
      tx,
    );
    const prepared: Prepared = {
      at: new Date().toISOString(),
      rows: [],
      checkedOf: new Map(),
      unaddressed: [],
      already: 0,
    };
    for (const [i, incoming] of items.entries()) {
      if (incoming.setAside !== undefined) {
        prepared.unaddressed.push({ irn: null, reason: incoming.setAside });
        continue;
      }
      const address = addresses[i];
      if (address && storedAlready.has(`${address.businessId} ${address.irn}`)) {
        prepared.already++;
        continue;
      }
      try {
        const found = await checkReceived(incoming, buyers, validate);
        if (!found.accepted) {
          prepared.unaddressed.push({ irn: found.irn, reason: found.reason });
          continue;
        }
        const checked =
          incoming.signer === undefined ? found : asSigned(found, await signerOf(incoming.signer, tx));
        const key = `${checked.businessId} ${checked.irn}`;
        // The same invoice twice in one answer: the first is the one stored.
        if (prepared.checkedOf.has(key)) continue;
        const row = rowOf(checked, incoming, source, prepared.at);
        prepared.checkedOf.set(key, checked);
        prepared.rows.push(row);
      } catch (err) {
        const irn = typeof incoming.irn === "string" ? incoming.irn.slice(0, 100) : null;
        prepared.unaddressed.push({ irn, reason: `set aside: ${messageOf(err).slice(0, 300)}` });
      }
    }
    return prepared;
  }

  /**
   * Stores checked invoices in the caller's transaction: each new one with its history entry and
   * its `invoice.received` event, together, so none is stored without being announced and none
   * announced twice. One already stored for its buyer is left as it is.
   */
  async function store(prepared: Prepared, source: Source, actor: string, tx: Executor): Promise<Receipt> {
    const { at, rows, checkedOf } = prepared;
    const receipt: Receipt = { stored: [], already: 0, unaddressed: prepared.unaddressed };
    const stored = await inbox.store(rows, tx);
    receipt.already = prepared.already + rows.length - stored.length;
    // By buyer and IRN, as stored: one IRN may reach two businesses of this service in one batch.
    const byKey = new Map(rows.map((row) => [`${row.business_id} ${row.irn}`, row]));
    const events: Array<ReceivedEvent & { receivedId: number }> = [];
    const notices = [];
    for (const { id, business_id, irn } of stored) {
      const key = `${business_id} ${irn}`;
      const row = byKey.get(key);
      // The checks' findings as made, not read back from the JSON just written.
      const checked = checkedOf.get(key);
      if (!row || !checked) continue;
      const warnings = checked.warnings.length;
      receipt.stored.push({ irn, businessId: row.business_id, warnings });
      events.push({
        receivedId: id,
        at,
        type: "received",
        actor,
        detail: { source, warnings, rules: [...new Set(checked.warnings.map((w) => w.rule))] },
      });
      notices.push({
        businessId: row.business_id,
        type: "invoice.received" as const,
        at,
        data: {
          irn,
          source,
          supplier: { tin: row.supplier_tin, name: row.supplier_name },
          issue_date: row.issue_date,
          currency: row.currency,
          payable_amount: row.payable_amount,
          warnings,
          received_at: at,
        },
      });
    }
    await inbox.addEvents(events, tx);
    await notifier.notifyMany(notices, tx);
    return receipt;
  }

  /**
   * Checks and stores incoming invoices in the caller's transaction (an invoice signed by one
   * business of this service for another: a document the sign path bounded and checked already).
   */
  async function receiveIn(
    items: readonly Handed[],
    source: Source,
    actor: string,
    tx: Executor,
  ): Promise<Receipt> {
    const prepared = await prepare(items, source, undefined, tx);
    return store(prepared, source, actor, tx);
  }

  return {
    /**
     * Checks a batch pulled from a source, off the event loop where a document is large and outside
     * any transaction, then stores it in a transaction of its own.
     */
    async receive(items: readonly Incoming[], source: Source, actor: string): Promise<Receipt> {
      const prepared = await prepare(items, source, deps.validate, db);
      // A slice stored before (a day pulled again goes past what it stored) writes nothing: no
      // transaction, whose round trips would eat the lease it is going on within.
      if (prepared.rows.length === 0) {
        return { stored: [], already: prepared.already, unaddressed: prepared.unaddressed };
      }
      return writeTransaction(db, (tx) => store(prepared, source, actor, tx));
    },

    /** The same in the caller's transaction: an invoice signed by one business of this service for another. */
    receiveIn,

    /** The business of this service whose TIN this is, if any (in the caller's transaction). */
    buyer: async (customerTin: string, tx: Executor = db) => (await buyersOf(tx)).get(plainTin(customerTin)),
  };
}
