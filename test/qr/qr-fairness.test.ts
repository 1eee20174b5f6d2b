import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import pino from "pino";
import QRCode from "qrcode";
import { createServer } from "../../src/main.ts";
import { parseImageDataUrl } from "../../src/qr/qr-image-guard.ts";
import { qrImageReader } from "../../src/qr/qr-reader-pool.ts";
import { JobDropped } from "../../src/threads/fair-queue.ts";
import { build, ENGINE, eventually, freshInvoice, type Json, type Tenant, tenant } from "../helpers.ts";
import { dataUrl, finderGrid } from "./png.ts";

const API = "/api/v1/einvoice";

test(`QR images on ${ENGINE}: while one business floods the decoder, another's images are all read; the flood gets 503s naming its own backlog, logged at warn`, async (t) => {
  const { ctx } = await build(t);
  const lines: Json[] = [];
  const logger = pino(
    { level: "info" },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as Json);
        done();
      },
    }),
  );
  const app = await createServer(ctx, logger);
  t.after(() => app.close());
  const a = await tenant(ctx);
  const b = await tenant(ctx);

  // B's image: its invoice's QR code, as a camera would pass it on.
  const invoice = freshInvoice(b, "invoice-minimal");
  const signed = await app.inject({
    method: "POST",
    url: `${API}/sign`,
    headers: b.headers,
    payload: invoice,
  });
  assert.equal(signed.statusCode, 200, signed.body);
  const record = (await app.inject({ url: `${API}/${invoice.irn}`, headers: b.headers })).json() as {
    data: { qr_code: string };
  };
  const code = dataUrl(
    "image/png",
    await QRCode.toBuffer(record.data.qr_code, { errorCorrectionLevel: "H", width: 320 }),
  );
  // A's: 2,000 × 2,000 of finder patterns and no code, among the slowest images to search (~0.5 s).
  const slow = dataUrl("image/png", finderGrid(3));

  const answered: string[] = [];
  let refusedA = 0;
  const validate = (who: Tenant, name: string, image: string) =>
    app
      .inject({
        method: "POST",
        url: `${API}/qr-code/validate`,
        headers: who.headers,
        payload: { code: image },
      })
      .then((res) => {
        if (res.statusCode !== 503) answered.push(name);
        else if (name === "A") refusedA++;
        return res;
      });
  // The thread is up before the flood: its start is not what is tested.
  assert.equal((await validate(b, "warm-up", code)).statusCode, 200);

  const flood = Promise.all(Array.from({ length: 40 }, () => validate(a, "A", slow)));
  await eventually(async () => refusedA > 0, 60_000, "A's share of the queue to fill");
  // B: six images, three at a time.
  const first = await Promise.all(Array.from({ length: 3 }, () => validate(b, "B", code)));
  const bAnswered = answered.length;
  const second = await Promise.all(Array.from({ length: 3 }, () => validate(b, "B", code)));
  const aAnswers = await flood;

  for (const res of [...first, ...second]) {
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((res.json() as { data: { irn: string } }).data.irn, invoice.irn);
  }
  const refused = aAnswers.filter((res) => res.statusCode === 503);
  assert.ok(refused.length >= 30, `A was refused ${refused.length} times of 40`);
  for (const res of refused) {
    const body = res.json() as Json & { error: Json };
    assert.equal(body.message, "Service temporarily unavailable");
    assert.match(
      String(body.error.details),
      /^the QR image decoder is busy: this business has 4 images waiting to be decoded and [01] being decoded \(at most 4 of one business's images wait their turn\); retry after the indicated delay$/,
    );
    assert.ok(Number(res.headers["retry-after"]) >= 1);
  }
  // A's images that were let in are answered (no code in them, or too slow to search): never a 5xx.
  for (const res of aAnswers.filter((answer) => answer.statusCode !== 503)) assert.equal(res.statusCode, 400);
  // B's first three came between A's, before the last of A's backlog.
  assert.ok(answered.slice(0, bAnswered).lastIndexOf("B") < answered.lastIndexOf("A"), answered.join(" "));
  const busy = lines.filter((line) => line.msg === "request refused: busy");
  assert.equal(busy.length, refused.length);
  assert.ok(busy.every((line) => line.level === 40));
  assert.deepEqual(
    lines.filter((line) => Number(line.level) >= 50),
    [],
  );
});

test("the decoding thread: an image whose client went away while it waited is never decoded", async (t) => {
  const reader = qrImageReader();
  t.after(() => reader.close());
  const code = parseImageDataUrl(
    dataUrl("image/png", await QRCode.toBuffer("hello", { errorCorrectionLevel: "H", width: 200 })),
  );
  const slow = parseImageDataUrl(dataUrl("image/png", finderGrid(3)));
  assert.ok(code && slow);
  assert.equal(await reader.read(code, { business: "A" }), "hello", "the thread is up");

  // Handled from the start: on a busy machine it may run past the time limit before it is awaited.
  const blocking = reader.read(slow, { business: "C" }).catch(() => undefined);
  const gone = new AbortController();
  const waiting = [
    reader.read(code, { business: "A", signal: gone.signal }),
    reader.read(code, { business: "A", signal: gone.signal }),
  ];
  const stays = reader.read(code, { business: "B" });
  gone.abort();
  for (const read of waiting) await assert.rejects(read, JobDropped);
  assert.equal(await stays, "hello");
  await blocking;
  const stats = reader.stats();
  assert.deepEqual([stats.dropped, stats.waiting], [2, 0]);
  // The warm-up, B's and (unless it ran past the time limit) C's: never A's two.
  assert.ok(stats.decoded === 2 || stats.decoded === 3, JSON.stringify(stats));
});
