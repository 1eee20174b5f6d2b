import { generateKeyPairSync, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Config } from "../config.ts";

export type DataKey = { kid: string; key: Buffer };

/** The service's secret material. */
export type Keyring = {
  /** Pepper of the API-secret HMAC. */
  pepper: Buffer;
  /** The first key encrypts new data; the others still decrypt old rows. */
  dataKeys: DataKey[];
  /** RSA private keys (PEM) of the QR scheme: the first encrypts new codes, all decrypt. */
  qrKeys: string[];
};

type StoredSecrets = { pepper?: string; data_keys?: { kid: string; key: string }[]; qr_keys?: string[] };

const MIN_KEY_BYTES = 32;

type KeyConfig = Pick<Config, "mode" | "dataDir" | "secretPepper" | "dataKeys" | "qrKeys">;

/**
 * Production reads every key from the environment and never writes one; the sandbox generates what
 * is missing on first use and keeps it beside its database, so the CLI and the server agree.
 */
export function loadKeyring(config: KeyConfig): Keyring {
  if (config.mode === "production") {
    if (!config.secretPepper || !config.dataKeys || !config.qrKeys) {
      throw new Error(
        "production mode needs EINVOICE_SECRET_PEPPER, EINVOICE_DATA_KEYS and EINVOICE_QR_KEYS",
      );
    }
    return fromConfig(config.secretPepper, config.dataKeys, config.qrKeys);
  }
  const stored = sandboxSecrets(config.dataDir);
  return fromConfig(
    config.secretPepper ?? (stored.pepper as string),
    config.dataKeys ?? (stored.data_keys ?? []).map((k) => `${k.kid}:${k.key}`).join(","),
    config.qrKeys ?? (stored.qr_keys ?? []).map((pem) => Buffer.from(pem).toString("base64")).join(","),
  );
}

function fromConfig(pepper: string, dataKeys: string, qrKeys: string): Keyring {
  return {
    pepper: decodeKey(pepper, "EINVOICE_SECRET_PEPPER"),
    dataKeys: parseDataKeys(dataKeys),
    qrKeys: parseQrKeys(qrKeys),
  };
}

function sandboxSecrets(dir: string): StoredSecrets {
  const file = path.join(dir, "secrets.json");
  const stored: StoredSecrets = fs.existsSync(file)
    ? (JSON.parse(fs.readFileSync(file, "utf8")) as StoredSecrets)
    : {};
  let changed = false;
  if (!stored.pepper) {
    stored.pepper = randomBytes(32).toString("base64");
    changed = true;
  }
  if (!stored.data_keys?.length) {
    stored.data_keys = [{ kid: "k1", key: randomBytes(32).toString("base64") }];
    changed = true;
  }
  if (!stored.qr_keys?.length) {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    stored.qr_keys = [privateKey.export({ type: "pkcs8", format: "pem" }).toString()];
    changed = true;
  }
  if (changed) {
    fs.mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
    // A rename is atomic: a concurrent reader sees the old file or the new one, never half of one.
    fs.renameSync(tmp, file);
  }
  return stored;
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

/** `base64(PEM)[,base64(PEM)…]`: PEM has newlines, which environment variables carry badly. */
export function parseQrKeys(text: string): string[] {
  const keys = text.split(",").map((entry) => Buffer.from(entry.trim(), "base64").toString("utf8"));
  if (keys.length === 0 || keys.some((pem) => !pem.includes("PRIVATE KEY"))) {
    throw new Error("EINVOICE_QR_KEYS must be base64 of RSA private keys in PEM, comma-separated");
  }
  return keys;
}

function decodeKey(base64: string, name: string, exactBytes?: number): Buffer {
  const key = Buffer.from(base64, "base64");
  if (exactBytes !== undefined ? key.length !== exactBytes : key.length < MIN_KEY_BYTES) {
    throw new Error(`${name} must be base64 of ${exactBytes ?? `at least ${MIN_KEY_BYTES}`} bytes`);
  }
  return key;
}
