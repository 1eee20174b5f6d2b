import { createCipheriv, createDecipheriv, randomFillSync } from "node:crypto";
import type { DataKey } from "./keyring.ts";

export type Sealer = {
  /** The first configured key: what values are sealed under when no other key is asked for. */
  currentKid: string;
  /**
   * Encrypts `value` bound to `context` (e.g. the IRN), so a ciphertext moved to another row fails;
   * under `kid` when given (the key a rotation made current), else under the first key.
   */
  seal(value: string, context: string, kid?: string): string;
  open(sealed: string, context: string): string;
  /** Whether `kid` is configured (after reloading the keys once when it is not and they can be). */
  has(kid: string): boolean;
};

/** The key id a sealed value names (`v1.<kid>.…`), read exactly: key ids never contain a dot. */
export function sealedKid(sealed: string): string | undefined {
  const [version, kid] = sealed.split(".", 2);
  return version === "v1" && kid ? kid : undefined;
}

/** The nonces' pool: 341 nonces of 12 bytes, drawn from the CSPRNG at once. */
const NONCE_POOL_BYTES = 4092;
let noncePool = Buffer.alloc(0);
let nonceAt = 0;

/**
 * A fresh 96-bit GCM nonce from the CSPRNG, taken from a pool filled a few kilobytes at a time, as
 * Node keeps randomUUID's bytes: `randomBytes(12)` took 5 µs a call timed apart and 11 µs a sign in
 * the preparation thread's profile (each draw a system call: OpenSSL checks the process id), the
 * pooled draw well under one. Every byte is handed out once, and a refill is a new buffer, so a
 * nonce handed out is never rewritten. A nonce is public (it is stored beside its ciphertext), so
 * the bytes waiting in the pool are no secret. Each thread loading this module has a pool of its own.
 */
export function freshNonce(): Buffer {
  if (nonceAt + 12 > noncePool.length) {
    noncePool = randomFillSync(Buffer.allocUnsafeSlow(NONCE_POOL_BYTES));
    nonceAt = 0;
  }
  nonceAt += 12;
  return noncePool.subarray(nonceAt - 12, nonceAt);
}

/** At most one reload a second, whatever asks for unknown keys. */
const RELOAD_EVERY_MS = 1000;

/**
 * AES-256-GCM with the key id stored beside the ciphertext, so keys can rotate. With `reload`
 * (the sandbox, whose keys live in a file the CLI rotates), a key id it does not know makes it read
 * the keys again, so a running server picks up a rotated key without a restart.
 */
export function createSealer(dataKeys: DataKey[], options: { reload?: () => DataKey[] } = {}): Sealer {
  const [first] = dataKeys;
  if (!first) throw new Error("at least one data key is required");
  let byKid = new Map(dataKeys.map((k) => [k.kid, k.key]));
  let reloadedAt = 0;

  function keyOf(kid: string): Buffer | undefined {
    const known = byKid.get(kid);
    if (known || !options.reload || Date.now() - reloadedAt < RELOAD_EVERY_MS) return known;
    reloadedAt = Date.now();
    // Keys are only ever added while rows may still be under them: the ones known stay.
    byKid = new Map([...byKid, ...options.reload().map((k) => [k.kid, k.key] as const)]);
    return byKid.get(kid);
  }

  return {
    currentKid: first.kid,
    seal(value, context, kid = first.kid) {
      const key = keyOf(kid);
      if (!key) throw new Error(`data key '${kid}' is not configured`);
      const iv = freshNonce();
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(context, "utf8"));
      const body = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
      return [
        "v1",
        kid,
        iv.toString("base64url"),
        cipher.getAuthTag().toString("base64url"),
        body.toString("base64url"),
      ].join(".");
    },
    open(sealed, context) {
      const [version, kid, iv, tag, body] = sealed.split(".");
      if (version !== "v1" || !kid || iv === undefined || tag === undefined || body === undefined) {
        throw new Error("unrecognised sealed value");
      }
      const key = keyOf(kid);
      if (!key) throw new Error(`data key '${kid}' is not configured`);
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
      decipher.setAAD(Buffer.from(context, "utf8"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString(
        "utf8",
      );
    },
    has: (kid) => keyOf(kid) !== undefined,
  };
}
