import assert from "node:assert/strict";
import { test } from "node:test";
import { printRefusal } from "../../../src/documents/pdf/bounds.ts";
import { PDF_THREAD_MEMORY_MB, PdfRendererBusy, pdfRenderer } from "../../../src/documents/pdf/pool.ts";
import type { InvoicePdfInput } from "../../../src/documents/pdf/render.ts";
import { invoicePdfs } from "../../../src/documents/pdf/service.ts";
import { DomainError } from "../../../src/errors.ts";
import { toErrorBody } from "../../../src/http/error-mapper.ts";
import { worstWait } from "../../threads/event-loop-wait.ts";
import { fullInvoice, longLines, manyLines, pdfInput, shortLines } from "./pdf-inputs.ts";

/** The PDFs of `renderer`, each input printed as an operator's (any business's) invoice. */
function operatorPdfs(renderer: Parameters<typeof invoicePdfs>[0]["renderer"], input: InvoicePdfInput) {
  const printable = async () => ({ input, revision: "TRANSMITTED" });
  return invoicePdfs({
    records: { printable, operatorPrintable: printable, printedRevision: async () => "TRANSMITTED" },
    renderer,
  });
}

test("the PDF thread renders what the event loop would, keeps the loop free, and refuses a queue past its bound", async (t) => {
  const renderer = pdfRenderer({ thread: true, maxQueue: 2 });
  t.after(() => renderer.close());
  const inPlace = pdfRenderer({ thread: false });
  const input = pdfInput(fullInvoice());
  // The same bytes as in place (the rendering is deterministic).
  assert.deepEqual(await renderer.render(input), await inPlace.render(input));

  // While a 300-line invoice renders on the thread, the event loop keeps ticking; in place, it stops
  // for the whole rendering. Compared with each other, so a busy machine slows both alike.
  const big = pdfInput(manyLines(300));
  await renderer.render(big);
  const onThread = await worstWait(() => renderer.render(big), 1);
  const onLoop = await worstWait(() => inPlace.render(big), 1);
  assert.ok(onLoop > 20, `in place the loop stopped for ${onLoop.toFixed(0)} ms`);
  assert.ok(
    onThread < onLoop / 2,
    `on the thread ${onThread.toFixed(0)} ms, in place ${onLoop.toFixed(0)} ms`,
  );

  // One rendering and two waiting: a third waiting one is refused, as a 503 with a delay.
  const busy = [renderer.render(big), renderer.render(big), renderer.render(big)];
  await assert.rejects(renderer.render(big), PdfRendererBusy);
  await Promise.all(busy);
  const printable = async () => ({ input: big, revision: "TRANSMITTED" });
  const pdfs = invoicePdfs({
    records: { printable, operatorPrintable: printable, printedRevision: async () => "TRANSMITTED" },
    renderer: {
      render: () =>
        Promise.reject(
          new PdfRendererBusy("this business has 4 PDFs waiting to be rendered and 1 being rendered", {
            waiting: 4,
            running: 1,
            reason: "share",
            retryAfter: 1,
          }),
        ),
    },
  });
  await assert.rejects(
    pdfs.operatorPdf("X"),
    (err) =>
      err instanceof DomainError &&
      err.code === "service_unavailable" &&
      err.retryAfter === 1 &&
      err.busy &&
      /4 PDFs waiting/.test(err.details),
  );
});

test("a rendering past its time limit fails, and the next one gets a thread of its own", async (t) => {
  const renderer = pdfRenderer({ thread: true, timeLimitMs: 1 });
  t.after(() => renderer.close());
  await assert.rejects(renderer.render(pdfInput(manyLines(300))), /no PDF within 1 ms/);
  // The stuck thread was terminated: the next rendering does not wait behind it, and fails the same way.
  await assert.rejects(renderer.render(pdfInput(fullInvoice())), /no PDF within 1 ms/);
  // In the API's terms: the machine is loaded, come back later; not a 500.
  await assert.rejects(operatorPdfs(renderer, pdfInput(fullInvoice())).operatorPdf("X"), (err) => {
    assert.ok(err instanceof DomainError, String(err));
    assert.equal(err.code, "service_unavailable");
    assert.equal(err.retryAfter, 5);
    assert.match(err.details, /not rendered within 1 ms/);
    return true;
  });
});

test("a rendering that outgrows the thread's memory fails as too large to print (422); its thread alone is replaced and the queue goes on", async (t) => {
  // A small limit, so that an invoice within the bounds outgrows it: the default is sized for the
  // largest. (At 128 MB the 3,000 lines fit once the thread no longer parsed every locale's
  // currency table as it started.)
  const renderer = pdfRenderer({ thread: true, maxMemoryMb: 64, timeLimitMs: 60_000 });
  t.after(() => renderer.close());
  const big = pdfInput(manyLines(3000));
  assert.equal(printRefusal(big.document), undefined, "within the bounds: it reaches the thread");
  const small = pdfInput(fullInvoice());
  await renderer.render(small);
  assert.equal(renderer.threadsStarted(), 1);

  const refused = operatorPdfs(renderer, big).operatorPdf("X");
  // Its invoice read (a promise away), the big PDF is with the thread: the small one waits behind it.
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(renderer.stats().running, 1);
  const behind = renderer.render(small);
  // In the API's terms: the invoice is too large to print, for good; not a 500.
  await assert.rejects(refused, (err) => {
    assert.ok(err instanceof DomainError, String(err));
    assert.equal(err.code, "too_large_to_print");
    assert.match(err.details, /more than the PDF thread's 64 MB of memory/);
    const body = toErrorBody(err, "invoice.pdf");
    assert.equal(body.code, 422);
    assert.equal(body.message, "Invoice too large to print");
    return true;
  });
  assert.equal((await behind).subarray(0, 5).toString(), "%PDF-", "the PDF queued behind it is rendered");
  assert.equal(renderer.threadsStarted(), 2, "on a new thread");
  assert.equal(renderer.stats().waiting + renderer.stats().running, 0, "nothing stuck in the queue");
});

test(`the largest invoices that print render within the thread's default ${PDF_THREAD_MEMORY_MB} MB`, {
  timeout: 180_000,
}, async (t) => {
  // A time limit of its own: on a loaded machine the default 10 s would measure the machine.
  const renderer = pdfRenderer({ thread: true, timeLimitMs: 120_000 });
  t.after(() => renderer.close());
  // The most lines (MAX_LINES, short), and the most characters (long lines, just under the bound).
  for (const document of [shortLines(10_000), longLines(1000)]) {
    assert.equal(printRefusal(document), undefined);
    const pdf = await renderer.render(pdfInput(document));
    assert.equal(pdf.subarray(0, 5).toString(), "%PDF-");
  }
  assert.equal(renderer.threadsStarted(), 1, "neither outgrew its thread");
  assert.match(printRefusal(shortLines(10_001)) ?? "", /10,001 invoice lines; .* at most 10,000/);
});
