/**
 * QR image decoding per kind of image: jsqr (the decoder before) against ZXing compiled to
 * WebAssembly (zxing-wasm, the decoder now), on the QR corpus of the tests (the service's own
 * RSA-2048 codes rendered at 200–800 px, then turned, blurred, noisy, scaled, skewed, JPEG).
 *   npm run bench:qr                       (needs ImageMagick)
 *   npm install --no-save jsqr             (to measure jsqr too; it is no longer a dependency)
 *
 * Both decoders get the same pixels (ImageMagick's RGBA), so "pixels" compares the decoders alone;
 * "service" is the path an API request takes: the data URL's guard, the PNG inflate check and
 * ZXing's own PNG/JPEG loading. jsqr read PNGs only (through pngjs): JPEGs were refused before.
 */
import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { promisify } from "node:util";
import { readBarcodes } from "zxing-wasm/reader";
import { encryptQr } from "../src/crypto/qr.ts";
import { loadQrDecoder, readQrImage } from "../src/qr/qr-image-decoder.ts";
import { parseImageDataUrl } from "../src/qr/qr-image-guard.ts";
import { qrImageReader } from "../src/qr/qr-reader-pool.ts";
import { ihdr, PNG_SIGNATURE, pngChunk } from "../test/qr/png.ts";
import { type CorpusImage, dataUrl, IMAGEMAGICK, KINDS, qrCorpus } from "../test/qr/qr-corpus.ts";

