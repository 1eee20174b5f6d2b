import QRCode from "qrcode";
import type { ThreadMain } from "../threads/worker-pool.ts";
import { decodeQrImage } from "./qr-image-decoder.ts";
import { ImageRefused, parseImageDataUrl, type QrImage } from "./qr-image-guard.ts";

/** A decoded image's text and the decoder's memory after it; or why the image was refused. */
export type QrReply = { text: string | null; memory: number } | { refused: string };

// Ready once the WebAssembly is instantiated and has read a code of the service's own shape (344
// base64 characters, error correction H, 320 px): compiling the decoder's functions on first use
// takes ten times a decode, and no image's time limit should pay for that.
const WARM_UP = "QR+/".repeat(86);

/** The decoding thread's module (see qr-reader-pool.ts). */
export default (async () => {
  const warmUp = parseImageDataUrl(
    await QRCode.toDataURL(WARM_UP, { errorCorrectionLevel: "H", width: 320 }),
  );
  if (!warmUp || (await decodeQrImage(warmUp)) !== WARM_UP) throw new Error("the QR decoder does not read");
  return async (image: QrImage): Promise<QrReply> => {
    try {
      const text = await decodeQrImage(image);
      // WebAssembly memory counts as the isolate's external memory.
      return { text, memory: process.memoryUsage().external };
    } catch (err) {
      // Any other error is the decoder's own: it throws, and the thread is replaced (see the pool).
      if (err instanceof ImageRefused) return { refused: err.message };
      throw err;
    }
  };
}) satisfies ThreadMain;
