import { createPublicKey, type KeyObject } from "node:crypto";
import type { BusinessRepository } from "../businesses/business-repository.ts";
import { parseIrn } from "../crypto/irn.ts";
import { encryptQr, PayloadTooLarge, type QrCodec, UnusableQrKey } from "../crypto/qr.ts";
import { DomainError } from "../errors.ts";
import type { InvoiceRepository } from "../invoices/invoice-repository.ts";
import { busyError, droppedError, JobDropped } from "../threads/fair-queue.ts";
import { ImageRefused, ImageTooLarge, parseImageDataUrl, type QrImage } from "./qr-image-guard.ts";
import { type QrImageReader, QrReaderBusy, type ReadOptions } from "./qr-reader-pool.ts";

function invalid(details: string): DomainError {
  return new DomainError("qr_code_invalid", {
    message: "QR Code validation failed",
    details,
    publicMessage: "The QR code is not a valid code of a registered invoice.",
  });
}

type Images = Pick<QrImageReader, "read"> & Partial<Pick<QrImageReader, "admit">>;

/** The QR text in an image `code`, or null when `code` is not a data URL. */
async function readImage(code: string, images: Images, options: ReadOptions): Promise<string | null> {
  let image: QrImage | null;
  let read: string | null;
  try {
    // A business whose share of the decoder is taken is refused before its image is read.
    if (/^data:/i.test(code)) images.admit?.(options.business);
    image = parseImageDataUrl(code);
    if (!image) return null;
    read = await images.read(image, options);
  } catch (err) {
    if (err instanceof ImageTooLarge) throw invalid(`the image is too large for a QR code (${err.message})`);
    if (err instanceof ImageRefused) throw invalid(err.message);
    if (err instanceof QrReaderBusy) throw busyError("the QR image decoder", err);
    if (err instanceof JobDropped) throw droppedError(err);
    throw err;
  }
  if (read === null) {
    throw invalid(`no QR code was found in the ${image.format === "png" ? "PNG" : "JPEG"} image`);
  }
  return read.trim();
}

function createFailed(details: string): DomainError {
  return new DomainError("qr_code_refused", { message: "QR Code generation failed", details });
}

export function qrService(deps: {
  qr: Pick<QrCodec, "open">;
  businesses: Pick<BusinessRepository, "findByCertificate">;
  invoices: Pick<InvoiceRepository, "find">;
  images: Images;
}) {
  const { qr, businesses, invoices, images } = deps;
  return {
    /** A QR text for an IRN from exported crypto keys, as the original provider's endpoint makes it. */
    create(input: { public_key: string; certificate: string; irn: string }): string {
      const parsed = parseIrn(input.irn);
      if ("error" in parsed) throw createFailed(parsed.error);
      const pem = input.public_key.includes("BEGIN")
        ? input.public_key
        : Buffer.from(input.public_key, "base64").toString("utf8");
      let key: KeyObject;
      try {
        key = createPublicKey(pem);
      } catch {
        throw createFailed(
          "public_key is not a PEM public key (nor base64 of one), as exported in the crypto keys",
        );
      }
      if (key.asymmetricKeyType !== "rsa") throw createFailed("public_key must be an RSA public key");
      try {
        return encryptQr(key, {
          irn: `${input.irn}.${Math.floor(Date.now() / 1000)}`,
          certificate: input.certificate,
        });
      } catch (err) {
        if (err instanceof PayloadTooLarge) throw createFailed(`${err.message}: shorten the certificate`);
        if (err instanceof UnusableQrKey)
          throw createFailed(`public_key cannot make a QR code: ${err.message}`);
        throw err;
      }
    },

    /**
     * Anyone holding an invoice may check its QR code (a buyer verifies its seller's invoice), so the
     * answer is not limited to the caller's business; it reveals only what the code itself carries.
     */
    async validate(code: string, options: ReadOptions = {}) {
      const trimmed = code.trim();
      // An image waits its turn in the business's share of the decoder (`options.business`).
      const text = (await readImage(trimmed, images, options)) ?? trimmed;
      if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) throw invalid("the QR content is not base64 text");
      // One answer for every way the content fails to open, so the endpoint is no padding oracle.
      const payload = qr.open(text);
      if (!payload) {
        throw invalid("the QR content could not be decrypted with this service's QR keys into a QR payload");
      }
      const { irn: stamped, certificate } = payload;
      const match = /^(.+)\.(\d{1,12})$/.exec(stamped);
      if (!match) throw invalid(`the QR's irn '${stamped}' is not of the form <IRN>.<unix seconds>`);
      const [, irn = "", seconds = "0"] = match;
      const parsed = parseIrn(irn);
      if ("error" in parsed) throw invalid(parsed.error);
      const business = await businesses.findByCertificate(certificate);
      if (!business) throw invalid("the QR's certificate does not belong to any registered business");
      if (parsed.serviceId !== business.service_id) {
        throw invalid(`IRN '${irn}' does not carry the service id of the business holding this certificate`);
      }
      const invoice = await invoices.find(irn, business.id);
      if (!invoice) throw invalid(`IRN '${irn}' is not registered for the business holding this certificate`);
      return { irn, business_id: business.id, issued_at: new Date(Number(seconds) * 1000).toISOString() };
    },
  };
}

export type QrService = ReturnType<typeof qrService>;
