import {
  constants,
  createPrivateKey,
  createPublicKey,
  type KeyObject,
  privateDecrypt,
  publicEncrypt,
} from "node:crypto";

/** What a QR code carries, as integrators of the Nigerian platform already build it. */
export type QrPayload = { irn: string; certificate: string };

/** The QR text for `payload` under an RSA public key (PKCS#1 v1.5 encryption, then base64). */
export function encryptQr(publicKey: KeyObject | string, payload: QrPayload): string {
  const plain = Buffer.from(JSON.stringify(payload), "utf8");
  const key = typeof publicKey === "string" ? createPublicKey(publicKey) : publicKey;
  // PKCS#1 v1.5 carries at most the key's size less 11 bytes.
  const room = (key.asymmetricKeyDetails?.modulusLength ?? 2048) / 8 - 11;
  if (plain.length > room)
    throw new PayloadTooLarge(
      `the QR payload is ${plain.length} bytes; an RSA key of this size carries at most ${room}`,
    );
  return publicEncrypt({ key, padding: constants.RSA_PKCS1_PADDING }, plain).toString("base64");
}

export class PayloadTooLarge extends Error {}

export type QrCodec = ReturnType<typeof qrCodec>;

/**
 * QR text = base64(RSA-PKCS#1-v1.5-encrypt(JSON {"irn": "<IRN>.<unix seconds>", "certificate"})).
 * Encryption uses the current key; decryption tries every key, newest first, so codes printed before
 * a rotation still read.
 */
export function qrCodec(privateKeysPem: readonly string[]) {
  const privateKeys = privateKeysPem.map((pem) => createPrivateKey(pem));
  const [current] = privateKeys;
  if (!current) throw new Error("at least one QR key is required");
  const publicKey = createPublicKey(current);

  return {
    publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),

    encrypt: (payload: QrPayload) => encryptQr(publicKey, payload),

    /** The decrypted text, or null when no key of this service opens it as a PKCS#1 v1.5 message. */
    decrypt(text: string): string | null {
      const bytes = Buffer.from(text.replace(/\s+/g, ""), "base64");
      for (const key of privateKeys) {
        if (bytes.length !== (key.asymmetricKeyDetails?.modulusLength ?? 0) / 8) continue;
        let block: Buffer;
        try {
          block = privateDecrypt({ key, padding: constants.RSA_NO_PADDING }, bytes);
        } catch {
          continue;
        }
        const message = unpadPkcs1v15(block);
        if (message) return message.toString("utf8");
      }
      return null;
    },
  };
}

/**
 * Removes PKCS#1 v1.5 encryption padding (`00 02 PS≥8 nonzero 00 M`) without an early exit that
 * depends on the data.
 *
 * Why by hand: Node >= 20 refuses PKCS#1 v1.5 private decryption (CVE-2023-46809, the Marvin timing
 * attack on OpenSSL's padding check), yet the QR scheme integrators already use needs exactly that.
 * A pure-JS RSA (node-forge) decrypts about 44 codes/s on one core here; OpenSSL's raw RSA
 * (`RSA_NO_PADDING`, blinded) does about 3,400/s, leaving only this padding check to JavaScript. Every
 * failure after it reads the same to a client (see qr-service.ts), so no padding oracle is exposed.
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
