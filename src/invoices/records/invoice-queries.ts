import type { Principal } from "../../businesses/business-service.ts";
import type { Sealer } from "../../crypto/sealer.ts";
import type { Signature } from "../../crypto/signer.ts";
import type { InvoiceTable } from "../../db/schema.ts";
import type { InvoicePdfInput } from "../../documents/pdf/render.ts";
import { openDocument } from "../../documents/stored.ts";
import { DomainError } from "../../errors.ts";
import type { InvoiceRepository, InvoiceState } from "../invoice-repository.ts";
import { amountsOf } from "../payments/payment-decision.ts";

/** The same answer whether the IRN is unknown or belongs to another business: nothing leaks. */
export function notFound(irn: string, scope = " for this business"): DomainError {
  return new DomainError("invoice_not_found", {
    message: "Invoice not found",
    details: `no invoice with IRN '${irn}' is registered${scope}`,
  });
}

/** An invoice of the caller's business, or of any business for the operator, who acts for the service. */
export function invoiceLoader(invoices: Pick<InvoiceRepository, "find" | "findByIrn">) {
  return {
    async load(principal: Principal, irn: string): Promise<InvoiceTable> {
      const row = await invoices.find(irn, principal.businessId);
      if (!row) throw notFound(irn);
      return row;
    },
    async loadAny(irn: string): Promise<InvoiceTable> {
      const row = await invoices.findByIrn(irn);
      if (!row) throw notFound(irn, "");
      return row;
    },
  };
}

/** What the lookup and the full record both say of an invoice's state. */
function stateOf(row: InvoiceState) {
  return {
    irn: row.irn,
    business_id: row.business_id,
    status: row.status,
    payment_status: row.payment_status,
    payment_reference: row.payment_reference,
    ...amountsOf(row),
    signed_at: row.signed_at,
    transmitted_at: row.transmitted_at,
    authority_reference: row.authority_reference,
  };
}

/**
 * Where an invoice not yet delivered stands at the authority, as its last attempt found it:
 * REGISTERED (the authority signed it; its transmission is retried), AWAITING_BUYER (the buyer has
 * not enabled receiving), AWAITING_OPERATOR (the authority refused this service's credentials or
 * address); null when nothing more than the status is known. `authority_error`: the authority's
 * own words about the last refusal, verbatim.
 */
function atAuthority(status: InvoiceState["status"], last: Record<string, unknown> | undefined) {
  if (status === "TRANSMITTED" || status === "SIGNED" || !last)
    return { authority_state: null, authority_error: null };
  const state =
    last.hold === "configuration"
      ? "AWAITING_OPERATOR"
      : typeof last.authority_state === "string"
        ? last.authority_state
        : null;
  const error =
    typeof last.authority_error === "object" && last.authority_error !== null ? last.authority_error : null;
  return { authority_state: state, authority_error: error as Record<string, unknown> | null };
}

/**
 * What of an invoice's state its PDF may show besides the signed document, which never changes (its
 * status, its payment status and amount paid): a rendered PDF is reused while this is unchanged.
 */
export function printedRevision(
  row: Pick<InvoiceState, "status" | "payment_status" | "paid_minor" | "payment_reference">,
): string {
  return JSON.stringify([row.status, row.payment_status, Number(row.paid_minor), row.payment_reference]);
}

/** What is read of invoices: the full record, the simple one, the QR code and the lookup. */
export function invoiceQueries(deps: {
  invoices: Pick<InvoiceRepository, "find" | "findByIrn" | "findState" | "events">;
  sealer: Pick<Sealer, "open">;
  /** The verification QR's text of an invoice (verification/verification-service.ts builds it). */
  verification: { qrText(row: InvoiceTable): Promise<string> };
}) {
  const { invoices, sealer, verification } = deps;
  const { load, loadAny } = invoiceLoader(invoices);
  const readDocument = (row: InvoiceTable) => openDocument(row, sealer);

  function signatureOf(row: InvoiceTable): Signature | null {
    return row.hash && row.signature && row.kid
      ? { alg: "EdDSA", kid: row.kid, hash: row.hash, value: row.signature }
      : null;
  }

  async function printableOf(row: InvoiceTable): Promise<{ input: InvoicePdfInput; revision: string }> {
    const input: InvoicePdfInput = {
      irn: row.irn,
      status: row.status,
      document: readDocument(row),
      qrText: row.qr_code,
      verificationText: await verification.qrText(row),
      signature: row.kid && row.hash ? { kid: row.kid, hash: row.hash } : null,
      signedAt: row.signed_at,
    };
    return { input, revision: printedRevision(row) };
  }

  /** An invoice's full record: its state, the document as signed, the signature and the history. */
  async function recordOf(row: InvoiceTable) {
    const history = await invoices.events(row.irn);
    return {
      ...stateOf(row),
      invoice_type_code: row.invoice_type_code,
      issue_date: row.issue_date,
      updated_at: row.updated_at,
      qr_code: row.qr_code,
      verification_qr: await verification.qrText(row),
      previous_hash: row.previous_hash,
      document: readDocument(row),
      signature: signatureOf(row),
      history,
    };
  }

  return {
    async record(principal: Principal, irn: string) {
      return recordOf(await load(principal, irn));
    },

    /** Any business's invoice, for the operator, who acts for the service. */
    async operatorRecord(irn: string) {
      return recordOf(await loadAny(irn));
    },

    async simple(principal: Principal, irn: string) {
      const row = await load(principal, irn);
      return {
        ...readDocument(row),
        status: row.status,
        payment_status: row.payment_status,
      };
    },

    async qrCode(principal: Principal, irn: string): Promise<string> {
      return (await load(principal, irn)).qr_code;
    },

    /** The text of the invoice's verification QR (see verification.ts). */
    async verificationQr(principal: Principal, irn: string): Promise<string> {
      return verification.qrText(await load(principal, irn));
    },

    /**
     * What the buyer's PDF shows: the document as signed, its state, both QR texts, the signature;
     * with the row's `printedRevision`.
     */
    async printable(principal: Principal, irn: string) {
      return printableOf(await load(principal, irn));
    },

    /** The invoice's `printedRevision`, from its state alone (the index that answers lookups). */
    async printedRevision(principal: Principal, irn: string): Promise<string> {
      const row = await invoices.findState(irn, principal.businessId);
      if (!row) throw notFound(irn);
      return printedRevision(row);
    },

    /** Any business's printable invoice, for the operator (the CLI), who acts for the service. */
    async operatorPrintable(irn: string) {
      return printableOf(await loadAny(irn));
    },

    async lookup(principal: Principal, irn: string) {
      const row = await invoices.findState(irn, principal.businessId);
      if (!row) throw notFound(irn);
      const attempts = (await invoices.events(irn))
        .filter((e) => e.type === "transmission_attempt")
        .map((e) => ({ at: e.at, ...e.detail }));
      return { ...stateOf(row), ...atAuthority(row.status, attempts.at(-1)), attempts };
    },
  };
}

export type InvoiceQueries = ReturnType<typeof invoiceQueries>;
