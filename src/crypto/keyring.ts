import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Config } from "../config.ts";
import { qrKeyProblem } from "./qr.ts";

export type DataKey = { kid: string; key: Buffer };

/** The service's secret material. */
export type Keyring = {
  /** Pepper of the API-secret HMAC. */
  pepper: Buffer;
  /** The first key encrypts new data; the others still decrypt old rows. */
  dataKeys: DataKey[];
  /** RSA private keys (PEM) of the QR scheme: the first encrypts new codes, all decrypt. */
  qrKeys: string[];
  /** Ed25519 private keys (PEM): the first signs, all are published. */
  signingKeys: string[];
  /** The operator dashboard's sign-in password; none: the dashboard is off. */
  operatorPassword: string | undefined;
};

type StoredSecrets = {
  pepper?: string;
  data_keys?: { kid: string; key: string }[];
  qr_keys?: string[];
  signing_keys?: string[];
  operator_password?: string;
};

const MIN_KEY_BYTES = 32;

/** New secret values, base64: what the sandbox generates and `keys generate` prints for production. */
export const newSecret = {
  pepper: () => randomBytes(32).toString("base64"),
  dataKey: () => randomBytes(32).toString("base64"),
  /** 24 characters drawn from 144 random bits. */
  operatorPassword: () => randomBytes(18).toString("base64url"),
};

/** Every secret a production start needs, new, as the environment variables that carry them. */
export function newProductionSecrets() {
  return {
    EINVOICE_SECRET_PEPPER: newSecret.pepper(),
    EINVOICE_DATA_KEYS: `k1:${newSecret.dataKey()}`,
    EINVOICE_QR_KEYS: Buffer.from(generatePrivateKey("rsa")).toString("base64"),
    EINVOICE_SIGNING_KEYS: Buffer.from(generatePrivateKey("ed25519")).toString("base64"),
    EINVOICE_OPERATOR_PASSWORD: newSecret.operatorPassword(),
  };
}

type KeyConfig = Pick<
  Config,
  "mode" | "dataDir" | "secretPepper" | "dataKeys" | "qrKeys" | "signingKeys" | "operatorPassword"
>;

const pemList = (pems: readonly string[] | undefined) =>
  (pems ?? []).map((pem) => Buffer.from(pem).toString("base64")).join(",");

/**
 * Production reads every key from the environment and never writes one; the sandbox generates what
 * is missing on first use and keeps it beside its database, so the CLI and the server agree.
 */
export function loadKeyring(config: KeyConfig): Keyring {
  if (config.mode === "production") {
    if (!config.secretPepper || !config.dataKeys || !config.qrKeys || !config.signingKeys) {
      throw new Error(
        "production mode needs EINVOICE_SECRET_PEPPER, EINVOICE_DATA_KEYS, EINVOICE_QR_KEYS and EINVOICE_SIGNING_KEYS",
      );
    }
    return {
      ...fromConfig(config.secretPepper, config.dataKeys, config.qrKeys, config.signingKeys),
      operatorPassword: config.operatorPassword,
    };
  }
  const stored = sandboxSecrets(config.dataDir);
  return {
    ...fromConfig(
      config.secretPepper ?? (stored.pepper as string),
      config.dataKeys ?? (stored.data_keys ?? []).map((k) => `${k.kid}:${k.key}`).join(","),
      config.qrKeys ?? pemList(stored.qr_keys),
      config.signingKeys ?? pemList(stored.signing_keys),
    ),
    operatorPassword: config.operatorPassword ?? stored.operator_password,
  };
}

function fromConfig(
  pepper: string,
  dataKeys: string,
  qrKeys: string,
  signingKeys: string,
): Omit<Keyring, "operatorPassword"> {
  return {
    pepper: decodeKey(pepper, "EINVOICE_SECRET_PEPPER"),
    dataKeys: parseDataKeys(dataKeys),
    qrKeys: parsePemKeys(qrKeys, "EINVOICE_QR_KEYS", "RSA"),
    signingKeys: parsePemKeys(signingKeys, "EINVOICE_SIGNING_KEYS", "Ed25519"),
  };
}

