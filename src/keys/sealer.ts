import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { DataKey } from "./keyring.ts";

export type Sealer = {
  /** The key id new values are sealed under. */
  currentKid: string;
  /** Encrypts `value` bound to `context` (e.g. the IRN), so a ciphertext moved to another row fails. */
  seal(value: string, context: string): string;
  open(sealed: string, context: string): string;
};

/** AES-256-GCM with the key id stored beside the ciphertext, so keys can rotate. */
export function createSealer(dataKeys: DataKey[]): Sealer {
  const [current] = dataKeys;
  if (!current) throw new Error("at least one data key is required");
  const byKid = new Map(dataKeys.map((k) => [k.kid, k.key]));
  return {
    currentKid: current.kid,
    seal(value, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", current.key, iv);
      cipher.setAAD(Buffer.from(context, "utf8"));
      const body = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
      return [
        "v1",
        current.kid,
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
      const key = byKid.get(kid);
      if (!key) throw new Error(`data key '${kid}' is not configured`);
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
      decipher.setAAD(Buffer.from(context, "utf8"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString(
        "utf8",
      );
    },
  };
}
