import assert from "node:assert/strict";
import { test } from "node:test";
import zlib from "node:zlib";
import QRCode from "qrcode";
import { readQrImage } from "../../src/qr/qr-image-decoder.ts";
import { ImageRefused, ImageTooLarge, parseImageDataUrl } from "../../src/qr/qr-image-guard.ts";
import { DecodeTimeLimit, QrReaderBusy, qrImageReader } from "../../src/qr/qr-reader-pool.ts";
import { build, type Json, tenant } from "../helpers.ts";
import {
  compressedChunk,
  compressedITXt,
  dataUrl,
  EOI,
  fcTL,
  finderGrid,
  greyPng,
  ihdr,
  jpegFrame,
  jpegSegment,
  PNG_SIGNATURE,
  pngChunk,
  SCAN,
  SOI,
} from "./png.ts";

const API = "/api/v1/einvoice";

const white = greyPng(64, 64, () => 255);
const iend = pngChunk("IEND", Buffer.alloc(0));

/** The chunks of a valid PNG, then `extra` before IEND. */
function withChunks(png: Buffer, ...extra: Buffer[]): Buffer {
  return Buffer.concat([png.subarray(0, png.length - iend.length), ...extra, iend]);
}

/** A GIF header: its logical screen, then one image descriptor of the same size. */
function gif(width: number, height: number): Buffer {
  const screen = Buffer.from("GIF89a\0\0\0\0\0\0\0", "latin1");
  screen.writeUInt16LE(width, 6);
  screen.writeUInt16LE(height, 8);
  const descriptor = Buffer.from([0x2c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 0, 0, 0x3b]);
  descriptor.writeUInt16LE(width, 5);
  descriptor.writeUInt16LE(height, 7);
  return Buffer.concat([screen, descriptor]);
}

/** A WebP extended header (VP8X) declaring its canvas. */
function webp(width: number, height: number): Buffer {
  const vp8x = Buffer.alloc(10);
  vp8x.writeUIntLE(width - 1, 4, 3);
  vp8x.writeUIntLE(height - 1, 7, 3);
  const chunk = Buffer.concat([Buffer.from("VP8X"), Buffer.from([10, 0, 0, 0]), vp8x]);
  const riff = Buffer.concat([Buffer.from("RIFF"), Buffer.alloc(4), Buffer.from("WEBP"), chunk]);
  riff.writeUInt32LE(riff.length - 8, 4);
  return riff;
}

/** A BMP file and info header. */
function bmp(width: number, height: number): Buffer {
  const header = Buffer.alloc(54);
  header.write("BM", 0, "latin1");
  header.writeUInt32LE(54, 10);
  header.writeUInt32LE(40, 14);
  header.writeInt32LE(width, 18);
  header.writeInt32LE(height, 22);
  header.writeUInt16LE(1, 26);
  header.writeUInt16LE(24, 28);
  return header;
}

async function setup(t: Parameters<typeof build>[0]) {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const validate = async (code: string) => {
    const started = performance.now();
    const res = await app.inject({
      method: "POST",
      url: `${API}/qr-code/validate`,
      headers: a.headers,
      payload: { code },
    });
    return { res, ms: performance.now() - started };
  };
  return { app, ctx, a, validate };
}

function refusal(res: { statusCode: number; json(): unknown }, status = 400): string {
  assert.equal(res.statusCode, status);
  const body = res.json() as Json & { error: Json };
  assert.equal(body.status, false);
  assert.equal(body.code, status);
  return String(body.error.details);
}

// First in this file: the only test that decodes on this thread, so it is what loads the decoder here.
test("the decoder loads its WebAssembly from the installed package and fetches nothing", async (t) => {
  const fetched: string[] = [];
  const real = globalThis.fetch;
  globalThis.fetch = async (input: Parameters<typeof fetch>[0]) => {
    fetched.push(String(input));
    throw new Error("no network in this test");
  };
  t.after(() => {
    globalThis.fetch = real;
  });
  const png = await QRCode.toBuffer("offline", { errorCorrectionLevel: "H", width: 200 });
  assert.equal(await readQrImage(dataUrl("image/png", png)), "offline");
  assert.deepEqual(fetched, []);
});