function sandboxSecrets(dir: string): StoredSecrets {
  const file = path.join(dir, "secrets.json");
  const stored: StoredSecrets = fs.existsSync(file)
    ? (JSON.parse(fs.readFileSync(file, "utf8")) as StoredSecrets)
    : {};
  let changed = false;
  if (!stored.pepper) {
    stored.pepper = newSecret.pepper();
    changed = true;
  }
  if (!stored.data_keys?.length) {
    stored.data_keys = [{ kid: "k1", key: newSecret.dataKey() }];
    changed = true;
  }
  if (!stored.qr_keys?.length) {
    stored.qr_keys = [generatePrivateKey("rsa")];
    changed = true;
  }
  if (!stored.signing_keys?.length) {
    stored.signing_keys = [generatePrivateKey("ed25519")];
    changed = true;
  }
  if (!stored.operator_password) {
    stored.operator_password = newSecret.operatorPassword();
    changed = true;
  }
  if (changed) writeSecrets(file, stored);
  return stored;
}

function writeSecrets(file: string, stored: StoredSecrets): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  // A rename is atomic: a concurrent reader sees the old file or the new one, never half of one.
  fs.renameSync(tmp, file);
}

/**
 * Sandbox key rotation: a new key goes first (it signs or encrypts from the next start on) and the
 * old ones stay, so what they signed or encrypted still verifies and decrypts.
 */
export function rotateSandboxKey(dataDir: string, kind: "signing" | "qr"): string {
  const file = path.join(dataDir, "secrets.json");
  const stored = sandboxSecrets(dataDir);
  const pem = generatePrivateKey(kind === "qr" ? "rsa" : "ed25519");
  if (kind === "qr") stored.qr_keys = [pem, ...(stored.qr_keys ?? [])];
  else stored.signing_keys = [pem, ...(stored.signing_keys ?? [])];
  writeSecrets(file, stored);
  return pem;
}

/** Sandbox data-key rotation: a new AES-256 key goes first; the old ones stay to read old rows. */
export function rotateSandboxDataKey(dataDir: string): string {
  const file = path.join(dataDir, "secrets.json");
  const stored = sandboxSecrets(dataDir);
  const taken = new Set((stored.data_keys ?? []).map((k) => k.kid));
  let n = taken.size + 1;
  while (taken.has(`k${n}`)) n++;
  const kid = `k${n}`;
  stored.data_keys = [{ kid, key: newSecret.dataKey() }, ...(stored.data_keys ?? [])];
  writeSecrets(file, stored);
  return kid;
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

/** A new private key in PKCS#8 PEM: RSA-2048 for QR codes, Ed25519 for signatures. */
export function generatePrivateKey(kind: "rsa" | "ed25519"): string {
  const { privateKey } =
    kind === "rsa" ? generateKeyPairSync("rsa", { modulusLength: 2048 }) : generateKeyPairSync("ed25519");
  return privateKey.export({ type: "pkcs8", format: "pem" }).toString();
}

/** `base64(PEM)[,base64(PEM)…]`: PEM has newlines, which environment variables carry badly. */
export function parsePemKeys(text: string, name: string, kind: "RSA" | "Ed25519"): string[] {
  const keys = text.split(",").map((entry) => Buffer.from(entry.trim(), "base64").toString("utf8"));
  const expected = kind === "RSA" ? "rsa" : "ed25519";
  for (const pem of keys) {
    let type: string | undefined;
    try {
      type = createPrivateKey(pem).asymmetricKeyType;
    } catch {
      type = undefined;
    }
    if (type !== expected)
      throw new Error(`${name} must be base64 of ${kind} private keys in PEM, comma-separated`);
    // A QR key every code of which fits a QR code and costs a bounded decryption.
    const problem = kind === "RSA" ? qrKeyProblem(createPublicKey(pem)) : null;
    if (problem) throw new Error(`${name}: a key cannot make QR codes: ${problem}`);
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
