import { constants, createPrivateKey, createPublicKey, type KeyObject, publicEncrypt } from "node:crypto";
import jsQRModule from "jsqr";
import forge from "node-forge";
import { PNG } from "pngjs";

/** What a QR code carries, as integrators of the Nigerian platform already build it. */
export type QrPayload = { irn: string; certificate: string };

/** The QR text for `payload` under an RSA public key (PKCS#1 v1.5 encryption, then base64). */
export function encryptQr(publicKey: KeyObject | string, payload: QrPayload): string {
  const plain = Buffer.from(JSON.stringify(payload), "utf8");
  return publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_PADDING }, plain).toString("base64");
}

export type QrCodec = ReturnType<typeof qrCodec>;

/**
 * QR text = base64(RSA-PKCS#1-v1.5-encrypt(JSON {"irn": "<IRN>.<unix seconds>", "certificate"})).
 * Encryption uses the current key; decryption tries every key, newest first, so codes printed before
 * a rotation still read.
 */
export function qrCodec(privateKeysPem: readonly string[]) {
  const [currentPem] = privateKeysPem;
  if (!currentPem) throw new Error("at least one QR key is required");
  const publicKey = createPublicKey(createPrivateKey(currentPem));
  // Node >= 20 refuses PKCS#1 v1.5 *private decryption* (CVE-2023-46809, a timing oracle in OpenSSL's
  // implementation); the QR scheme needs exactly that, so it alone is done by node-forge.
  const decryptors = privateKeysPem.map((pem) => forge.pki.privateKeyFromPem(pem));

  return {
    publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),

    encrypt(payload: QrPayload): string {
      const plain = Buffer.from(JSON.stringify(payload), "utf8");
      return publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_PADDING }, plain).toString(
        "base64",
      );
    },

    /** The decrypted JSON text, or null when no key of this service opens it. */
    decrypt(text: string): string | null {
      const bytes = forge.util.decode64(text.replace(/\s+/g, ""));
      for (const key of decryptors) {
        if (bytes.length !== key.n.bitLength() / 8) continue;
        try {
          return forge.util.decodeUtf8(key.decrypt(bytes, "RSAES-PKCS1-V1_5"));
        } catch {
          // Not this key: try an older one.
        }
      }
      return null;
    },
  };
}

const PNG_DATA_URL = /^data:image\/png;base64,/i;

export function isPngDataUrl(code: string): boolean {
  return PNG_DATA_URL.test(code);
}

/** Reads the text of a QR code from a PNG data URL; null when the image holds no readable code. */
export function readQrImage(dataUrl: string): string | null {
  const png = PNG.sync.read(Buffer.from(dataUrl.replace(PNG_DATA_URL, ""), "base64"));
  // jsqr is CommonJS whose types declare an ES default export; `.default` is right for both.
  const found = jsQRModule.default(
    new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length),
    png.width,
    png.height,
  );
  return found?.data ?? null;
}
