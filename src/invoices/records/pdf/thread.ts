import { parentPort } from "node:worker_threads";
import { type InvoicePdfInput, renderInvoicePdf } from "./render.ts";

parentPort?.on("message", async ({ id, input }: { id: number; input: InvoicePdfInput }) => {
  // The time limit starts now: a thread just started takes a while (its loader, the fonts) to take its first PDF.
  parentPort?.postMessage({ started: id });
  try {
    const pdf = await renderInvoicePdf(input);
    const bytes = new Uint8Array(pdf.buffer, pdf.byteOffset, pdf.byteLength);
    parentPort?.postMessage({ id, pdf: bytes });
  } catch (err) {
    parentPort?.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
