import { createPublicKey } from "node:crypto";
import type { DataKey } from "../../crypto/keyring.ts";
import { encryptQr } from "../../crypto/qr.ts";
import { createSealer, type Sealer } from "../../crypto/sealer.ts";
import { canonicalDocument, canonicalMembers, joinMembers } from "../../crypto/signer.ts";
import { storeDocument, storeMembers } from "../../documents/stored.ts";
import { answerOf, catalogKept, type ValidationAnswer } from "../../documents/validation/remote-check.ts";
import type { RuleContext } from "../../documents/validation/rules/types.ts";
import { validateInvoice } from "../../documents/validation/validation.ts";

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

/**
 * A submitted document to check and, when it passes and is to be signed, prepare: the body goes to
 * the thread once for both (one copy instead of two), and its check leaves the event loop too.
 */
export type CheckInput = {
  /** The submitted document, or the JSON text it was parsed from (parsed again on the thread). */
  body: unknown;
  text?: string;
  ctx: Omit<RuleContext, "knownProducts">;
  /** The catalog's codes (null: none), sent to each thread once, and again when the set changes. */
  products?: string[] | null;
  /** To be signed: what its preparation takes besides the checked document. */
  sign?: { certificate: string; signedAt: string };
};

export type CheckAnswer = ValidationAnswer & { prepared?: Preparation };

/** What the preparation thread is given: a document to prepare, or one to check first. */
export type PreparationJob = PreparationInput | { check: CheckInput };

/** The keys the preparation uses: the data keys to seal with and the QR public key. */
export type PreparationKeys = { dataKeys: DataKey[]; qrPublicKeyPem: string };

export function preparation(keys: PreparationKeys): (job: PreparationJob) => Preparation | CheckAnswer {
  const sealer: Pick<Sealer, "seal"> = createSealer(keys.dataKeys);
  const qrKey = createPublicKey(keys.qrPublicKeyPem);
  const prepare = ({ document, irn, certificate, signedAt }: PreparationInput): Preparation => {
    // The signed form and the stored parts from one serialization, where the document allows it.
    const members = canonicalMembers(document);
    const stored = members ? storeMembers(members, irn, sealer) : storeDocument(document, irn, sealer);
    return {
      canonical: members ? joinMembers(members) : canonicalDocument(document),
      document: stored.document,
      sealed: stored.sealed,
      qrCode: encryptQr(qrKey, {
        irn: `${irn}.${Math.floor(Date.parse(signedAt) / 1000)}`,
        certificate,
      }),
    };
  };
  const catalog = catalogKept();
  return (job) => {
    if (!("check" in job)) return prepare(job);
    const { ctx, sign, text } = job.check;
    const body: unknown = text === undefined ? job.check.body : JSON.parse(text);
    const knownProducts = catalog(job.check.products);
    const result = validateInvoice(body, {
      business: ctx.business,
      strictSupplier: ctx.strictSupplier,
      knownProducts,
    });
    const answer: CheckAnswer = answerOf(body, result);
    if (sign && result.errors.length === 0) {
      const document = result.document as Record<string, unknown>;
      const { certificate, signedAt } = sign;
      answer.prepared = prepare({ document, irn: String(document.irn), certificate, signedAt });
    }
    return answer;
  };
}
