import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Config } from "../config.ts";

export type DataKey = { kid: string; key: Buffer };

/** The service's secret material: the API-secret pepper and the data-encryption keys. */
export type Keyring = {
  pepper: Buffer;
  /** The first key encrypts new data; the others still decrypt old rows. */
  dataKeys: DataKey[];
};

type StoredSecrets = { pepper: string; data_keys: { kid: string; key: string }[] };

const MIN_KEY_BYTES = 32;

/**
 * Production reads the keyring from the environment and never writes one; the sandbox generates
 * one on first use and keeps it beside its database so the CLI and the server agree.
 */
export function loadKeyring(config: Pick<Config, "mode" | "dataDir" | "secretPepper" | "dataKeys">): Keyring {
  if (config.secretPepper && config.dataKeys) {
    return {
      pepper: decodeKey(config.secretPepper, "EINVOICE_SECRET_PEPPER"),
      dataKeys: parseDataKeys(config.dataKeys),
    };
  }
  if (config.mode === "production") {
    throw new Error("production mode needs EINVOICE_SECRET_PEPPER and EINVOICE_DATA_KEYS");
  }
  const file = path.join(config.dataDir, "secrets.json");
  let stored: StoredSecrets;
  if (fs.existsSync(file)) {
    stored = JSON.parse(fs.readFileSync(file, "utf8")) as StoredSecrets;
  } else {
    stored = {
      pepper: randomBytes(32).toString("base64"),
      data_keys: [{ kid: "k1", key: randomBytes(32).toString("base64") }],
    };
    fs.mkdirSync(config.dataDir, { recursive: true });
    try {
      // `wx` makes two processes starting at once agree on whichever file was written first.
      fs.writeFileSync(file, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600, flag: "wx" });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      stored = JSON.parse(fs.readFileSync(file, "utf8")) as StoredSecrets;
    }
  }
  return {
    pepper: decodeKey(config.secretPepper ?? stored.pepper, "pepper"),
    dataKeys: config.dataKeys
      ? parseDataKeys(config.dataKeys)
      : stored.data_keys.map((k) => ({ kid: k.kid, key: decodeKey(k.key, `data key ${k.kid}`) })),
  };
}

export function parseDataKeys(text: string): DataKey[] {
  const keys = text.split(",").map((entry) => {
    const at = entry.indexOf(":");
    if (at <= 0) throw new Error("EINVOICE_DATA_KEYS entries must look like kid:base64key");
    const kid = entry.slice(0, at).trim();
    if (!/^[A-Za-z0-9_-]{1,32}$/.test(kid))
      throw new Error(`data key id '${kid}' must be 1-32 of A-Z a-z 0-9 _ -`);
    return { kid, key: decodeKey(entry.slice(at + 1).trim(), `data key ${kid}`, 32) };
  });
  if (new Set(keys.map((k) => k.kid)).size !== keys.length)
    throw new Error("EINVOICE_DATA_KEYS repeats a key id");
  return keys;
}

function decodeKey(base64: string, name: string, exactBytes?: number): Buffer {
  const key = Buffer.from(base64, "base64");
  if (exactBytes !== undefined ? key.length !== exactBytes : key.length < MIN_KEY_BYTES) {
    throw new Error(`${name} must be base64 of ${exactBytes ?? `at least ${MIN_KEY_BYTES}`} bytes`);
  }
  return key;
}
