import { parentPort } from "node:worker_threads";
import { type InvoicePdfInput, renderInvoicePdf } from "./render.ts";

parentPort?.on("message", async ({ id, input }: { id: number; input: InvoicePdfInput }) => {
  try {
    const pdf = await renderInvoicePdf(input);
    const bytes = new Uint8Array(pdf.buffer, pdf.byteOffset, pdf.byteLength);
    parentPort?.postMessage({ id, pdf: bytes });
  } catch (err) {
    parentPort?.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
