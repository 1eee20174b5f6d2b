import { batcher, type Outcome } from "../../batcher.ts";
import type { BusinessRepository, ChainHead } from "../../businesses/business-repository.ts";
import { actorOf, type Principal } from "../../businesses/business-service.ts";
import { canonicalBusinessId } from "../../businesses/ids.ts";
import type { BusinessProfile, BusinessProfiles } from "../../businesses/profiles.ts";
import type { Sealer } from "../../crypto/sealer.ts";
import type { Signer } from "../../crypto/signer.ts";
import { type Db, type Executor, isTransientDatabaseError, writeTransaction } from "../../db/database.ts";
import type { InvoiceTable } from "../../db/schema.ts";
import type { InvoiceDocument } from "../../documents/schema.ts";
import { openDocument } from "../../documents/stored.ts";
import type { InvoiceValidator } from "../../documents/validation/validation.ts";
import { capViolations, DomainError, MAX_VIOLATIONS, summarize, type Violation } from "../../errors.ts";
import type { SealingService } from "../../keys/sealing.ts";
import type { ProductCodes } from "../../reference/product-codes.ts";
import type { WebhookNotifier } from "../../webhooks/notifier.ts";
import { type InvoiceRepository, isUniqueViolation } from "../invoice-repository.ts";
import { type InvoiceLifecycle, initialState } from "../lifecycle.ts";
import { openingBalance } from "../payments/payment-decision.ts";
import type { InvoiceTransmits } from "../transmits.ts";
import { invoiceBatches } from "./batch.ts";
import { irnExists, sameDocument } from "./duplicates.ts";
import type { Preparer } from "./preparation-pool.ts";

const INVALID_INVOICE = "Failed to validate invoice";

function validationFailed(violations: Violation[], beyond = 0): DomainError {
  const { shown, total } = capViolations(violations, MAX_VIOLATIONS, beyond);
  return new DomainError("validation_failed", {
    message: INVALID_INVOICE,
    details: summarize(violations, 3, total),
    publicMessage: `The invoice was not accepted: ${total} problem(s) found; see error.violations for each field.`,
    violations: shown,
    violationsTotal: total,
  });
}

