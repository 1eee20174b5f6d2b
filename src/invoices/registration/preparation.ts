import { createPublicKey } from "node:crypto";
import { canonicalBusinessId } from "../../businesses/ids.ts";
import type { DataKey } from "../../crypto/keyring.ts";
import { encryptQr } from "../../crypto/qr.ts";
import { createSealer, type Sealer } from "../../crypto/sealer.ts";
import { canonicalDocument, canonicalMembers, joinMembers, type KnownMembers } from "../../crypto/signer.ts";
import type { InvoiceDocument } from "../../documents/schema.ts";
import { storeDocument, storeMembers } from "../../documents/stored.ts";
import { answerOf, catalogKept, type ValidationAnswer } from "../../documents/validation/remote-check.ts";
import type { RuleContext } from "../../documents/validation/rules/types.ts";
import { isObject } from "../../documents/validation/rules/types.ts";
import { isLargeDocument, validateInvoice } from "../../documents/validation/validation.ts";
import { fingerprintOfCanonical, fingerprintWhole } from "../../idempotency/fingerprint.ts";
import { type DocumentFacts, documentFacts } from "./facts.ts";

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
  sign?: { certificate: string; signedAt: string } | undefined;
  /**
   * With a text the event loop did not parse (JsonText): the caller's business id. `ctx.business`
   * is then the caller's business, which the document is checked for only when it claims it
   * (`business_id`, in any letter case); the answer says what it claimed.
   */
  owner?: string | undefined;
  /**
   * With a text: the body's Idempotency-Key fingerprint (fingerprint.ts) is wanted, worked out
   * from the value parsed here, before the check, which may change it.
   */
  fingerprint?: boolean | undefined;
};

export type CheckAnswer = ValidationAnswer & {
  /** With `fingerprint`, of a text read here. */
  fingerprint?: string;
  prepared?: Preparation;
  /** With `owner`: the document's `business_id` when it is a string. */
  claimed?: string;
  /** With `owner`, prepared: what the sign's row takes from the checked document. */
  facts?: DocumentFacts;
  /**
   * With `owner`: the text was not checked here, for the event loop to parse it and check it as
   * it checks any body (it is not JSON, or it is a large document, see isLargeDocument).
   */
  unread?: true;
};

/** What the preparation thread is given: a document to prepare, or one to check first. */
export type PreparationJob = PreparationInput | { check: CheckInput };

/** The keys the preparation uses: the data keys to seal with and the QR public key. */
export type PreparationKeys = { dataKeys: DataKey[]; qrPublicKeyPem: string };

const UNREAD = Symbol("unread");
const UNREAD_ANSWER: CheckAnswer = {
  errors: [],
  errorsBeyond: 0,
  warnings: [],
  warningsBeyond: 0,
  patch: {},
  removed: [],
  unread: true,
};

/**
 * A body's text parsed here. A text the event loop left unparsed (`owner` given) that is not JSON,
 * or holds a large document, is sent back unread: the loop then reads it as any body, with the
 * body parser's own answer for one that does not parse and the validation pool for a large one.
 */
function readText(text: string, owner: string | undefined): unknown {
  if (owner === undefined) return JSON.parse(text);
  try {
    const body: unknown = JSON.parse(text);
    return isLargeDocument(body) ? UNREAD : body;
  } catch {
    return UNREAD;
  }
}

export function preparation(keys: PreparationKeys): (job: PreparationJob) => Preparation | CheckAnswer {
  const sealer: Pick<Sealer, "seal"> = createSealer(keys.dataKeys);
  const qrKey = createPublicKey(keys.qrPublicKeyPem);
  const prepare = (
    { document, irn, certificate, signedAt }: PreparationInput,
    known?: KnownMembers,
  ): Preparation => {
    // The signed form and the stored parts from one serialization, where the document allows it.
    const members = canonicalMembers(document, known);
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
    const { ctx, sign, text, owner } = job.check;
    const knownProducts = catalog(job.check.products);
    const body = text === undefined ? job.check.body : readText(text, owner);
    if (body === UNREAD) return UNREAD_ANSWER;
    // A keyed sign's body is canonicalized once: its members make its fingerprint, and the signed
    // form of its checked document reuses those the check left as they were (KnownMembers).
    const fingerprinted = text !== undefined && job.check.fingerprint;
    const members = fingerprinted && isObject(body) ? canonicalMembers(body) : undefined;
    const known = members && { of: body as Record<string, unknown>, members };
    const print = members
      ? fingerprintOfCanonical(joinMembers(members))
      : fingerprinted
        ? fingerprintWhole(body)
        : undefined;
    let { business } = ctx;
    let claimed: string | undefined;
    if (owner !== undefined) {
      const id = isObject(body) ? body.business_id : undefined;
      claimed = typeof id === "string" ? id : undefined;
      if (claimed === undefined || canonicalBusinessId(claimed) !== owner) business = undefined;
    }
    const result = validateInvoice(body, { business, strictSupplier: ctx.strictSupplier, knownProducts });
    const answer: CheckAnswer = answerOf(body, result);
    if (claimed !== undefined) answer.claimed = claimed;
    if (print !== undefined) answer.fingerprint = print;
    // Only the business the document claims, and its caller's, signs it (register.ts, accepted).
    if (sign && result.errors.length === 0 && business !== undefined) {
      const document = result.document as InvoiceDocument;
      const { certificate, signedAt } = sign;
      answer.prepared = prepare({ document, irn: String(document.irn), certificate, signedAt }, known);
      if (owner !== undefined) answer.facts = documentFacts(document);
    }
    return answer;
  };
}
