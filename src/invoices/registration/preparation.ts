import { createPublicKey } from "node:crypto";
import type { DataKey } from "../../crypto/keyring.ts";
import { encryptQr } from "../../crypto/qr.ts";
import { createSealer, type Sealer } from "../../crypto/sealer.ts";
import { canonicalDocument } from "../../crypto/signer.ts";
import { storeDocument } from "../../documents/stored.ts";

/** What a sign needs worked out for a document before the chain is locked. */
export type PreparationInput = {
  document: Record<string, unknown>;
  irn: string;
  certificate: string;
  signedAt: string;
};

export type Preparation = {
  /** RFC 8785 form of the document, for the signed payload. */
  canonical: string;
  /** The document as stored: the open part as JSON, the confidential fields sealed. */
  document: string;
  sealed: string | null;
  /** The QR text printed on the invoice: its IRN stamped with the signing second. */
  qrCode: string;
};

/** The keys the preparation uses: the data keys to seal with and the QR public key. */
export type PreparationKeys = { dataKeys: DataKey[]; qrPublicKeyPem: string };

export function preparation(keys: PreparationKeys): (input: PreparationInput) => Preparation {
  const sealer: Pick<Sealer, "seal"> = createSealer(keys.dataKeys);
  const qrKey = createPublicKey(keys.qrPublicKeyPem);
  return ({ document, irn, certificate, signedAt }) => ({
    canonical: canonicalDocument(document),
    ...storeDocument(document, irn, sealer),
    qrCode: encryptQr(qrKey, {
      irn: `${irn}.${Math.floor(Date.parse(signedAt) / 1000)}`,
      certificate,
    }),
  });
}
