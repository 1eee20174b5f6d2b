/** PNG and JPEG files built byte by byte, for images no encoder would write. */
import zlib from "node:zlib";

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A PNG chunk: length, type, data, CRC-32 of type and data. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(typed) >>> 0);
  return Buffer.concat([head, typed, crc]);
}

export function ihdr(width: number, height: number, depth = 8): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = depth;
  header[9] = 0; // greyscale
  return pngChunk("IHDR", header);
}

/** An 8-bit greyscale PNG of `pixel(x, y)`. */
export function greyPng(width: number, height: number, pixel: (x: number, y: number) => number): Buffer {
  const raw = Buffer.alloc((width + 1) * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) raw[y * (width + 1) + 1 + x] = pixel(x, y);
  }
  return Buffer.concat([
    PNG_SIGNATURE,
    ihdr(width, height),
    pngChunk("IDAT", zlib.deflateSync(raw, { level: 9 })),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

const FINDER = ["1111111", "1000001", "1011101", "1011101", "1011101", "1000001", "1111111"];

/**
 * 2,000 × 2,000 pixels tiled with QR finder patterns and no code: within every limit, 11–13 kB,
 * and among the slowest images there are for a QR detector (it weighs every triple of candidates):
 * here about 3 s with 1-pixel modules, 0.5 s with 3-pixel ones.
 */
export function finderGrid(modulePx = 3): Buffer {
  const tile = 14 * modulePx;
  return greyPng(2000, 2000, (x, y) => {
    const tx = Math.floor((x % tile) / modulePx);
    const ty = Math.floor((y % tile) / modulePx);
    return tx < 7 && ty < 7 && FINDER[ty]?.[tx] === "1" ? 0 : 255;
  });
}

/** A JPEG segment: marker and length-prefixed payload. */
export function jpegSegment(marker: number, payload: Buffer): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([head, payload]);
}

/** A frame header (SOFn) for one greyscale component. */
export function jpegFrame(marker: number, width: number, height: number): Buffer {
  const payload = Buffer.from([8, 0, 0, 0, 0, 1, 1, 0x11, 0]);
  payload.writeUInt16BE(height, 1);
  payload.writeUInt16BE(width, 3);
  return jpegSegment(marker, payload);
}

export const SOI = Buffer.from([0xff, 0xd8]);
export const EOI = Buffer.from([0xff, 0xd9]);
/** A scan header for one component, followed by entropy-coded bytes (a stuffed 0xFF among them). */
export const SCAN = Buffer.concat([
  jpegSegment(0xda, Buffer.from([1, 1, 0, 0, 63, 0])),
  Buffer.from([0x12, 0xff, 0x00, 0x34, 0xff, 0xd0, 0x56]),
]);

export function dataUrl(type: string, bytes: Buffer): string {
  return `data:${type};base64,${bytes.toString("base64")}`;
}

/** An APNG frame control chunk: a frame of width × height at (x, y), one tenth of a second. */
export function fcTL(sequence: number, width: number, height: number, x = 0, y = 0): Buffer {
  const data = Buffer.alloc(26);
  [sequence, width, height, x, y].forEach((value, i) => {
    data.writeUInt32BE(value, i * 4);
  });
  data.writeUInt16BE(1, 20);
  data.writeUInt16BE(10, 22);
  return pngChunk("fcTL", data);
}

/** zTXt / iCCP: a name, 0, method 0 (zlib), then the deflated `content`. */
export function compressedChunk(type: "zTXt" | "iCCP", name: string, content: Buffer): Buffer {
  return pngChunk(
    type,
    Buffer.concat([Buffer.from(`${name}\0\0`, "latin1"), zlib.deflateSync(content, { level: 9 })]),
  );
}

/** iTXt with its text compressed: keyword, 0, flag 1, method 0, language, 0, translated keyword, 0, stream. */
export function compressedITXt(keyword: string, text: Buffer): Buffer {
  const head = Buffer.concat([
    Buffer.from(`${keyword}\0`, "latin1"),
    Buffer.from([1, 0]),
    Buffer.from("en\0\0"),
  ]);
  return pngChunk("iTXt", Buffer.concat([head, zlib.deflateSync(text, { level: 9 })]));
}
