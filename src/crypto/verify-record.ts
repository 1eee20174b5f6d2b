import { isObject, type Jwk } from "./jwk.ts";
import { type Signature, signedPayload, verifySignature } from "./signer.ts";

export type RecordVerdict = {
  valid: boolean;
  irn: string | null;
  kid: string | null;
  hash: string | null;
  reason: string | null;
};

/**
 * Verifies a full record (`GET /api/v1/einvoice/{IRN}`, the envelope or its `data`) with nothing but
 * a JWK Set: the offline check a third party runs, long after the fact.
 */
export function verifyRecord(input: unknown, jwks: unknown): RecordVerdict {
  const record = isObject(input) && isObject(input.data) && "signature" in input.data ? input.data : input;
  const verdict = (reason: string | null, signature?: Partial<Signature>): RecordVerdict => ({
    valid: reason === null,
    irn: isObject(record) && typeof record.irn === "string" ? record.irn : null,
    kid: signature?.kid ?? null,
    hash: signature?.hash ?? null,
    reason,
  });
  if (!isObject(record)) return verdict("the file is not a JSON object");
  if (!isObject(jwks) || !Array.isArray(jwks.keys)) return verdict("the JWK Set has no 'keys' array");
  const { irn, business_id, signed_at, previous_hash, document, signature } = record;
  if (typeof irn !== "string" || typeof business_id !== "string" || typeof signed_at !== "string") {
    return verdict("the record lacks irn, business_id or signed_at");
  }
  if (previous_hash !== null && typeof previous_hash !== "string")
    return verdict("previous_hash must be a string or null");
  if (!isObject(document)) return verdict("the record has no document");
  if (
    !isObject(signature) ||
    typeof signature.hash !== "string" ||
    typeof signature.value !== "string" ||
    typeof signature.kid !== "string"
  ) {
    return verdict("the record has no signature {alg, kid, hash, value}");
  }
  const sig = signature as unknown as Signature;
  const payload = signedPayload({ irn, business_id, signed_at, previous_hash, document });
  return verdict(verifySignature(payload, sig, jwks as { keys: Jwk[] }), sig);
}
