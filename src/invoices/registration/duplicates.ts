import { canonicalDocument } from "../../crypto/signer.ts";
import { DomainError } from "../../errors.ts";

/**
 * The canonical form of a document as it is stored, its `business_id` in lower case (a UUID in any
 * letter case names the same business), so a document matches its stored copy whichever case
 * either was sent in.
 */
function storedForm(document: Record<string, unknown>): string {
  const business = document.business_id;
  return canonicalDocument(
    typeof business === "string" ? { ...document, business_id: business.toLowerCase() } : document,
  );
}

/** True when two documents are the same invoice, down to the last field (key order aside). */
export function sameDocument(stored: Record<string, unknown>, submitted: Record<string, unknown>): boolean {
  return storedForm(stored) === storedForm(submitted);
}

/**
 * The spec's answer to a sign of a registered IRN, `IRN already exists.` with `error: []`, whatever
 * is registered under it. When the business's stored invoice is this very document (a retry whose
 * first answer was lost), the error carries when it was signed: the answer says so in a header
 * (`Einvoice-Identical-Document`, set by the error mapper) and a batch result in its details, so
 * the client may count it as signed.
 */
export function irnExists(irn: string, identicalSignedAt?: string): DomainError {
  if (identicalSignedAt === undefined) {
    return new DomainError("irn_exists", {
      message: "IRN already exists.",
      details: `IRN '${irn}' is already registered`,
    });
  }
  return new DomainError("irn_exists", {
    message: "IRN already exists.",
    details: `IRN '${irn}' is already registered with this exact document, signed at ${identicalSignedAt}`,
    identicalSignedAt,
  });
}
