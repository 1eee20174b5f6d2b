import type { BusinessRepository } from "../businesses/repository.ts";
import { actorOf, type Principal } from "../businesses/service.ts";
import type { Db } from "../db/database.ts";
import type { GroupCommit } from "../db/group-commit.ts";
import type { Business, InvoiceTable } from "../db/schema.ts";
import { DomainError, summarize, type Violation } from "../http/errors.ts";
import type { Sealer } from "../keys/sealer.ts";
import type { CatalogRepository } from "../reference/catalog-repository.ts";
import type { PaymentStatus } from "../reference/data.ts";
import { irnProblem } from "../signing/irn.ts";
import type { QrCodec } from "../signing/qr.ts";
import type { Signature, Signer } from "../signing/signer.ts";
import type { TransmissionService } from "../transmission/service.ts";
import { type InvoiceRepository, isUniqueViolation } from "./repository.ts";
import { hsCodesOf } from "./rules/catalog.ts";
import type { InvoiceDocument } from "./schema.ts";
import { openDocument, storeDocument } from "./stored-document.ts";
import type { InvoiceValidator } from "./validation.ts";

/** What webhook events say about an invoice: its state, never its content. */
function eventData(row: Pick<InvoiceTable, "irn" | "business_id" | "status" | "payment_status">) {
  return {
    irn: row.irn,
    business_id: row.business_id,
    status: row.status,
    payment_status: row.payment_status,
  };
}

type ChainLink = { seq: number; previousHash: string | null; signature: Signature };

export type InvoiceStatus = "SIGNED" | "TRANSMITTING" | "TRANSMITTED" | "TRANSMISSION_FAILED";

const INVALID_INVOICE = "Failed to validate invoice";

function validationFailed(violations: Violation[]): DomainError {
  return new DomainError("validation_failed", {
    message: INVALID_INVOICE,
    details: summarize(violations),
    publicMessage: `The invoice was not accepted: ${violations.length} problem(s) found; see error.violations for each field.`,
    violations,
  });
}

function notFound(irn: string): DomainError {
  // The same answer whether the IRN is unknown or belongs to another business: nothing leaks.
  return new DomainError("not_found", {
    message: "Invoice not found",
    details: `no invoice with IRN '${irn}' is registered for this business`,
  });
}

