/**
 * What an image of a QR code must be before anything decodes it: a PNG or JPEG data URL whose every
 * header has been read and found within bounds. A few kilobytes of either format can declare
 * gigapixels, and a decoder allocates what the headers say, so the headers are walked here, whole,
 * on bytes that nothing else has touched yet. zxing-wasm has no size option of its own: readBarcodes
 * hands the encoded bytes to stb_image inside its WebAssembly, which takes up to 2^24 pixels a side
 * and lets its memory grow to 2 GB, so these headers are the only bound there is.
 */

/** A QR code needs no more: 2,000 × 2,000 pixels is 50 modules a side at 40 pixels each. */
export const MAX_QR_PIXELS = 4_000_000;
/** Progressive JPEGs use about ten scans; thousands would each walk the whole image again. */
const MAX_JPEG_SCANS = 100;

export const ACCEPTED_IMAGE_TYPES = "data:image/png;base64 or data:image/jpeg;base64";

export type ImageFormat = "png" | "jpeg";

export type QrImage = {
  format: ImageFormat;
  bytes: Uint8Array;
  width: number;
  height: number;
  /** PNG: the exact size of the inflated image data (filter bytes included) the header implies. */
  inflatedSize?: number;
};

/**
 * What the compressed text and colour-profile chunks of one PNG may inflate to, together. No decoder
 * here reads them, but a 100 kB zTXt can hold gigabytes: they are refused, not carried along.
 */
export const MAX_PNG_METADATA_BYTES = 1024 * 1024;

/** The client's image is refused; the message says why, in words an integrator can act on. */
export class ImageRefused extends Error {}

export class ImageTooLarge extends ImageRefused {}

const LABEL: Record<ImageFormat, string> = { png: "PNG", jpeg: "JPEG" };

const DATA_URL = /^data:/i;
const IMAGE_DATA_URL = /^data:image\/(png|jpeg|jpg);base64,/i;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The image a `code` carries: null when `code` is no data URL (it is then the QR text itself).
 * Throws ImageRefused for any data URL that is not a well-formed PNG or JPEG within the limits.
 */
export function parseImageDataUrl(code: string): QrImage | null {
  if (!DATA_URL.test(code)) return null;
  const accepted = IMAGE_DATA_URL.exec(code);
  if (!accepted) {
    const header = code.slice(0, Math.min(code.indexOf(",") + 1 || 40, 60));
    throw new ImageRefused(`only ${ACCEPTED_IMAGE_TYPES} images are accepted, not '${header}'`);
  }
  const declared: ImageFormat = accepted[1]?.toLowerCase() === "png" ? "png" : "jpeg";
  // Data URLs pasted from files and e-mails are often wrapped over lines.
  const text = code.slice(accepted[0].length).replace(/\s+/g, "");
  if (!BASE64.test(text)) throw new ImageRefused("the image after the data URL's comma is not base64");
  const bytes = Buffer.from(text, "base64");
  const actual = sniff(bytes);
  if (actual !== declared) {
    throw new ImageRefused(
      `the data URL says image/${declared} but the bytes are ${actual ? `a ${LABEL[actual]}` : "neither a PNG nor a JPEG"}`,
    );
  }
  const header = actual === "png" ? pngHeader(bytes) : jpegHeader(bytes);
  return { format: actual, bytes, ...header };
}