/**
 * Registering invoices: validate, sign, sign-transmit and the batches (batch.ts). Each document is checked
 * (validation.ts), prepared on the preparation thread (canonical form, sealing, QR), then signed and
 * stored with the other signs of its turn in one transaction (the group commit, `signInto`), which
 * also writes the first history entry, the webhook notice and, for sign-transmit, the delivery job.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a factory: check, prepare and the group commit are its closures, each under the limit
export function invoiceRegistration(deps: {
  db: Db;
  invoices: Pick<InvoiceRepository, "existing" | "find">;
  businesses: Pick<BusinessRepository, "lockChains" | "setChainHeads">;
  profiles: Pick<BusinessProfiles, "find">;
  sealer: Sealer;
  /** The key sealed values are stored under, read in the transaction that stores them. */
  sealing: Pick<SealingService, "under">;
  /** Works out the per-invoice cryptography of a sign. */
  preparer: Pick<Preparer, "prepare">;
  signer: Pick<Signer, "signCanonicalOffLoop">;
  validate: InvoiceValidator;
  products: Pick<ProductCodes, "current">;
  /** Stores the signed invoices in their first state, with their history, notices and deliveries. */
  lifecycle: Pick<InvoiceLifecycle, "signed">;
  notifier: Pick<WebhookNotifier, "subscribers">;
  /** sign-transmit waits for the delivery as transmit does. */
  transmits: Pick<InvoiceTransmits, "awaitDelivery">;
  /** A supplier TIN other than the signing business's is refused, not warned of. */
  strictSupplier?: boolean;
  /** Told how many invoices each committed batch signed. */
  onSigned?: (count: number) => void;
}) {
  const {
    db,
    invoices,
    businesses,
    profiles,
    sealer,
    sealing,
    preparer,
    signer,
    validate,
    products,
    lifecycle,
    notifier,
    transmits,
  } = deps;

  /** Validates a submitted document for the caller; returns it typed, with any warnings. */
  async function check(principal: Principal, body: unknown) {
    const claimed =
      typeof body === "object" && body !== null ? (body as Record<string, unknown>).business_id : undefined;
    // UUIDs compare case-insensitively (RFC 9562): `1880B96A-…` is the caller's `1880b96a-…`.
    const business =
      typeof claimed === "string" && canonicalBusinessId(claimed) === principal.businessId
        ? await profiles.find(principal.businessId)
        : undefined;
    const knownProducts = await products.current();
    const { errors, errorsBeyond, warnings, warningsBeyond, document } = await validate(body, {
      business,
      knownProducts,
      strictSupplier: deps.strictSupplier ?? false,
    });
    if (typeof claimed === "string" && !business) {
      errors.unshift({
        path: "business_id",
        rule: "business_exists",
        message: `business '${claimed}' does not exist or is not the business of these API credentials`,
        actual: claimed,
      });
    }
    if (errors.length > 0 || !business) throw validationFailed(errors, errorsBeyond);
    return { document: document as InvoiceDocument, business, warnings, warningsBeyond };
  }
  type Checked = Awaited<ReturnType<typeof check>>;

  /**
   * A sign as submitted: everything about it that does not depend on the hash chain. Its
   * cryptography (canonical form, sealing, QR code) is worked out on the preparation thread before
   * the chains are locked; under the lock remain only the chain link, the signature and the writes.
   */
  function submission(
    principal: Principal,
    document: InvoiceDocument,
    business: BusinessProfile,
    transmitting: boolean,
  ) {
    const signedAt = new Date().toISOString();
    return {
      principal,
      businessId: business.id,
      signedAt,
      input: {
        document: document as Record<string, unknown>,
        irn: document.irn,
        certificate: business.certificate,
        signedAt,
      },
      row: {
        irn: document.irn,
        business_id: business.id,
        ...initialState(transmitting, document.payment_status),
        payment_reference: null,
        invoice_type_code: document.invoice_type_code,
        issue_date: document.issue_date,
        supplier_tin: document.accounting_supplier_party.tin,
        customer_tin: document.accounting_customer_party.tin ?? null,
        signed_at: signedAt,
        transmitted_at: null,
        authority_reference: null,
        updated_at: signedAt,
        ...openingBalance(document),
      },
    };
  }
  type Submitted = ReturnType<typeof submission>;
  type Submission = Omit<Submitted, "input"> & {
    canonical: string;
    row: Submitted["row"] & { document: string; sealed: string | null; qr_code: string };
  };

  async function prepared(submitted: Submitted): Promise<Submission> {
    const { input, ...rest } = submitted;
    const { canonical, document, sealed, qrCode } = await preparer.prepare(input);
    return { ...rest, canonical, row: { ...rest.row, document, sealed, qr_code: qrCode } };
  }
  type Registered = { row: InvoiceTable; jobId: number | undefined };

  /** The preparation thread sealed under its first key; a rotation may have made another current. */
  async function resealUnderCurrentKey(tx: Executor, batch: readonly Submission[]): Promise<void> {
    if (!batch.some((s) => s.row.sealed !== null)) return;
    const under = await sealing.under(tx);
    for (const s of batch) if (s.row.sealed !== null) s.row.sealed = under.reseal(s.row.sealed, s.row.irn);
  }

  /**
   * Makes a submission the next link of its business's chain and moves the chain's head to it. The
   * link's hash is made here, in order; its signature is worked out off the event loop and is in
   * the row once `signature` resolves.
   */
  function link(item: Submission, head: ChainHead): { row: InvoiceTable; signature: Promise<string> } {
    const { row: draft, businessId, signedAt } = item;
    const signature = signer.signCanonicalOffLoop(
      {
        irn: draft.irn,
        business_id: businessId,
        signed_at: signedAt,
        previous_hash: head.chain_head,
      },
      item.canonical,
    );
    const row: InvoiceTable = {
      ...draft,
      chain_seq: head.chain_length + 1,
      previous_hash: head.chain_head,
      hash: signature.hash,
      signature: "",
      kid: signature.kid,
    };
    head.chain_length += 1;
    head.chain_head = signature.hash;
    return {
      row,
      signature: signature.value.then((value) => {
        row.signature = value;
        return value;
      }),
    };
  }

  /**
   * Signs and stores a batch in the caller's transaction with a few multi-row statements: each
   * invoice takes the next link of its business's chain, in submission order. An IRN registered
   * before, or earlier in the same batch, fails alone.
   */
  async function signInto(tx: Executor, batch: readonly Submission[]): Promise<Outcome<Registered>[]> {
    const businessIds = [...new Set(batch.map((s) => s.businessId))];
    await resealUnderCurrentKey(tx, batch);
    // The reads come before the chains are locked, so the lock is held for the writes alone (on
    // PostgreSQL, every statement under it is a round trip that every other sign of the business
    // waits for). An IRN registered meanwhile by another process still fails on the constraint.
    const taken = await invoices.existing(
      batch.map((s) => s.row.irn),
      tx,
    );
    const subscribers = await notifier.subscribers(businessIds, tx);
    const heads = new Map((await businesses.lockChains(businessIds, tx)).map((head) => [head.id, head]));
    const outcomes: Outcome<Registered>[] = [];
    const signed: Array<{ item: Submission; row: InvoiceTable }> = [];
    const signatures: Promise<string>[] = [];
    for (const item of batch) {
      const head = heads.get(item.businessId);
      if (!head) throw new Error(`business ${item.businessId} has no row to hold its chain`);
      if (taken.has(item.row.irn)) {
        outcomes.push({ ok: false, error: irnExists(item.row.irn) });
        continue;
      }
      taken.add(item.row.irn);
      const { row, signature } = link(item, head);
      signatures.push(signature);
      signed.push({ item, row });
      outcomes.push({ ok: true, value: { row, jobId: undefined } });
    }
    if (signed.length === 0) return outcomes;
    // The batch's signatures are worked out side by side on the thread pool while the loop goes on.
    await Promise.all(signatures);
    const jobs = await lifecycle.signed(
      signed.map(({ item, row }) => ({ row, actor: actorOf(item.principal) })),
      tx,
      subscribers,
    );
    await businesses.setChainHeads(
      [...new Set(signed.map(({ row }) => row.business_id))].map((id) => heads.get(id) as ChainHead),
      tx,
    );
    for (const outcome of outcomes) if (outcome.ok) outcome.value.jobId = jobs.get(outcome.value.row.irn);
    return outcomes;
  }

  /**
   * Group commit: the signs that reach this point in one turn of the event loop are signed and
   * stored in one transaction, with one commit (on SQLite, one fsync of the WAL) and a few multi-row
   * statements instead of a transaction and about ten statements each; each is answered only after
   * that commit.
   */
  const signing = batcher<Submission, Registered>(
    async (batch) => {
      try {
        const outcomes = await writeTransaction(db, (tx) => signInto(tx, batch));
        deps.onSigned?.(outcomes.filter((outcome) => outcome.ok).length);
        return outcomes;
      } catch (error) {
        if (batch.length === 1 || isTransientDatabaseError(error)) throw error;
        // Something failed that the batch did not foresee: each on its own, so only its culprit fails.
        return Promise.all(
          batch.map((item) =>
            writeTransaction(db, (tx) => signInto(tx, [item])).then(
              ([outcome]) => {
                if (outcome?.ok) deps.onSigned?.(1);
                return outcome as Outcome<Registered>;
              },
              (err: unknown) => ({ ok: false as const, error: err }),
            ),
          ),
        );
      }
    },
    // One batch at a time on both engines: a batch locks the chains of every business it holds, so
    // batches side by side mostly wait on each other's locks (measured on PostgreSQL, 2 processes:
    // 1,143 signs/s one at a time, 731 with four), while one at a time each takes everything that
    // arrived during the last.
    { maxBatch: 64, concurrency: 1 },
  );

  const readDocument = (row: InvoiceTable) => openDocument(row, sealer);

  async function register(principal: Principal, body: unknown, transmitting: boolean) {
    return commit(principal, await check(principal, body), transmitting);
  }

  /** Signs and stores a checked document. */
  async function commit(principal: Principal, checked: Checked, transmitting: boolean) {
    const { document, business, warnings, warningsBeyond } = checked;
    try {
      const registered = await signing.submit(
        await prepared(submission(principal, document, business, transmitting)),
      );
      return { ...registered, document, warnings, warningsBeyond };
    } catch (err) {
      // Registered before, or by a concurrent batch of another process (the constraint had the
      // last word).
      if (isUniqueViolation(err) || (err instanceof DomainError && err.code === "irn_exists")) {
        throw await duplicate(principal, document);
      }
      throw err;
    }
  }

  /** `IRN already exists.`, saying so when the business's stored invoice is this very document. */
  async function duplicate(principal: Principal, document: InvoiceDocument): Promise<DomainError> {
    try {
      const row = await invoices.find(document.irn, principal.businessId);
      const identical = row !== undefined && sameDocument(readDocument(row), document);
      return irnExists(document.irn, identical ? row.signed_at : undefined);
    } catch {
      // The comparison is a courtesy: the IRN is taken whatever it would have found.
      return irnExists(document.irn);
    }
  }

  const batches = invoiceBatches({ check, commit });

  return {
    async validate(principal: Principal, body: unknown) {
      const { warnings, warningsBeyond } = await check(principal, body);
      return { warnings, warningsBeyond };
    },

    async sign(principal: Principal, body: unknown) {
      const { warnings, warningsBeyond } = await register(principal, body, false);
      return { warnings, warningsBeyond };
    },

    /** Each document of a batch signed on its own, with a result each (batch.ts). */
    signMany: batches.signMany,

    async signAndTransmit(principal: Principal, body: unknown) {
      const { row, jobId, warnings, warningsBeyond } = await register(principal, body, true);
      await transmits.awaitDelivery(row.irn, jobId as number);
      return { warnings, warningsBeyond };
    },
  };
}

export type InvoiceRegistration = ReturnType<typeof invoiceRegistration>;
