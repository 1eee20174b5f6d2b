import {
  constants,
  createPrivateKey,
  createPublicKey,
  hkdfSync,
  type KeyObject,
  privateDecrypt,
  publicEncrypt,
} from "node:crypto";

/** What a QR code carries, as integrators of the Nigerian platform already build it. */
export type QrPayload = { irn: string; certificate: string };

/** The service's codes: below, a key too weak for a tax document; above, a code too costly to read. */
export const MIN_QR_KEY_BITS = 2048;
export const MAX_QR_KEY_BITS = 4096;
/**
 * Bytes a QR code holds at its largest (version 40) in byte mode at error correction H, the level
 * every rendering uses (qr-image.ts): base64 has lower-case letters, so it is byte mode.
 */
export const QR_CAPACITY_BYTES = 1273;
/** 65537 is universal; 3 and 17 are seen. A larger exponent only makes each encryption cost more. */
const MAX_PUBLIC_EXPONENT = 2n ** 32n;

/**
 * Why an RSA key cannot make (or read) this service's QR codes, or null when it can. Checked before
 * any RSA work: an 8192-bit key's code does not fit a QR code, and a long public exponent makes a
 * public operation cost as much as a private one.
 */
export function qrKeyProblem(key: KeyObject): string | null {
  if (key.asymmetricKeyType !== "rsa") return "it is not an RSA key";
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  const exponent = key.asymmetricKeyDetails?.publicExponent ?? 0n;
  if (bits < MIN_QR_KEY_BITS)
    return `it is an RSA-${bits} key; at least ${MIN_QR_KEY_BITS} bits are required`;
  if (bits > MAX_QR_KEY_BITS) return `it is an RSA-${bits} key; at most ${MAX_QR_KEY_BITS} bits are accepted`;
  const text = 4 * Math.ceil(Math.ceil(bits / 8) / 3);
  if (text > QR_CAPACITY_BYTES) {
    return `its codes are ${text} base64 characters; a QR code at error correction H holds at most ${QR_CAPACITY_BYTES}`;
  }
  if (exponent > MAX_PUBLIC_EXPONENT || exponent < 3n || exponent % 2n === 0n) {
    return "its public exponent is not an odd number from 3 to 2^32 (65537 is usual)";
  }
  return null;
}

/** The QR text for `payload` under an RSA public key (PKCS#1 v1.5 encryption, then base64). */
export function encryptQr(publicKey: KeyObject | string, payload: QrPayload): string {
  const plain = Buffer.from(JSON.stringify(payload), "utf8");
  const key = typeof publicKey === "string" ? createPublicKey(publicKey) : publicKey;
  const problem = qrKeyProblem(key);
  if (problem) throw new UnusableQrKey(problem);
  // PKCS#1 v1.5 carries at most the key's size less 11 bytes.
  const room = (key.asymmetricKeyDetails?.modulusLength ?? 2048) / 8 - 11;
  if (plain.length > room)
    throw new PayloadTooLarge(
      `the QR payload is ${plain.length} bytes; an RSA key of this size carries at most ${room}`,
    );
  return publicEncrypt({ key, padding: constants.RSA_PKCS1_PADDING }, plain).toString("base64");
}

export class PayloadTooLarge extends Error {}

/** The public key cannot make a QR code; the message says why (qrKeyProblem). */
export class UnusableQrKey extends Error {}

export type QrCodec = ReturnType<typeof qrCodec>;

type DecryptionKey = {
  key: KeyObject;
  bytes: number;
  rejection: Buffer;
  /** A ciphertext below any modulus, decrypted in place of one that is not (see `open`). */
  filler: Buffer;
};

/**
 * QR text = base64(RSA-PKCS#1-v1.5-encrypt(JSON {"irn": "<IRN>.<unix seconds>", "certificate"})).
 * Encryption uses the current key; decryption opens the code with every key, so codes printed before
 * a rotation still read.
 */