function sniff(bytes: Uint8Array): ImageFormat | undefined {
  if (startsWith(bytes, PNG_SIGNATURE)) return "png";
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return "jpeg";
  return undefined;
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

function checkSize(format: ImageFormat, width: number, height: number): void {
  if (width === 0 || height === 0) {
    throw new ImageRefused(
      `the image is not a readable ${LABEL[format]}: it declares ${width} × ${height} pixels`,
    );
  }
  if (width * height > MAX_QR_PIXELS) {
    throw new ImageTooLarge(
      `${width} × ${height} pixels; at most ${MAX_QR_PIXELS.toLocaleString("en-US")} pixels are read`,
    );
  }
}

function unreadable(format: ImageFormat, why: string): ImageRefused {
  return new ImageRefused(`the image is not a readable ${LABEL[format]}: ${why}`);
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const;
/** Samples per pixel by colour type; the bit depths each allows. */
const PNG_COLOUR: Record<number, { samples: number; depths: readonly number[] }> = {
  0: { samples: 1, depths: [1, 2, 4, 8, 16] },
  2: { samples: 3, depths: [8, 16] },
  3: { samples: 1, depths: [1, 2, 4, 8] },
  4: { samples: 2, depths: [8, 16] },
  6: { samples: 4, depths: [8, 16] },
};
/** Adam7's passes: first column, first row, column step, row step. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

/**
 * Every chunk up to IEND, each inside the file: one IHDR, first, within the limits; every APNG frame
 * inside the image it animates; image data present.
 */
function pngHeader(bytes: Buffer): Omit<QrImage, "format" | "bytes"> {
  let offset: number = PNG_SIGNATURE.length;
  let ihdr: { width: number; height: number; bitsPerPixel: number; interlaced: boolean } | undefined;
  let idat = false;
  for (;;) {
    if (offset + 8 > bytes.length) throw unreadable("png", "it ends before its IEND chunk (truncated)");
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString("latin1", offset + 4, offset + 8);
    const end = offset + 12 + length;
    if (length > 0x7fffffff || end > bytes.length) {
      throw unreadable("png", `its ${printable(type)} chunk runs past the end of the file (truncated)`);
    }
    if (ihdr === undefined && type !== "IHDR") throw unreadable("png", "its first chunk is not IHDR");
    if (type === "IHDR") {
      if (ihdr !== undefined) throw unreadable("png", "it has more than one IHDR chunk");
      if (length !== 13) throw unreadable("png", "its IHDR chunk is not 13 bytes");
      const width = bytes.readUInt32BE(offset + 8);
      const height = bytes.readUInt32BE(offset + 12);
      checkSize("png", width, height);
      const depth = bytes[offset + 16] as number;
      const colour = PNG_COLOUR[bytes[offset + 17] as number];
      if (!colour?.depths.includes(depth)) {
        throw unreadable("png", "its IHDR declares an invalid colour type and bit depth");
      }
      ihdr = { width, height, bitsPerPixel: colour.samples * depth, interlaced: bytes[offset + 20] === 1 };
    } else if (type === "IDAT") {
      idat = true;
    } else if (type === "fcTL" && ihdr) {
      apngFrame(bytes.subarray(offset + 8, offset + 8 + length), ihdr);
    } else if (type === "IEND") {
      break;
    }
    offset = end;
  }
  if (!ihdr || !idat) throw unreadable("png", "it has no image data (IDAT)");
  return { width: ihdr.width, height: ihdr.height, inflatedSize: pngInflatedSize(ihdr) };
}

/**
 * An APNG frame control chunk: sequence, width, height, x and y offsets, then timing. A frame lies
 * within the image (APNG 1.0), so within the limits too; a decoder that honours APNG allocates it.
 */
function apngFrame(data: Buffer, image: { width: number; height: number }): void {
  if (data.length !== 26) throw unreadable("png", "its fcTL (animation frame) chunk is not 26 bytes");
  const [width, height, x, y] = [4, 8, 12, 16].map((at) => data.readUInt32BE(at)) as [
    number,
    number,
    number,
    number,
  ];
  if (width === 0 || height === 0) {
    throw unreadable("png", `an animation frame declares ${width} × ${height} pixels`);
  }
  if (x + width > image.width || y + height > image.height) {
    const size = `${width} × ${height} pixels at (${x}, ${y})`;
    if (width * height > MAX_QR_PIXELS) {
      throw new ImageTooLarge(
        `an animation frame of ${size}; at most ${MAX_QR_PIXELS.toLocaleString("en-US")} pixels are read`,
      );
    }
    throw unreadable(
      "png",
      `an animation frame of ${size} lies outside its ${image.width} × ${image.height} image`,
    );
  }
}

/** Bytes of filtered scanlines the header implies: exactly what a conforming zlib stream inflates to. */
function pngInflatedSize(h: { width: number; height: number; bitsPerPixel: number; interlaced: boolean }) {
  const rows = (width: number, height: number) =>
    width === 0 || height === 0 ? 0 : height * (1 + Math.ceil((width * h.bitsPerPixel) / 8));
  if (!h.interlaced) return rows(h.width, h.height);
  let sum = 0;
  for (const [x0, y0, dx, dy] of ADAM7) {
    sum += rows(Math.ceil((h.width - x0) / dx), Math.ceil((h.height - y0) / dy));
  }
  return sum;
}

/** The concatenated IDAT data of a PNG that `parseImageDataUrl` accepted. */
export function pngImageData(bytes: Uint8Array): Buffer {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const parts: Buffer[] = [];
  let offset: number = PNG_SIGNATURE.length;
  while (offset + 8 <= buffer.length) {
    const length = buffer.readUInt32BE(offset);
    const type = buffer.toString("latin1", offset + 4, offset + 8);
    if (type === "IDAT") parts.push(buffer.subarray(offset + 8, offset + 8 + length));
    if (type === "IEND") break;
    offset += 12 + length;
  }
  return Buffer.concat(parts);
}

/**
 * The zlib streams of a PNG's compressed metadata (zTXt, iCCP, compressed iTXt), each with its chunk
 * type: what `MAX_PNG_METADATA_BYTES` bounds. A chunk too short for its fields carries none.
 */
export function pngCompressedMetadata(bytes: Uint8Array): { type: string; stream: Buffer }[] {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const found: { type: string; stream: Buffer }[] = [];
  let offset: number = PNG_SIGNATURE.length;
  while (offset + 8 <= buffer.length) {
    const length = buffer.readUInt32BE(offset);
    const type = buffer.toString("latin1", offset + 4, offset + 8);
    const data = buffer.subarray(offset + 8, offset + 8 + length);
    // zTXt and iCCP: name, 0, method, stream. iTXt: keyword, 0, flag, method, language, 0,
    // translated keyword, 0, text (a stream when the flag is 1).
    const name = data.indexOf(0);
    if ((type === "zTXt" || type === "iCCP") && name >= 0) {
      found.push({ type, stream: data.subarray(name + 2) });
    } else if (type === "iTXt" && name >= 0 && data[name + 1] === 1) {
      const language = data.indexOf(0, name + 3);
      const translated = language < 0 ? -1 : data.indexOf(0, language + 1);
      if (translated >= 0) found.push({ type, stream: data.subarray(translated + 1) });
    }
    if (type === "IEND") break;
    offset += 12 + length;
  }
  return found;
}

function printable(type: string): string {
  return /^[A-Za-z]{4}$/.test(type) ? type : "last";
}

/** SOF0–SOF15 less DHT (C4), JPG (C8) and DAC (CC): every marker that starts a frame header. */
function isFrameHeader(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

/**
 * Every marker up to EOI, entropy-coded data skipped: each frame header (a progressive or
 * hierarchical JPEG may declare several) within the limits, every segment inside the file.
 */
function jpegHeader(bytes: Buffer): Omit<QrImage, "format" | "bytes"> {
  let offset = 2;
  let frame: { width: number; height: number } | undefined;
  let scans = 0;
  for (;;) {
    if (offset + 2 > bytes.length) throw unreadable("jpeg", "it ends before its EOI marker (truncated)");
    if (bytes[offset] !== 0xff) throw unreadable("jpeg", `no marker where one is due (byte ${offset})`);
    // Any number of 0xFF fill bytes may precede a marker.
    while (bytes[offset + 1] === 0xff) offset++;
    const marker = bytes[offset + 1] as number;
    if (marker === 0xd9) break;
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      offset += 2;
      continue;
    }
    if (offset + 4 > bytes.length) throw unreadable("jpeg", "it ends inside a marker (truncated)");
    const length = bytes.readUInt16BE(offset + 2);
    const end = offset + 2 + length;
    if (length < 2 || end > bytes.length) {
      throw unreadable("jpeg", `its segment at byte ${offset} runs past the end of the file (truncated)`);
    }
    if (isFrameHeader(marker)) {
      if (length < 8) throw unreadable("jpeg", "its frame header is too short");
      const height = bytes.readUInt16BE(offset + 5);
      const width = bytes.readUInt16BE(offset + 7);
      checkSize("jpeg", width, height);
      frame ??= { width, height };
    }
    offset = end;
    if (marker === 0xda) {
      if (!frame) throw unreadable("jpeg", "a scan comes before any frame header");
      if (++scans > MAX_JPEG_SCANS) throw unreadable("jpeg", `it has more than ${MAX_JPEG_SCANS} scans`);
      offset = afterEntropyCodedData(bytes, offset);
    }
  }
  if (!frame || scans === 0) throw unreadable("jpeg", "it has no frame header or no scan");
  return frame;
}

/** The next marker after a scan's data: 0xFF followed by neither a stuffed 0x00 nor a restart marker. */
function afterEntropyCodedData(bytes: Buffer, from: number): number {
  let at = from;
  for (;;) {
    at = bytes.indexOf(0xff, at);
    if (at < 0 || at + 1 >= bytes.length) return bytes.length;
    const next = bytes[at + 1] as number;
    if (next === 0x00 || (next >= 0xd0 && next <= 0xd7) || next === 0xff) {
      // A stuffed byte or a restart marker stays inside the scan; a fill byte precedes a marker.
      if (next === 0xff) return at;
      at += 2;
      continue;
    }
    return at;
  }
}
