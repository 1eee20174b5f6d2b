/**
 * A corpus of QR images as they reach the service in practice: the service's own renderings of its
 * QR texts (error correction H, 200–800 px), then photographed, scanned or re-encoded — turned,
 * blurred, noisy, scaled down, seen at an angle, saved as JPEG, and combinations. Made with
 * ImageMagick at run time (no image is committed); the QR decode test and `npm run bench:qr` read it.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import QRCode from "qrcode";

/** Debian's ImageMagick (6 installs `convert`, 7 `magick`); CI installs it, nothing else is looked for. */
export const IMAGEMAGICK = ["/usr/bin/magick", "/usr/bin/convert"].find((file) => fs.existsSync(file));

/** The `skip` option of a corpus test: a reason where this machine has no ImageMagick. */
export const withoutImageMagick =
  IMAGEMAGICK === undefined &&
  "no ImageMagick at /usr/bin/convert or /usr/bin/magick (apt-get install -y imagemagick): QR corpus test skipped";

export type CorpusImage = {
  kind: string;
  /** The width the code was rendered at, before any transformation. */
  width: number;
  file: string;
  type: "image/png" | "image/jpeg";
  text: string;
};

/** Rendering widths; a QR text of 344 characters is version 20 (97 modules + margin): 2–8 px a module. */
export const WIDTHS = [200, 260, 320, 400, 480, 560, 640, 720, 800] as const;

type Step = (p: Params) => string[];
type Params = { width: number; modulePx: number; index: number };

const rotate: Step = ({ index }) => ["-background", "white", "-rotate", String(5 + ((index * 13) % 41))];
const blur =
  (share: number): Step =>
  ({ modulePx }) => ["-blur", `0x${(share * modulePx).toFixed(2)}`];
/** A camera's sensor noise, in grey. */
const grain =
  (amount: number): Step =>
  ({ index }) => [
    "-attenuate",
    (amount + (index % 3) * 0.1).toFixed(1),
    "+noise",
    "Gaussian",
    "-colorspace",
    "Gray",
  ];
/** Down to `modulePx` pixels a module (never up). */
const scale =
  (modulePx: number): Step =>
  (p) => ["-resize", `${Math.min(90, Math.round((modulePx / p.modulePx) * 100))}%`];
/** A camera off the code's axis: three corners moved by 4–12% of the side; the canvas grows to fit. */
const perspective: Step = ({ width, index }) => {
  const d = (k: number) => Math.round(width * (0.04 + (((index + k) * 7) % 9) / 100));
  const w = width;
  return [
    "-virtual-pixel",
    "white",
    "+distort",
    "Perspective",
    `0,0 ${d(0)},${d(1)}  ${w},0 ${w - d(2)},${d(3)}  0,${w} ${d(4)},${w - d(5)}  ${w},${w} ${w},${w}`,
  ];
};

/** Each kind: its transformation, and whether it ends as a JPEG (quality 50–85, baseline or progressive). */
export const KINDS: Record<string, { steps: Step[]; jpeg: boolean }> = {
  jpeg: { steps: [], jpeg: true },
  rotate: { steps: [rotate], jpeg: false },
  blur: { steps: [blur(0.35)], jpeg: false },
  noise: { steps: [grain(0.3)], jpeg: false },
  scale: { steps: [scale(2.6)], jpeg: false },
  perspective: { steps: [perspective], jpeg: false },
  "rotate+jpeg": { steps: [rotate], jpeg: true },
  "scale+jpeg": { steps: [scale(2.6)], jpeg: true },
  "perspective+jpeg": { steps: [perspective], jpeg: true },
  "blur+noise+jpeg": { steps: [blur(0.25), grain(0.5)], jpeg: true },
  "rotate+scale+noise": { steps: [rotate, scale(2.6), grain(0.4)], jpeg: false },
  "perspective+blur+noise+jpeg": { steps: [perspective, blur(0.25), grain(0.4)], jpeg: true },
};

const run = promisify(execFile);

/**
 * Every kind at every width: `texts` are used in turn, one per rendering width. One ImageMagick
 * process per rendering writes all its variants; two run at once.
 */
export async function qrCorpus(texts: readonly string[], dir: string): Promise<CorpusImage[]> {
  if (!IMAGEMAGICK) throw new Error("ImageMagick is not installed");
  if (texts.length === 0) throw new Error("the corpus needs at least one QR text");
  const magick = IMAGEMAGICK;
  fs.mkdirSync(dir, { recursive: true });
  const jobs = WIDTHS.map((width, w) => async () => {
    const text = texts[w % texts.length] as string;
    const base = path.join(dir, `base-${width}.png`);
    fs.writeFileSync(base, await QRCode.toBuffer(text, { errorCorrectionLevel: "H", margin: 2, width }));
    const images: CorpusImage[] = [];
    const args = ["-respect-parentheses", base];
    Object.entries(KINDS).forEach(([kind, { steps, jpeg }], k) => {
      const params = { width, modulePx: width / 101, index: w * 5 + k };
      const file = path.join(dir, `${kind}-${width}.${jpeg ? "jpg" : "png"}`);
      // Every other rendering's JPEGs are progressive: several scans, each walked by the guard.
      const progressive = w % 2 === 1 ? ["-interlace", "JPEG"] : [];
      const quality = jpeg ? ["-quality", String(50 + ((params.index * 11) % 36)), ...progressive] : [];
      args.push("(", "+clone", "-seed", String(params.index + 1), ...steps.flatMap((s) => s(params)));
      args.push(...quality, "-write", file, "+delete", ")");
      images.push({ kind, width, file, type: jpeg ? "image/jpeg" : "image/png", text });
    });
    // One thread each: two run side by side, and the machine may be shared.
    await run(magick, [...args, "null:"], { env: { ...process.env, MAGICK_THREAD_LIMIT: "1" } });
    return images;
  });
  const out: CorpusImage[] = [];
  for (let i = 0; i < jobs.length; i += 2) {
    const pair = await Promise.all(jobs.slice(i, i + 2).map((job) => job()));
    out.push(...pair.flat());
  }
  return out;
}

/** The image as the API takes it. */
export function dataUrl(image: CorpusImage): string {
  return `data:${image.type};base64,${fs.readFileSync(image.file).toString("base64")}`;
}