export function qrCodec(privateKeysPem: readonly string[]) {
  const keys: DecryptionKey[] = privateKeysPem.map((pem) => {
    const key = createPrivateKey(pem);
    const bytes = (key.asymmetricKeyDetails?.modulusLength ?? 0) / 8;
    return {
      key,
      bytes,
      filler: Buffer.concat([Buffer.alloc(bytes - 1), Buffer.from([2])]),
      // The secret behind this key's implicit rejection (see `open`): derived from the key itself,
      // so every process holding the key rejects a given ciphertext with the same message.
      rejection: Buffer.from(
        hkdfSync(
          "sha256",
          key.export({ type: "pkcs8", format: "der" }),
          Buffer.alloc(0),
          "QR PKCS#1 v1.5 implicit rejection",
          32,
        ),
      ),
    };
  });
  const [current] = keys;
  if (!current) throw new Error("at least one QR key is required");
  const publicKey = createPublicKey(current.key);

  return {
    publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),

    encrypt: (payload: QrPayload) => encryptQr(publicKey, payload),

    /**
     * The payload of a QR text, or null when no key of this service opens it into one.
     *
     * Every key does the same work for every code, whatever its padding says: with an early return,
     * a code whose padding is wrong under the first key would cost a second RSA decryption, and the
     * response time would tell a client whether the padding was right: a Bleichenbacher oracle on
     * the current key. So each key decrypts, each yields a message (the real one, or one derived
     * from the key and the ciphertext when the padding is wrong: "implicit rejection", as OpenSSL
     * 3.2 does), each message is parsed, and only then is one picked.
     */
    open(text: string): QrPayload | null {
      const ciphertext = Buffer.from(text.replace(/\s+/g, ""), "base64");
      let found: QrPayload | null = null;
      for (const key of keys) {
        // The ciphertext's length is the client's own choice and the key sizes are public: a code
        // that fits no key says nothing about any padding.
        if (ciphertext.length !== key.bytes) continue;
        const payload = parsePayload(open(key, ciphertext).toString("utf8"));
        found ??= payload;
      }
      return found;
    },
  };
}

/** The message under one key: the real one when the padding is right, else the key's stand-in. */
function open(key: DecryptionKey, ciphertext: Buffer): Buffer {
  let block: Buffer;
  try {
    block = privateDecrypt({ key: key.key, padding: constants.RSA_NO_PADDING }, ciphertext);
  } catch {
    // Only a ciphertext not below the (public) modulus is refused here, before any exponentiation.
    // It is decrypted all the same, in the form of a filler: otherwise such a code would cost one
    // RSA decryption less under this key, and codes would differ in time by their value.
    privateDecrypt({ key: key.key, padding: constants.RSA_NO_PADDING }, key.filler);
    block = Buffer.alloc(key.bytes);
  }
  const stand = Buffer.from(hkdfSync("sha256", key.rejection, ciphertext, "message", key.bytes));
  // A stand-in as long as a real message could be: 0 to k − 11 bytes.
  const standIn = stand.subarray(2, 2 + (stand.readUInt16BE(0) % (key.bytes - 10)));
  return unpadPkcs1v15(block) ?? standIn;
}

function parsePayload(text: string): QrPayload | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || parsed === null) return null;
  const { irn, certificate } = parsed as Record<string, unknown>;
  return typeof irn === "string" && typeof certificate === "string" ? { irn, certificate } : null;
}

/**
 * Removes PKCS#1 v1.5 encryption padding (`00 02 PS≥8 nonzero 00 M`) without an early exit that
 * depends on the data.
 *
 * Why by hand: Node >= 20 refuses PKCS#1 v1.5 private decryption (CVE-2023-46809, the Marvin timing
 * attack on OpenSSL's padding check; Node 20's OpenSSL 3.0 has no implicit rejection), yet the QR
 * scheme integrators already use needs exactly that. A pure-JS RSA (node-forge) decrypts about 44
 * codes/s on one core here; OpenSSL's raw RSA (`RSA_NO_PADDING`, blinded) does about 3,400/s,
 * leaving only this padding check to JavaScript.
 */
export function unpadPkcs1v15(block: Buffer): Buffer | null {
  let good = Number(block[0] === 0) & Number(block[1] === 2);
  let separator = 0;
  let found = 0;
  for (let i = 2; i < block.length; i++) {
    const isZero = Number((block[i] as number) === 0);
    const first = isZero & (found ^ 1);
    separator |= first * i;
    found |= isZero;
  }
  good &= found & Number(separator >= 10);
  return good === 1 ? block.subarray(separator + 1) : null;
}