type JsQr = (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;

const REPEATS = 3;
const run = promisify(execFile);

if (!IMAGEMAGICK) {
  console.error("ImageMagick is needed to make the corpus: apt-get install -y imagemagick");
  process.exit(1);
}
const jsQr = await import("jsqr" as string).then(
  (module: { default: JsQr | { default: JsQr } }) =>
    typeof module.default === "function" ? module.default : module.default.default,
  () => undefined,
);

console.log(
  `node ${process.version}, ${os.cpus()[0]?.model ?? "unknown cpu"} × ${os.availableParallelism()}, one thread`,
);
if (!jsQr) console.log("jsqr not installed: skipped (npm install --no-save jsqr to measure it)");

const { publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const texts = Array.from({ length: 9 }, (_, i) =>
  encryptQr(publicKey, {
    irn: `INV${String(i).padStart(4, "0")}-AB12CD34-20261115.${Math.floor(Date.now() / 1000)}`,
    certificate: `certificate-${i}-${"x".repeat(20)}`,
  }),
);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "einvoice-bench-qr-"));
let started = performance.now();
const corpus = await qrCorpus(texts, dir);
console.log(`corpus: ${corpus.length} images in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);

/** The median of `REPEATS` timings, and whether the decoder read exactly the encoded text. */
async function measure(work: () => Promise<string | null> | string | null, text: string) {
  const times: number[] = [];
  let ok = false;
  for (let i = 0; i < REPEATS; i++) {
    const start = performance.now();
    const read = await work();
    times.push(performance.now() - start);
    ok = read === text;
  }
  return { ok, ms: times.sort((a, b) => a - b)[Math.floor(REPEATS / 2)] as number };
}

async function pixels(image: CorpusImage) {
  const size = await run(IMAGEMAGICK as string, [image.file, "-format", "%w %h", "info:"]);
  const [width, height] = size.stdout.trim().split(" ").map(Number) as [number, number];
  const raw = await run(IMAGEMAGICK as string, [image.file, "-depth", "8", "RGBA:-"], {
    encoding: "buffer",
    maxBuffer: 1 << 28,
  });
  return { data: new Uint8ClampedArray(raw.stdout), width, height };
}

type Row = {
  jsqr?: { ok: boolean; ms: number };
  zxing: { ok: boolean; ms: number };
  service: { ok: boolean; ms: number };
};
const rows = new Map<CorpusImage, Row>();
// From the installed package's .wasm: left to itself, zxing-wasm would fetch it from a CDN.
await loadQrDecoder();
for (const image of corpus) {
  const rgba = await pixels(image);
  const url = dataUrl(image);
  const row: Row = {
    zxing: await measure(async () => {
      const [found] = await readBarcodes(rgba as unknown as Parameters<typeof readBarcodes>[0], {
        formats: ["QRCode"],
        tryHarder: true,
        tryRotate: true,
        tryInvert: true,
        tryDownscale: true,
        maxNumberOfSymbols: 1,
      });
      return found?.isValid ? found.text : null;
    }, image.text),
    service: await measure(() => readQrImage(url).catch(() => null), image.text),
  };
  if (jsQr)
    row.jsqr = await measure(() => jsQr(rgba.data, rgba.width, rgba.height)?.data ?? null, image.text);
  rows.set(image, row);
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};
const cell = (results: ({ ok: boolean; ms: number } | undefined)[]) => {
  const present = results.filter((r) => r !== undefined);
  if (present.length === 0) return "skipped".padStart(17);
  const read = present.filter((r) => r.ok).length;
  return `${read}/${present.length} ${median(present.map((r) => r.ms)).toFixed(1)} ms`.padStart(17);
};
console.log(
  `${"kind".padEnd(28)} ${"jsqr (pixels)".padStart(17)} ${"zxing (pixels)".padStart(17)} ${"zxing (service)".padStart(17)}`,
);
for (const kind of [...Object.keys(KINDS), "all"]) {
  const chosen = [...rows].filter(([image]) => kind === "all" || image.kind === kind).map(([, row]) => row);
  console.log(
    `${kind.padEnd(28)} ${cell(chosen.map((r) => r.jsqr))} ${cell(chosen.map((r) => r.zxing))} ${cell(chosen.map((r) => r.service))}`,
  );
}
for (const type of ["image/png", "image/jpeg"] as const) {
  const chosen = [...rows].filter(([image]) => image.type === type).map(([, row]) => row);
  console.log(
    `${`all ${type}`.padEnd(28)} ${cell(chosen.map((r) => r.jsqr))} ${cell(chosen.map((r) => r.zxing))} ${cell(chosen.map((r) => r.service))}`,
  );
}
console.log("(read/images, median decode time per image; each image decoded 3 times, the median kept)\n");

// Through the decoding thread, as the API does it: one image after another, and all at once.
const reader = qrImageReader();
const images = corpus.map((image) => parseImageDataUrl(dataUrl(image))).filter((image) => image !== null);
await reader.read(images[0] as NonNullable<(typeof images)[0]>);
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
started = performance.now();
for (const image of images) await reader.read(image);
const serial = (performance.now() - started) / images.length;
delay.disable();
started = performance.now();
let answered = 0;
for (let i = 0; i < images.length; i += 16) {
  const batch = await Promise.allSettled(images.slice(i, i + 16).map((image) => reader.read(image)));
  answered += batch.filter((r) => r.status === "fulfilled").length;
}
const burst = (performance.now() - started) / images.length;
await reader.close();
const stalls = (h: typeof delay) =>
  `event loop delay p50 ${(h.percentile(50) / 1e6).toFixed(1)}, p99 ${(h.percentile(99) / 1e6).toFixed(1)}, max ${(h.max / 1e6).toFixed(1)} ms`;
console.log(
  `decoding thread, one at a time: ${serial.toFixed(1)} ms per image (queue and messages included); ${stalls(delay)}`,
);
console.log(
  `decoding thread, 16 at once: ${burst.toFixed(1)} ms per image (${answered}/${images.length} answered)`,
);
// The same images decoded on the event loop itself, for comparison: each decode is a stall.
const blocked: number[] = [];
for (const image of corpus) {
  const start = performance.now();
  await readQrImage(dataUrl(image));
  blocked.push(performance.now() - start);
}
blocked.sort((a, b) => a - b);
console.log(
  `on the event loop instead, each decode stalls it: p50 ${median(blocked).toFixed(1)}, ` +
    `p99 ${(blocked[Math.floor(blocked.length * 0.99)] ?? 0).toFixed(1)}, max ${(blocked.at(-1) ?? 0).toFixed(1)} ms`,
);

// The crafted PNG of the report: a 65 kB file whose second IHDR declares 20,000 × 20,000 pixels.
const honest = Buffer.concat([PNG_SIGNATURE, ihdr(64, 64), pngChunk("tEXt", Buffer.alloc(65_000, 0x41))]);
const crafted = `data:image/png;base64,${Buffer.concat([honest, ihdr(20_000, 20_000), pngChunk("IEND", Buffer.alloc(0))]).toString("base64")}`;
started = performance.now();
for (let i = 0; i < 100; i++) {
  try {
    parseImageDataUrl(crafted);
  } catch {}
}
console.log(
  `a second IHDR of 20,000 × 20,000 in 65 kB: refused in ${((performance.now() - started) / 100).toFixed(2)} ms (the guard, before any decoding)`,
);
fs.rmSync(dir, { recursive: true, force: true });