test("hostile PNGs and JPEGs are refused from their headers, quickly, with a 400 that says why", async (t) => {
  const { validate } = await setup(t);
  // The app's first request pays for compiling its routes: not what is timed here.
  await validate("bm90IGVuY3J5cHRlZA==");
  const cases: [string, string, RegExp][] = [
    // The first IHDR is honest; a decoder that read the second would allocate 400 million pixels.
    [
      "a second IHDR of 20,000 × 20,000",
      dataUrl(
        "image/png",
        withChunks(white, pngChunk("tEXt", Buffer.alloc(60_000, 0x41)), ihdr(20_000, 20_000)),
      ),
      /more than one IHDR/,
    ],
    [
      "one IHDR of 20,000 × 20,000",
      dataUrl(
        "image/png",
        Buffer.concat([
          PNG_SIGNATURE,
          ihdr(20_000, 20_000),
          pngChunk("IDAT", zlib.deflateSync(Buffer.alloc(1000))),
          iend,
        ]),
      ),
      /too large for a QR code \(20000 × 20000 pixels; at most 4,000,000/,
    ],
    ["a PNG cut in half", dataUrl("image/png", white.subarray(0, Math.floor(white.length / 2))), /truncated/],
    ["a PNG without IEND", dataUrl("image/png", white.subarray(0, white.length - iend.length)), /truncated/],
    [
      "a PNG of 0 × 64",
      dataUrl("image/png", Buffer.concat([PNG_SIGNATURE, ihdr(0, 64), iend])),
      /declares 0 × 64 pixels/,
    ],
    [
      "a PNG whose first chunk is not IHDR",
      dataUrl(
        "image/png",
        Buffer.concat([PNG_SIGNATURE, pngChunk("tEXt", Buffer.from("a")), white.subarray(8)]),
      ),
      /first chunk is not IHDR/,
    ],
    [
      "a JPEG whose frame declares 30,000 × 30,000",
      dataUrl("image/jpeg", Buffer.concat([SOI, jpegFrame(0xc0, 30_000, 30_000), SCAN, EOI])),
      /too large for a QR code \(30000 × 30000 pixels/,
    ],
    [
      // Several frames (hierarchical, or a crafted progressive file): every one is read.
      "a JPEG whose second frame declares 30,000 × 30,000",
      dataUrl(
        "image/jpeg",
        Buffer.concat([SOI, jpegFrame(0xc2, 100, 100), SCAN, jpegFrame(0xc7, 30_000, 30_000), SCAN, EOI]),
      ),
      /too large for a QR code \(30000 × 30000 pixels/,
    ],
    [
      "a JPEG frame of 0 × 0",
      dataUrl("image/jpeg", Buffer.concat([SOI, jpegFrame(0xc1, 0, 0), SCAN, EOI])),
      /declares 0 × 0 pixels/,
    ],
    [
      "a JPEG segment running past the end",
      dataUrl("image/jpeg", Buffer.concat([SOI, jpegSegment(0xe0, Buffer.alloc(40)).subarray(0, 20)])),
      /truncated/,
    ],
    [
      "a JPEG without EOI",
      dataUrl("image/jpeg", Buffer.concat([SOI, jpegFrame(0xc0, 10, 10), SCAN])),
      /truncated/,
    ],
    [
      "a JPEG of a thousand scans",
      dataUrl("image/jpeg", Buffer.concat([SOI, jpegFrame(0xc2, 10, 10), ...Array(1000).fill(SCAN), EOI])),
      /more than 100 scans/,
    ],
    ["garbage after the prefix", "data:image/png;base64,<<not base64!>>", /not base64/],
    ["base64 of no image", "data:image/png;base64,AAAAAAAAAAAA", /neither a PNG nor a JPEG/],
    [
      "a JPEG labelled PNG",
      dataUrl("image/png", Buffer.concat([SOI, EOI])),
      /says image\/png but the bytes are a JPEG/,
    ],
    [
      "a GIF",
      "data:image/gif;base64,R0lGODlhAQABAAAAACw=",
      /only data:image\/png;base64 or data:image\/jpeg;base64/,
    ],
    [
      "a PNG without base64",
      "data:image/png,%89PNG",
      /only data:image\/png;base64 or data:image\/jpeg;base64/,
    ],
    ["text", "data:text/plain;base64,aGVsbG8=", /not 'data:text\/plain;base64,'/],
    // APNG: a decoder that honours the animation allocates each frame, so each is read too.
    [
      "an APNG frame of 20,000 × 20,000",
      dataUrl("image/png", withChunks(white, fcTL(0, 20_000, 20_000))),
      /too large for a QR code \(an animation frame of 20000 × 20000 pixels at \(0, 0\); at most 4,000,000/,
    ],
    [
      "an APNG frame outside its image",
      dataUrl("image/png", withChunks(white, fcTL(0, 64, 64), fcTL(1, 64, 64, 1, 0))),
      /animation frame of 64 × 64 pixels at \(1, 0\) lies outside its 64 × 64 image/,
    ],
    [
      "an APNG frame of 0 × 5",
      dataUrl("image/png", withChunks(white, fcTL(0, 0, 5))),
      /animation frame declares 0 × 5 pixels/,
    ],
    // Other formats' headers declaring 65,535 pixels a side are never handed to a decoder.
    ["a GIF labelled PNG", dataUrl("image/png", gif(65_535, 65_535)), /image\/png but the bytes are neither/],
    [
      "a WebP labelled JPEG",
      dataUrl("image/jpeg", webp(16_384, 16_384)),
      /image\/jpeg but the bytes are neither/,
    ],
    ["a BMP labelled PNG", dataUrl("image/png", bmp(65_535, 65_535)), /image\/png but the bytes are neither/],
    ["a WebP", dataUrl("image/webp", webp(16_384, 16_384)), /only data:image\/png;base64 or/],
    ["a BMP", dataUrl("image/bmp", bmp(65_535, 65_535)), /only data:image\/png;base64 or/],
  ];
  for (const [what, code, reason] of cases) {
    const { res, ms } = await validate(code);
    assert.match(refusal(res), reason, what);
    assert.ok(ms < 1000, `${what}: answered in ${ms.toFixed(0)} ms`);
  }
});

test("a deflate bomb under a small IHDR is refused by what it inflates to, not decoded", async (t) => {
  const { validate } = await setup(t);
  await validate(dataUrl("image/png", white)); // the thread's start-up is not what is timed
  // 100 × 100 pixels declared (10,100 bytes of scanlines); the stream inflates to 64 MiB.
  const bomb = Buffer.concat([
    PNG_SIGNATURE,
    ihdr(100, 100),
    pngChunk("IDAT", zlib.deflateSync(Buffer.alloc(64 * 2 ** 20), { level: 9 })),
    iend,
  ]);
  assert.ok(bomb.length < 100_000);
  const { res, ms } = await validate(dataUrl("image/png", bomb));
  assert.match(refusal(res), /inflates beyond the size its IHDR declares/);
  assert.ok(ms < 1000, `answered in ${ms.toFixed(0)} ms`);
});

test("compressed metadata that inflates beyond 1 MiB is refused, in every chunk that carries it; a little reads", async (t) => {
  const { validate } = await setup(t);
  await validate(dataUrl("image/png", white)); // the thread's start-up is not what is timed
  const zeros = Buffer.alloc(64 * 2 ** 20);
  const bombs: [string, Buffer][] = [
    ["a zTXt of 64 MiB", compressedChunk("zTXt", "Comment", zeros)],
    ["an iCCP of 64 MiB", compressedChunk("iCCP", "ICC profile", zeros)],
    ["an iTXt of 64 MiB", compressedITXt("Description", zeros)],
    [
      "three zTXt of 512 KiB",
      Buffer.concat([0, 1, 2].map((n) => compressedChunk("zTXt", `part ${n}`, zeros.subarray(0, 2 ** 19)))),
    ],
  ];
  for (const [what, chunk] of bombs) {
    const png = withChunks(white, chunk);
    assert.ok(png.length < 200_000, `${what}: ${png.length} bytes`);
    const { res, ms } = await validate(dataUrl("image/png", png));
    assert.match(
      refusal(res),
      /its compressed metadata \((zTXt|iCCP|iTXt) and the like\) inflates beyond 1 MiB/,
      what,
    );
    assert.ok(ms < 1000, `${what}: answered in ${ms.toFixed(0)} ms`);
  }
  // A colour profile and a comment of ordinary size: the code in the image is read (and, not being
  // one of this service's codes, fails at decryption).
  const code = await QRCode.toBuffer("bm90IGVuY3J5cHRlZA==", { errorCorrectionLevel: "H", width: 300 });
  const annotated = withChunks(
    code,
    compressedChunk("iCCP", "sRGB", Buffer.alloc(3_000, 7)),
    compressedChunk("zTXt", "Comment", Buffer.alloc(500_000, 0x41)),
  );
  const { res } = await validate(dataUrl("image/png", annotated));
  assert.match(refusal(res), /could not be decrypted/);
});

test("an image without a QR code is a 400 that says so; a wrapped, upper-case data URL of a code reads", async (t) => {
  const { validate } = await setup(t);
  const { res } = await validate(dataUrl("image/png", white));
  assert.match(refusal(res), /no QR code was found in the PNG image/);

  // Not one of this service's codes, so it fails later, at decryption: the image itself was read.
  const png = await QRCode.toBuffer("bm90IGVuY3J5cHRlZA==", { errorCorrectionLevel: "H", width: 300 });
  const wrapped = png.toString("base64").replace(/.{76}/g, "$&\r\n");
  const read = await validate(`DATA:IMAGE/PNG;BASE64,${wrapped}`);
  assert.match(refusal(read.res), /could not be decrypted/);
});

test("the guard reads every header: sizes, formats and refusals as types", () => {
  const png = parseImageDataUrl(dataUrl("image/png", white));
  assert.deepEqual(png && { format: png.format, width: png.width, height: png.height }, {
    format: "png",
    width: 64,
    height: 64,
  });
  assert.equal(png?.inflatedSize, 65 * 64);
  // The report's file: 65 kB whose second IHDR declares 20,000 × 20,000 (decoding it took 52 s).
  const crafted = dataUrl(
    "image/png",
    withChunks(white, pngChunk("tEXt", Buffer.alloc(65_000)), ihdr(20_000, 20_000)),
  );
  const started = performance.now();
  assert.throws(() => parseImageDataUrl(crafted), /more than one IHDR/);
  const ms = performance.now() - started;
  assert.ok(ms < 50, `the guard took ${ms.toFixed(1)} ms`);
  const jpeg = parseImageDataUrl(
    dataUrl("image/jpg", Buffer.concat([SOI, jpegFrame(0xc0, 640, 480), SCAN, EOI])),
  );
  assert.deepEqual(jpeg && [jpeg.format, jpeg.width, jpeg.height], ["jpeg", 640, 480]);
  assert.equal(parseImageDataUrl("bm90IGVuY3J5cHRlZA=="), null, "QR text is not an image");
  assert.throws(
    () => parseImageDataUrl(dataUrl("image/png", Buffer.concat([PNG_SIGNATURE, ihdr(2001, 2000), iend]))),
    ImageTooLarge,
  );
  assert.throws(() => parseImageDataUrl("data:image/webp;base64,UklGRg=="), ImageRefused);

  // Every start-of-frame marker, SOF0 to SOF15, is a frame header; DHT, JPG and DAC, in the same
  // range, are not, and bytes in them that look like a huge frame are not read as one.
  const jpegWith = (...segments: Buffer[]) =>
    dataUrl("image/jpeg", Buffer.concat([SOI, ...segments, SCAN, EOI]));
  for (let marker = 0xc0; marker <= 0xcf; marker++) {
    const frames = ![0xc4, 0xc8, 0xcc].includes(marker);
    const code = jpegWith(jpegFrame(0xc0, 64, 64), jpegFrame(marker, 30_000, 30_000));
    if (frames) assert.throws(() => parseImageDataUrl(code), ImageTooLarge, marker.toString(16));
    else assert.equal(parseImageDataUrl(code)?.width, 64, marker.toString(16));
  }
});

test("the decoding thread: one image over the time limit is refused and the thread replaced; a full queue is busy", async (t) => {
  const reader = qrImageReader({ timeLimitMs: 500, maxQueue: 1 });
  t.after(() => reader.close());
  const slow = parseImageDataUrl(dataUrl("image/png", finderGrid(1)));
  const code = parseImageDataUrl(
    dataUrl("image/png", await QRCode.toBuffer("hello", { errorCorrectionLevel: "H", width: 200 })),
  );
  assert.ok(slow && code);
  assert.equal(await reader.read(code), "hello", "the thread is up");

  // The first of three takes the thread, the second waits, the third finds the queue full.
  const results = await Promise.allSettled([reader.read(slow), reader.read(code), reader.read(code)]);
  const [first, second, third] = results;
  assert.equal(first?.status, "rejected");
  assert.ok(first?.status === "rejected" && first.reason instanceof DecodeTimeLimit, String(first));
  assert.match(String((first as PromiseRejectedResult).reason.message), /could not be decoded within 500 ms/);
  assert.deepEqual(second, { status: "fulfilled", value: "hello" }, "the replacement thread decodes");
  assert.ok(third?.status === "rejected" && third.reason instanceof QrReaderBusy, String(third));
  assert.equal(await reader.read(code), "hello");
});

test("the decoding thread: one that holds more memory than its limit after an image is replaced", async (t) => {
  const code = parseImageDataUrl(
    dataUrl("image/png", await QRCode.toBuffer("hello", { errorCorrectionLevel: "H", width: 200 })),
  );
  assert.ok(code);
  // Its WebAssembly memory alone is 21 MB: over a 1 MB limit after every image.
  const small = qrImageReader({ memoryLimitMb: 1 });
  t.after(() => small.close());
  assert.equal(await small.read(code), "hello");
  assert.equal(await small.read(code), "hello", "the replacement decodes");
  assert.equal(small.threadsStarted(), 2);

  // The largest image the guard admits by its bytes per pixel: 2,000 × 2,000 16-bit RGBA (32 MB of
  // pixels) decodes within the default memory limit, on the thread it started on. The time limit
  // is not what is tested here: on a busy machine this decode can take longer than the default.
  const reader = qrImageReader({ timeLimitMs: 30_000 });
  t.after(() => reader.close());
  const rgba16 = Buffer.alloc(2000 * (1 + 2000 * 8));
  const header = Buffer.alloc(13);
  header.writeUInt32BE(2000, 0);
  header.writeUInt32BE(2000, 4);
  header[8] = 16;
  header[9] = 6;
  const large = Buffer.concat([
    PNG_SIGNATURE,
    pngChunk("IHDR", header),
    pngChunk("IDAT", zlib.deflateSync(rgba16)),
    iend,
  ]);
  const image = parseImageDataUrl(dataUrl("image/png", large));
  assert.ok(image);
  assert.equal(await reader.read(image), null);
  assert.equal(await reader.read(code), "hello");
  assert.equal(reader.threadsStarted(), 1);
});

test("while a large image decodes, the event loop answers: /healthz within 100 ms", async (t) => {
  const { app, validate } = await setup(t);
  // Warm the thread so its start-up is not what is measured.
  await validate(dataUrl("image/png", white));
  const image = dataUrl("image/png", finderGrid(3));
  let done = false;
  const decoding = validate(image).finally(() => {
    done = true;
  });
  const latencies: number[] = [];
  while (!done) {
    const started = performance.now();
    const res = await app.inject({ url: "/healthz" });
    latencies.push(performance.now() - started);
    assert.equal(res.statusCode, 200);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const { res, ms } = await decoding;
  assert.match(refusal(res), /no QR code was found|could not be decoded within/);
  assert.ok(ms > 150, `the decode took ${ms.toFixed(0)} ms: too short to show anything`);
  assert.ok(latencies.length >= 5, `${latencies.length} health checks while decoding`);
  const slowest = Math.max(...latencies);
  assert.ok(slowest < 100, `the slowest /healthz took ${slowest.toFixed(0)} ms while decoding`);
});
