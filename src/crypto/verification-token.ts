import { createPublicKey, type KeyObject, sign, verify } from "node:crypto";
import { isObject, type Jwk } from "./jwk.ts";

/*
 * The verification token of an invoice: a JWS in compact form (RFC 7515), EdDSA over Ed25519
 * (RFC 8037), under the `kid` of a key published at /.well-known/jwks.json. Anyone holding the
 * printed invoice checks it offline with any JOSE library and the JWKS. It is made here with
 * node:crypto, not a JOSE library, on purpose: the tests verify it with `jose`, an independent
 * implementation, so a mistake of ours in the format cannot hide behind the same library on both
 * sides. Ed25519 signatures are deterministic: the same invoice and key give the same token.
 */

/** What the token says: short names keep the QR small (error correction M). */
export type VerificationClaims = {
  /** The IRN. */
  irn: string;
  /** The seller's (the signing business's) TIN. */
  tin: string;
  /** Issue date, YYYY-MM-DD. */
  dt: string;
  /** Payable amount, as a decimal text in the document currency. */
  amt: string;
  /** ISO 4217 currency code. */
  cur: string;
  /** `signature.hash` of the invoice's record: the SHA-256 (hex) of exactly what was signed. */
  h: string;
};

const CLAIMS: ReadonlyArray<keyof VerificationClaims> = ["irn", "tin", "dt", "amt", "cur", "h"];

/** The most of a token read: a real one is ~400 characters; anything far longer is not one. */
export const MAX_TOKEN_LENGTH = 2048;

const b64url = (bytes: Buffer | string) => Buffer.from(bytes).toString("base64url");
const B64URL = /^[A-Za-z0-9_-]*$/;

/** The compact JWS of the claims, signed with `privateKey` under `kid`. */
export function issueToken(claims: VerificationClaims, kid: string, privateKey: KeyObject): string {
  const header = b64url(JSON.stringify({ alg: "EdDSA", kid }));
  const payload = b64url(JSON.stringify(Object.fromEntries(CLAIMS.map((name) => [name, claims[name]]))));
  const signingInput = `${header}.${payload}`;
  return `${signingInput}.${b64url(sign(null, Buffer.from(signingInput), privateKey))}`;
}

export type TokenReading =
  | { valid: true; kid: string; claims: VerificationClaims }
  /** `claims`: what a well-formed token says, shown as unverified when its signature does not hold. */
  | {
      valid: false;
      reason: "malformed" | "unknown_key" | "bad_signature";
      detail: string;
      kid?: string;
      claims?: VerificationClaims;
    };

function decodeJson(part: string): unknown {
  if (!B64URL.test(part)) return undefined;
  try {
    return JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
}

function claimsOf(payload: unknown): VerificationClaims | undefined {
  if (!isObject(payload)) return undefined;
  for (const name of CLAIMS) if (typeof payload[name] !== "string") return undefined;
  return Object.fromEntries(CLAIMS.map((name) => [name, payload[name]])) as VerificationClaims;
}

/** The part of a scanned text that is the token: the text itself, or the `t` of a verification URL. */
export function tokenOfText(text: string): string {
  const trimmed = text.trim();
  if (/^https?:\/\//i.test(trimmed)) {
    try {
      return new URL(trimmed).searchParams.get("t") ?? "";
    } catch {
      return trimmed;
    }
  }
  return trimmed;
}

/** Keys already imported, by their `x`: importing one costs more than the check itself. Bounded. */
const imported = new Map<string, KeyObject>();

function publicKeyOf(jwk: Jwk): KeyObject | undefined {
  if (typeof jwk.x !== "string") return undefined;
  const known = imported.get(jwk.x);
  if (known) return known;
  try {
    const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: jwk.x }, format: "jwk" });
    if (imported.size >= 64) imported.clear();
    imported.set(jwk.x, key);
    return key;
  } catch {
    return undefined;
  }
}

/** Reads and checks a token against a JWKS: what it says, and whether its signature holds. */
export function readToken(token: string, jwks: { keys: readonly Jwk[] }): TokenReading {
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) {
    return { valid: false, reason: "malformed", detail: "not a verification token (empty or too long)" };
  }
  const parts = token.split(".");
  if (parts.length !== 3) return { valid: false, reason: "malformed", detail: "a token has three parts" };
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = decodeJson(headerPart);
  const claims = claimsOf(decodeJson(payloadPart));
  if (!isObject(header) || header.alg !== "EdDSA" || typeof header.kid !== "string" || !claims) {
    return {
      valid: false,
      reason: "malformed",
      detail: "the token's header or claims are not those of a verification token",
    };
  }
  const kid = header.kid;
  // A JWK Set from elsewhere (the CLI's --jwks) may hold anything: only Ed25519 keys are looked at.
  const jwk = jwks.keys.find((k) => isObject(k) && k.kid === kid && k.kty === "OKP" && k.crv === "Ed25519");
  const key = jwk && publicKeyOf(jwk);
  if (!key) {
    return {
      valid: false,
      reason: "unknown_key",
      detail: `no published key has kid ${JSON.stringify(kid.slice(0, 64))}`,
      kid,
      claims,
    };
  }
  const signature = B64URL.test(signaturePart) ? Buffer.from(signaturePart, "base64url") : Buffer.alloc(0);
  // The canonical base64url of the signature only: another spelling of the same bytes is a changed token.
  const holds =
    signature.length === 64 &&
    b64url(signature) === signaturePart &&
    verify(null, Buffer.from(`${headerPart}.${payloadPart}`), key, signature);
  if (!holds) {
    return {
      valid: false,
      reason: "bad_signature",
      detail: "the signature does not match the token's content",
      kid,
      claims,
    };
  }
  return { valid: true, kid, claims };
}
