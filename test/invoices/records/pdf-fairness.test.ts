import assert from "node:assert/strict";
import http from "node:http";
import { Writable } from "node:stream";
import { test } from "node:test";
import pino from "pino";
import { createServer } from "../../../src/main.ts";
import { build, ENGINE, eventually, type Json, listen, type Tenant, tenant } from "../../helpers.ts";
import { signInvoices } from "./pdf-load.ts";

const API = "/api/v1/einvoice";

type Answer = { statusCode: number; headers: Record<string, unknown>; body: string; rawPayload: Buffer };
type App = { inject(options: { url: string; headers: Record<string, string> }): Promise<Answer> };

const getPdf = (app: App, who: Tenant, irn: string) =>
  app.inject({ url: `${API}/${irn}.pdf`, headers: who.headers });

/** A logger whose lines the test reads. */
function captured() {
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
  return { lines, logger };
}

test(`PDFs on ${ENGINE}: while one business floods the PDF thread, another's PDFs are all served; the flood gets 503s naming its own backlog, logged at warn`, async (t) => {
  const { ctx } = await build(t);
  const { lines, logger } = captured();
  const app = await createServer(ctx, logger);
  t.after(() => app.close());
  const a = await tenant(ctx);
  const b = await tenant(ctx);
  // A's 16 invoices of 300 lines each (16 pages, ~80 ms a rendering on a quiet machine), B's three small ones.
  const heavy = await signInvoices(app, a, 16, 300);
  const small = await signInvoices(app, b, 3, 0);

  const served: string[] = [];
  let refusedA = 0;
  const fetch = (who: Tenant, name: string, irn: string) =>
    getPdf(app, who, irn).then((res) => {
      if (res.statusCode === 200) served.push(name);
      else if (name === "A") refusedA++;
      return res;
    });
  // A: 40 requests at once, over its 16 invoices.
  const flood = Promise.all(Array.from({ length: 40 }, (_, i) => fetch(a, "A", heavy[i % 16] as string)));
  // B comes once A's share of the queue is full: six requests at once, two for each of its invoices.
  await eventually(async () => refusedA > 0, 60_000, "A's share of the queue to fill");
  const bAnswers = await Promise.all(
    Array.from({ length: 6 }, (_, i) => fetch(b, "B", small[i % 3] as string)),
  );
  const aAnswers = await flood;

  const failures = () => JSON.stringify(lines.filter((line) => Number(line.level) >= 50)).slice(0, 2000);
  for (const res of bAnswers) {
    assert.equal(res.statusCode, 200, `${res.body} ${failures()}`);
    assert.equal(res.rawPayload.subarray(0, 5).toString(), "%PDF-");
  }
  const refused = aAnswers.filter((res) => res.statusCode === 503);
  assert.ok(refused.length >= 12, `A was refused ${refused.length} times of 40`);
  assert.equal(refused.length + aAnswers.filter((res) => res.statusCode === 200).length, 40);
  // Of A's invoices, those rendered: requests for one already being rendered waited for that rendering.
  const renderedA = new Set(aAnswers.flatMap((res, i) => (res.statusCode === 200 ? [heavy[i % 16]] : [])));
  for (const res of refused) {
    const body = JSON.parse(res.body) as Json & { error: Json };
    assert.equal(body.message, "Service temporarily unavailable");
    assert.match(
      String(body.error.details),
      /^the PDF renderer is busy: this business has 4 PDFs waiting to be rendered and [01] being rendered \(at most 4 of one business's PDFs wait their turn\); retry after the indicated delay$/,
    );
    assert.ok(Number(res.headers["retry-after"]) >= 1, String(res.headers["retry-after"]));
  }
  // B's turns came between A's, not after the whole of A's backlog.
  assert.ok(served.lastIndexOf("B") < served.lastIndexOf("A"), served.join(""));
  // Rendered: each of A's invoices that was let in, and B's three (its six requests shared three renderings).
  const stats = ctx.pdfs.stats();
  assert.equal(stats.rendered, renderedA.size + 3, JSON.stringify(stats));

  // Every refusal is one warn line, none an error.
  const busy = lines.filter((line) => line.msg === "request refused: busy");
  assert.equal(busy.length, refused.length);
  assert.ok(
    busy.every((line) => line.level === 40 && /this business has 4 PDFs waiting/.test(String(line.details))),
  );
  assert.deepEqual(
    lines.filter((line) => Number(line.level) >= 50),
    [],
  );
});

test(`PDFs on ${ENGINE}: the issue's flood, 40 requests at once of one 300-line invoice, is one rendering; served again from the cache until a payment changes the invoice`, async (t) => {
  const { app, ctx } = await build(t);
  const a = await tenant(ctx);
  const [irn = ""] = await signInvoices(app, a, 1, 300);
  const answers = await Promise.all(Array.from({ length: 40 }, () => getPdf(app, a, irn)));
  assert.deepEqual(new Set(answers.map((res) => res.statusCode)), new Set([200]));
  const first = answers[0]?.rawPayload as Buffer;
  assert.ok(answers.every((res) => res.rawPayload.equals(first)));
  assert.equal(ctx.pdfs.stats().rendered, 1);

  // Fetched again: from the cache, the same bytes.
  const again = await getPdf(app, a, irn);
  assert.equal(again.statusCode, 200);
  assert.ok(again.rawPayload.equals(first));
  assert.equal(ctx.pdfs.stats().rendered, 1);
  assert.ok(ctx.pdfs.stats().cache.hits >= 1);
  // The cache answers nobody else: another business's credential still finds no such invoice.
  const other = await tenant(ctx);
  assert.equal((await getPdf(app, other, irn)).statusCode, 404);

  // A payment changes the invoice's state: the next fetch renders it anew, and that one is kept.
  const paid = await app.inject({
    method: "PATCH",
    url: `${API}/update/${irn}`,
    headers: a.headers,
    payload: { payment_status: "PAID", reference: "TRF-1" },
  });
  assert.equal(paid.statusCode, 200, paid.body);
  assert.equal((await getPdf(app, a, irn)).statusCode, 200);
  assert.equal(ctx.pdfs.stats().rendered, 2);
  assert.equal((await getPdf(app, a, irn)).statusCode, 200);
  assert.equal(ctx.pdfs.stats().rendered, 2);
});

/** Polls `probe` every 2 ms (the state it waits for may last only a few hundred ms). */
async function until(probe: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** A GET on a socket of its own, which `abort` closes: what a client that gives up does. */
function abortable(url: string, who: Tenant) {
  const req = http.get(url, { headers: who.headers, agent: false });
  const answered = new Promise<number>((resolve) => {
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", () => resolve(0));
  });
  return { abort: () => req.destroy(), answered };
}

test(`PDFs on ${ENGINE}: requests whose client closed the connection while they waited are never rendered`, async (t) => {
  const { app, ctx, url } = await listen(t);
  const a = await tenant(ctx);
  const c = await tenant(ctx);
  // C's invoice of 800 lines keeps the thread busy for a while (43 pages, ~250 ms on a quiet machine):
  // A's four small PDFs wait behind it, and their clients give up.
  const [blocker = ""] = await signInvoices(app, c, 1, 800);
  const mine = await signInvoices(app, a, 4, 0);

  const blocking = getPdf(app, c, blocker);
  await until(() => ctx.pdfs.stats().running === 1, "C's PDF to be rendering");
  const clients = mine.map((irn) => abortable(`${url}${API}/${irn}.pdf`, a));
  await until(() => ctx.pdfs.stats().waiting === 4, "A's four PDFs to be waiting");
  assert.equal(ctx.pdfs.stats().running, 1, "C's PDF is still rendering");
  for (const client of clients) client.abort();
  await until(() => ctx.pdfs.stats().dropped === 4, "A's four PDFs to be dropped");
  assert.deepEqual(await Promise.all(clients.map((client) => client.answered)), [0, 0, 0, 0]);
  // C's PDF is rendered (or, on a machine so busy that it ran past the 10 s time limit, failed): A's never.
  const blocked = await blocking;
  assert.ok([200, 500].includes(blocked.statusCode), blocked.body.slice(0, 500));
  const renderedC = blocked.statusCode === 200 ? 1 : 0;
  const stats = ctx.pdfs.stats();
  assert.equal(stats.rendered, renderedC, `only C's PDF was rendered: ${JSON.stringify(stats)}`);
  assert.equal(stats.waiting, 0);

  // A client that stays gets its PDF.
  const res = await fetch(`${url}${API}/${mine[0]}.pdf`, { headers: a.headers });
  assert.equal(res.status, 200);
  assert.equal(ctx.pdfs.stats().rendered, renderedC + 1);
});
