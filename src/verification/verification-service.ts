import type { BusinessRepository } from "../businesses/business-repository.ts";
import type { Signer } from "../crypto/signer.ts";
import {
  MAX_TOKEN_LENGTH,
  readToken,
  type TokenReading,
  tokenOfText,
  type VerificationClaims,
} from "../crypto/verification-token.ts";
import type { InvoiceTable } from "../db/schema.ts";
import { formatMinor } from "../documents/money.ts";
import { currencyOf } from "../documents/stored.ts";
import type { InvoiceRepository } from "../invoices/invoice-repository.ts";

/** What a verification page may show of an invoice besides its token: its state in this register. */
export type RegisterState = { status: InvoiceTable["status"] };

export type Verification = TokenReading & {
  /** Present when the token is valid, its IRN is in this register and its hash is the record's. */
  register?: RegisterState;
};

/**
 * The buyer's side of an invoice: a token, signed with the service's Ed25519 key, that anyone can
 * verify offline against the published JWKS (crypto/verification-token.ts). The QR holds the token,
 * or `{EINVOICE_PUBLIC_URL}/verify?t={token}` when the service has a public address, so a phone's
 * camera opens the verification page.
 */
export function verificationService(deps: {
  signer: Pick<Signer, "verificationToken" | "jwks">;
  businesses: Pick<BusinessRepository, "findById">;
  invoices: Pick<InvoiceRepository, "findByIrn">;
  publicUrl: string | undefined;
}) {
  // Without a trailing slash already: config.ts takes it off.
  const { signer, businesses, invoices, publicUrl: base } = deps;

  async function claimsOf(row: InvoiceTable): Promise<VerificationClaims> {
    const business = await businesses.findById(row.business_id);
    return {
      irn: row.irn,
      tin: business?.tin ?? row.supplier_tin ?? "",
      dt: row.issue_date,
      amt: formatMinor(row.payable_minor, row.currency_digits),
      cur: currencyOf(row) ?? "",
      h: row.hash ?? "",
    };
  }

  return {
    /** The text of the verification QR: the page's URL with the token, or the bare token. */
    async qrText(row: InvoiceTable): Promise<string> {
      const token = signer.verificationToken(await claimsOf(row), row.kid);
      return base ? `${base}/verify?t=${token}` : token;
    },

    /**
     * What a scanned text (a token, or a verification URL) says and whether its signature holds,
     * with the invoice's state here when the token is valid and names an invoice of this register.
     */
    async verify(text: string): Promise<Verification> {
      const token = tokenOfText(text.slice(0, MAX_TOKEN_LENGTH * 4));
      const reading = readToken(token, signer.jwks());
      if (!reading.valid) return reading;
      const row = await invoices.findByIrn(reading.claims.irn);
      if (!row || row.hash !== reading.claims.h) return reading;
      return { ...reading, register: { status: row.status } };
    },
  };
}

export type VerificationService = ReturnType<typeof verificationService>;
