import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { readQrImage } from "../../src/qr/qr-image-decoder.ts";
import { build, freshInvoice, type Json, tempDir, tenant } from "../helpers.ts";
import { type CorpusImage, dataUrl, IMAGEMAGICK, KINDS, qrCorpus, withoutImageMagick } from "./qr-corpus.ts";

const API = "/api/v1/einvoice";
/** What must read: at most one image in a hundred may be lost. */
const REQUIRED_RATE = 0.99;

/** The data URL as integrators send it: media types in any case, `image/jpg`, base64 wrapped over lines. */
function asSent(image: CorpusImage, i: number): string {
  const url = dataUrl(image);
  const type = image.type === "image/jpeg" ? ["image/jpeg", "image/jpg", "IMAGE/JPEG"][i % 3] : "image/png";
  const body = url.slice(url.indexOf(",") + 1);
  return `data:${type};base64,${i % 2 === 0 ? body.replace(/.{76}/g, "$&\n") : body}`;
}

test("QR corpus: the service's own codes, rendered at 200–800 px, then turned, blurred, noisy, scaled, skewed and JPEG-compressed, read at ≥ 99%", {
  skip: withoutImageMagick,
  timeout: 600_000,
}, async (t) => {
  const { app, ctx } = await build(t);
  const seller = await tenant(ctx);
  const buyer = await tenant(ctx);
  const texts = new Map<string, string>();
  for (let i = 0; i < 9; i++) {
    const invoice = freshInvoice(seller, "invoice-minimal");
    const signed = await app.inject({
      method: "POST",
      url: `${API}/sign`,
      headers: seller.headers,
      payload: invoice,
    });
    assert.equal(signed.statusCode, 200, signed.body);
    const record = await app.inject({ url: `${API}/${String(invoice.irn)}`, headers: seller.headers });
    texts.set(String(record.json().data.qr_code), String(invoice.irn));
  }
  const corpus = await qrCorpus([...texts.keys()], path.join(tempDir(t), "corpus"));
  assert.ok(corpus.length >= 100, `${corpus.length} images`);
  const jpegs = corpus.filter((image) => image.type === "image/jpeg");
  assert.ok(jpegs.length >= 40, `${jpegs.length} JPEGs`);

  const failed = new Map<CorpusImage, string>();
  for (const [i, image] of corpus.entries()) {
    if (i % 4 === 0) {
      // A quarter over HTTP, as a buyer checking its seller's code would send them.
      const res = await app.inject({
        method: "POST",
        url: `${API}/qr-code/validate`,
        headers: buyer.headers,
        payload: { code: asSent(image, i / 4) },
      });
      const body = res.json() as Json & { data: Json; error?: Json };
      if (res.statusCode !== 200) failed.set(image, `HTTP ${res.statusCode}: ${body.error?.details}`);
      else assert.equal(body.data.irn, texts.get(image.text), `${image.kind} at ${image.width} px`);
    } else {
      const read = await readQrImage(dataUrl(image)).catch((err: Error) => `refused: ${err.message}`);
      if (read !== image.text) failed.set(image, read === null ? "no code found" : read);
    }
  }
  const rate = (images: CorpusImage[]) => images.filter((image) => !failed.has(image)).length / images.length;
  const failures = [...failed].map(([image, why]) => `${image.kind} at ${image.width} px (${why})`);
  assert.ok(
    rate(corpus) >= REQUIRED_RATE,
    `read ${(rate(corpus) * 100).toFixed(1)}%: ${failures.join("; ")}`,
  );
  // The JPEGs alone (about 50) may lose one: the codes are new ciphertexts each run, and a 200 px
  // JPEG of a turned code, about 3 px a module, is at the edge of what can be read (one such image
  // was lost in one run of three). Two lost would be a regression.
  const lostJpegs = jpegs.filter((image) => failed.has(image)).length;
  assert.ok(lostJpegs <= 1, `JPEGs read ${(rate(jpegs) * 100).toFixed(1)}%: ${failures.join("; ")}`);
  for (const kind of Object.keys(KINDS)) {
    assert.ok(
      corpus.some((image) => image.kind === kind),
      `the corpus has ${kind}`,
    );
  }

  // A photograph with no code in it, as a JPEG: the same 400 as for a PNG.
  const blank = path.join(tempDir(t), "blank.jpg");
  await promisify(execFile)(IMAGEMAGICK as string, ["-size", "640x480", "plasma:", "-quality", "70", blank]);
  const res = await app.inject({
    method: "POST",
    url: `${API}/qr-code/validate`,
    headers: buyer.headers,
    payload: { code: `data:image/jpeg;base64,${fs.readFileSync(blank).toString("base64")}` },
  });
  assert.equal(res.statusCode, 400, res.body);
  assert.match(String(res.json().error.details), /no QR code was found in the JPEG image/);
});
