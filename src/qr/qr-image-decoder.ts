import fs from "node:fs";
import { createRequire } from "node:module";
import zlib from "node:zlib";
import { prepareZXingModule, type ReaderOptions, readBarcodes } from "zxing-wasm/reader";
import {
  ImageRefused,
  MAX_PNG_METADATA_BYTES,
  parseImageDataUrl,
  pngCompressedMetadata,
  pngImageData,
  type QrImage,
} from "./qr-image-guard.ts";

/** The image was accepted by the guard but the decoder could not read it as an image. */
export class ImageUnreadable extends ImageRefused {}

const READER: ReaderOptions = {
  formats: ["QRCode"],
  // A photographed or scanned receipt: accuracy over speed, codes turned, inverted or small.
  tryHarder: true,
  tryRotate: true,
  tryInvert: true,
  tryDownscale: true,
  maxNumberOfSymbols: 1,
};

let prepared: Promise<unknown> | undefined;

/**
 * ZXing-C++ compiled to WebAssembly, instantiated from the installed package's own `.wasm`: left to
 * itself, zxing-wasm fetches the binary from a CDN, which production hosts cannot reach.
 */
function zxing(): Promise<unknown> {
  prepared ??= (async () => {
    const file = createRequire(import.meta.url).resolve("zxing-wasm/reader/zxing_reader.wasm");
    const binary = await fs.promises.readFile(file);
    const wasmBinary = binary.buffer.slice(binary.byteOffset, binary.byteOffset + binary.byteLength);
    return prepareZXingModule({ overrides: { wasmBinary }, fireImmediately: true });
  })();
  return prepared;
}

/** Instantiates the decoder now: before anything calls zxing-wasm's own functions directly. */
export async function loadQrDecoder(): Promise<void> {
  await zxing();
}

/**
 * The text of the QR code in an image the guard accepted; null when it holds no readable code.
 * Runs ZXing on the calling thread: the service calls it on its decoding thread (qr-reader-pool.ts).
 */
export async function decodeQrImage(image: QrImage): Promise<string | null> {
  if (image.format === "png") checkPngMetadata(image.bytes);
  if (image.format === "png" && image.inflatedSize !== undefined) {
    // The header bounds the pixels, not the compressed stream: a deflate bomb under a small IHDR
    // would still inflate to whatever it holds, so it is inflated here first, capped at what the
    // header implies.
    try {
      zlib.inflateSync(pngImageData(image.bytes), { maxOutputLength: image.inflatedSize });
    } catch (err) {
      throw new ImageUnreadable(
        (err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE"
          ? "the image is not a readable PNG: its image data inflates beyond the size its IHDR declares"
          : "the image is not a readable PNG: its image data is not a valid zlib stream",
      );
    }
  }
  await zxing();
  const results = await readBarcodes(image.bytes, READER);
  const found = results.find((r) => r.isValid && r.text !== "");
  if (found) return found.text;
  if (results.some((r) => r.error.startsWith("Failed to load image"))) {
    throw new ImageUnreadable(
      `the image is not a readable ${image.format === "png" ? "PNG" : "JPEG"}: the decoder could not load it`,
    );
  }
  return null;
}

/**
 * Inflates the compressed metadata, all of it together capped at MAX_PNG_METADATA_BYTES: the cost of
 * the check is bounded by the cap, however many chunks there are. A stream that is not valid zlib is
 * left alone, as the decoder leaves it.
 */
function checkPngMetadata(bytes: Uint8Array): void {
  let room = MAX_PNG_METADATA_BYTES;
  for (const { type, stream } of pngCompressedMetadata(bytes)) {
    try {
      room -= zlib.inflateSync(stream, { maxOutputLength: Math.max(room, 1) }).length;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ERR_BUFFER_TOO_LARGE") continue;
      room = -1;
    }
    if (room < 0) {
      throw new ImageUnreadable(
        `the image is not a readable PNG: its compressed metadata (${type} and the like) inflates beyond ${MAX_PNG_METADATA_BYTES / 1024 / 1024} MiB`,
      );
    }
  }
}

/**
 * The text of the QR code in a PNG or JPEG data URL, decoded on the calling thread; null when the
 * image holds no readable code. Throws ImageRefused for what the service answers with a 400.
 */
export async function readQrImage(dataUrl: string): Promise<string | null> {
  const image = parseImageDataUrl(dataUrl.trim());
  if (!image) throw new ImageRefused(`not a data URL`);
  return decodeQrImage(image);
}
