import { parentPort } from "node:worker_threads";
import QRCode from "qrcode";
import { decodeQrImage } from "./qr-image-decoder.ts";
import { ImageRefused, parseImageDataUrl, type QrImage } from "./qr-image-guard.ts";

// Ready once the WebAssembly is instantiated and has read a code of the service's own shape (344
// base64 characters, error correction H, 320 px): compiling the decoder's functions on first use
// takes ten times a decode, and no image's time limit should pay for that.
const WARM_UP = "QR+/".repeat(86);
const warmUp = parseImageDataUrl(await QRCode.toDataURL(WARM_UP, { errorCorrectionLevel: "H", width: 320 }));
if (!warmUp || (await decodeQrImage(warmUp)) !== WARM_UP) throw new Error("the QR decoder does not read");

parentPort?.on("message", async ({ id, image }: { id: number; image: QrImage }) => {
  // The time limit starts now: a thread just started may take a while to take its first message.
  parentPort?.postMessage({ started: id });
  try {
    const text = await decodeQrImage(image);
    // WebAssembly memory counts as the isolate's external memory.
    parentPort?.postMessage({ id, text, memory: process.memoryUsage().external });
  } catch (err) {
    if (err instanceof ImageRefused) parentPort?.postMessage({ id, refused: err.message });
    else parentPort?.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
parentPort?.postMessage({ ready: true });
