/** An Ed25519 public key as published in the JWK Set: what verifies a signature or a token. */
export type Jwk = { kty: "OKP"; crv: "Ed25519"; x: string; kid: string; alg: "EdDSA"; use: "sig" };

/** True for a JSON object (not null, not an array): what a parsed record or token part must be. */
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
