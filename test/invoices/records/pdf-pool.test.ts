import assert from "node:assert/strict";
import { test } from "node:test";
import { DomainError } from "../../../src/errors.ts";
import { PdfRendererBusy, pdfRenderer } from "../../../src/invoices/records/pdf/pool.ts";
import { invoicePdfs } from "../../../src/invoices/records/pdf/service.ts";
import { fullInvoice, manyLines, pdfInput } from "./pdf-inputs.ts";

/** The longest the event loop went without running a 1 ms timer while `work` ran. */
async function longestGap(work: () => Promise<unknown>): Promise<number> {
  let longest = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  await new Promise((resolve) => setTimeout(resolve, 5));
  last = performance.now();
  await work();
  // The gap still open when the work ends counts too.
  longest = Math.max(longest, performance.now() - last);
  clearInterval(timer);
  return longest;
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
  const onThread = await longestGap(() => renderer.render(big));
  const onLoop = await longestGap(() => inPlace.render(big));
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
});