export function invoiceService(deps: {
  db: Db;
  /** Where signs commit: several to a transaction under load (see group-commit.ts). */
  commit: GroupCommit;
  invoices: InvoiceRepository;
  businesses: Pick<BusinessRepository, "findById" | "advanceChain" | "setChainHead">;
  sealer: Sealer;
  qr: Pick<QrCodec, "encrypt">;
  signer: Pick<Signer, "sign">;
  validate: InvoiceValidator;
  catalog: Pick<CatalogRepository, "knownProducts">;
  transmission: Pick<TransmissionService, "enqueueDelivery" | "deliverNow" | "notify">;
  transmitWaitMs: number;
}) {
  const {
    db,
    commit,
    invoices,
    businesses,
    sealer,
    qr,
    signer,
    validate,
    catalog,
    transmission,
    transmitWaitMs,
  } = deps;

  /** Validates a submitted document for the caller; returns it typed, with any warnings. */
  async function check(principal: Principal, body: unknown) {
    const claimed =
      typeof body === "object" && body !== null ? (body as Record<string, unknown>).business_id : undefined;
    const business =
      typeof claimed === "string" && claimed === principal.businessId
        ? await businesses.findById(claimed)
        : undefined;
    const knownProducts = await catalog.knownProducts(hsCodesOf(body));
    const { errors, warnings } = validate(body, { business, knownProducts });
    if (typeof claimed === "string" && !business) {
      errors.unshift({
        path: "business_id",
        rule: "business_exists",
        message: `business '${claimed}' does not exist or is not the business of these API credentials`,
        actual: claimed,
      });
    }
    if (errors.length > 0 || !business) throw validationFailed(errors);
    return { document: body as InvoiceDocument, business, warnings };
  }

  /** The stored row: confidential fields sealed, the rest as submitted, with its place in the chain. */
  function toRow(document: InvoiceDocument, business: Business, now: string, chain: ChainLink): InvoiceTable {
    return {
      irn: document.irn,
      business_id: business.id,
      status: "SIGNED",
      payment_status: document.payment_status ?? "PENDING",
      payment_reference: null,
      invoice_type_code: document.invoice_type_code,
      issue_date: document.issue_date,
      supplier_tin: document.accounting_supplier_party.tin,
      customer_tin: document.accounting_customer_party.tin ?? null,
      ...storeDocument(document, document.irn, sealer),
      signed_at: now,
      transmitted_at: null,
      authority_reference: null,
      qr_code: qr.encrypt({
        irn: `${document.irn}.${Math.floor(Date.parse(now) / 1000)}`,
        certificate: business.certificate,
      }),
      updated_at: now,
      chain_seq: chain.seq,
      previous_hash: chain.previousHash,
      hash: chain.signature.hash,
      signature: chain.signature.value,
      kid: chain.signature.kid,
    };
  }

  const readDocument = (row: InvoiceTable) => openDocument(row, sealer);

  async function register(principal: Principal, body: unknown, transmitting: boolean) {
    const { document, business, warnings } = await check(principal, body);
    try {
      const registered = await commit.transaction(async (tx) => {
        const head = await businesses.advanceChain(business.id, tx);
        const now = new Date().toISOString();
        const signature = signer.sign({
          irn: document.irn,
          business_id: business.id,
          signed_at: now,
          previous_hash: head.chain_head,
          document: document as Record<string, unknown>,
        });
        const row = toRow(document, business, now, {
          seq: head.chain_length,
          previousHash: head.chain_head,
          signature,
        });
        if (transmitting) row.status = "TRANSMITTING";
        await invoices.insert(row, tx);
        await businesses.setChainHead(business.id, signature.hash, tx);
        await invoices.addEvent(
          row.irn,
          {
            at: now,
            type: "signed",
            actor: actorOf(principal),
            detail: { payment_status: row.payment_status },
          },
          tx,
        );
        await transmission.notify(business.id, "invoice.signed", eventData(row), now, tx);
        let jobId: number | undefined;
        if (transmitting) {
          jobId = await transmission.enqueueDelivery(row.irn, business.id, now, tx);
          await invoices.addEvent(
            row.irn,
            { at: now, type: "transmission_queued", actor: actorOf(principal), detail: {} },
            tx,
          );
        }
        return { row, jobId };
      });
      return { ...registered, document, warnings };
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new DomainError("irn_exists", {
          message: "IRN already exists.",
          details: `IRN '${document.irn}' is already registered`,
        });
      }
      throw err;
    }
  }

  /** Waits (bounded) for the queued delivery; the answer says where the invoice stands. */
  async function awaitDelivery(irn: string, jobId: number): Promise<void> {
    const job = await transmission.deliverNow(jobId, transmitWaitMs);
    const invoice = await invoices.findByIrn(irn);
    if (invoice?.status === "TRANSMITTED") return;
    if (invoice?.status === "TRANSMISSION_FAILED") {
      throw new DomainError("bad_request", {
        message: "Transmission failed",
        details: `the tax authority did not accept the invoice: ${job?.last_error ?? "unknown error"}; correct it or call transmit again to retry`,
      });
    }
    const retryAt = job?.next_attempt_at ? Date.parse(job.next_attempt_at) : Date.now();
    const lastError = job?.last_error ? ` (last attempt: ${job.last_error})` : "";
    throw new DomainError("unavailable", {
      message: "Transmission queued",
      details: `the tax authority has not confirmed the invoice yet${lastError}; it is queued and will be retried automatically: check lookup/${irn}`,
      publicMessage: "The invoice is signed and queued for transmission; it will be retried automatically.",
      retryAfter: Math.max(1, Math.ceil((retryAt - Date.now()) / 1000)),
    });
  }

  function signatureOf(row: InvoiceTable): Signature | null {
    return row.hash && row.signature && row.kid
      ? { alg: "EdDSA", kid: row.kid, hash: row.hash, value: row.signature }
      : null;
  }

  async function load(principal: Principal, irn: string): Promise<InvoiceTable> {
    const row = await invoices.find(irn, principal.businessId);
    if (!row) throw notFound(irn);
    return row;
  }

  return {
    async validate(principal: Principal, body: unknown) {
      const { warnings } = await check(principal, body);
      return { warnings };
    },

    async sign(principal: Principal, body: unknown) {
      const { warnings } = await register(principal, body, false);
      return { warnings };
    },

    async signAndTransmit(principal: Principal, body: unknown) {
      const { row, jobId, warnings } = await register(principal, body, true);
      await awaitDelivery(row.irn, jobId as number);
      return { warnings };
    },

    /** Transmitting an invoice the authority already holds sends nothing again. */
    async transmit(principal: Principal, irn: string) {
      const row = await load(principal, irn);
      if (row.status === "TRANSMITTED") return { alreadyTransmitted: true };
      const at = new Date().toISOString();
      // SIGNED or TRANSMISSION_FAILED: queue a delivery; TRANSMITTING: the open job is reused.
      const jobId = await db.transaction().execute(async (tx) => {
        const id = await transmission.enqueueDelivery(irn, row.business_id, at, tx);
        if (row.status !== "TRANSMITTING") {
          await invoices.setStatus(irn, { status: "TRANSMITTING", updated_at: at }, tx);
          await invoices.addEvent(
            irn,
            { at, type: "transmission_queued", actor: actorOf(principal), detail: {} },
            tx,
          );
        }
        return id;
      });
      await awaitDelivery(irn, jobId);
      return { alreadyTransmitted: false };
    },

    async record(principal: Principal, irn: string) {
      const row = await load(principal, irn);
      const history = await invoices.events(irn);
      return {
        irn: row.irn,
        business_id: row.business_id,
        status: row.status as InvoiceStatus,
        payment_status: row.payment_status as PaymentStatus,
        payment_reference: row.payment_reference,
        invoice_type_code: row.invoice_type_code,
        issue_date: row.issue_date,
        signed_at: row.signed_at,
        transmitted_at: row.transmitted_at,
        authority_reference: row.authority_reference,
        updated_at: row.updated_at,
        qr_code: row.qr_code,
        previous_hash: row.previous_hash,
        document: readDocument(row),
        signature: signatureOf(row),
        history,
      };
    },

    async simple(principal: Principal, irn: string) {
      const row = await load(principal, irn);
      return {
        ...readDocument(row),
        status: row.status as InvoiceStatus,
        payment_status: row.payment_status as PaymentStatus,
      };
    },

    async qrCode(principal: Principal, irn: string): Promise<string> {
      return (await load(principal, irn)).qr_code;
    },

    async lookup(principal: Principal, irn: string) {
      const row = await invoices.findState(irn, principal.businessId);
      if (!row) throw notFound(irn);
      const attempts = (await invoices.events(irn))
        .filter((e) => e.type === "transmission_attempt")
        .map((e) => ({ at: e.at, ...e.detail }));
      return {
        irn: row.irn,
        business_id: row.business_id,
        status: row.status as InvoiceStatus,
        payment_status: row.payment_status as PaymentStatus,
        payment_reference: row.payment_reference,
        signed_at: row.signed_at,
        transmitted_at: row.transmitted_at,
        authority_reference: row.authority_reference,
        attempts,
      };
    },

    /** PENDING → PAID | REJECTED; the current value again is a no-op; PAID and REJECTED are final. */
    async updatePayment(
      principal: Principal,
      irn: string,
      change: { payment_status: PaymentStatus; reference?: string | undefined },
    ) {
      for (;;) {
        const row = await load(principal, irn);
        if (row.payment_status === change.payment_status) return { changed: false };
        if (row.payment_status !== "PENDING") {
          throw new DomainError("bad_request", {
            message: "Failed to update invoice",
            details: `payment_status is ${row.payment_status}, which is final: it cannot change to ${change.payment_status}`,
            violations: [
              {
                path: "payment_status",
                rule: "payment_transition",
                message: `${row.payment_status} is final; only PENDING may change (to PAID or REJECTED)`,
                expected: row.payment_status,
                actual: change.payment_status,
              },
            ],
          });
        }
        const at = new Date().toISOString();
        const reference = change.reference ?? null;
        const won = await db.transaction().execute(async (tx) => {
          const ok = await invoices.setPaymentStatus(
            irn,
            row.payment_status,
            { payment_status: change.payment_status, payment_reference: reference, updated_at: at },
            tx,
          );
          if (ok) {
            await invoices.addEvent(
              irn,
              {
                at,
                type: "payment_updated",
                actor: actorOf(principal),
                detail: { from: row.payment_status, to: change.payment_status, reference },
              },
              tx,
            );
            await transmission.notify(
              row.business_id,
              "invoice.payment_updated",
              {
                ...eventData({ ...row, payment_status: change.payment_status }),
                payment_reference: reference,
              },
              at,
              tx,
            );
          }
          return ok;
        });
        // Lost a race with another update: decide again against the value that won.
        if (won) return { changed: true };
      }
    },

    /** The IRN fits the business's template and is not registered yet. */
    async validateIrn(principal: Principal, input: { irn: string; business_id: string }) {
      const business =
        input.business_id === principal.businessId ? await businesses.findById(input.business_id) : undefined;
      const fail = (reason: string) =>
        new DomainError("irn_invalid", {
          message: "error has occurred",
          details: `IRN validation failed for business ${input.business_id}: ${reason}`,
          publicMessage:
            "IRN validation failed. Check the IRN's format and confirm this is not a duplicate request.",
        });
      if (!business)
        throw fail("the business does not exist or is not the business of these API credentials");
      const problem = irnProblem(input.irn, business.service_id);
      if (problem) throw fail(problem);
      if (await invoices.exists(input.irn)) throw fail(`IRN '${input.irn}' is already registered`);
      return { ok: true as const };
    },
  };
}

export type InvoiceService = ReturnType<typeof invoiceService>;
