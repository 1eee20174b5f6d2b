import PDFDocument from "pdfkit";
import { adjustments, footers, header, lines, payment, totals } from "./blocks.ts";
import { registerFonts } from "./fonts.ts";
import type { Flow } from "./layout.ts";
import { invoiceView, type PdfInput } from "./view.ts";

export type { InvoicePdfInput, PdfInput, ReceivedPdfInput } from "./view.ts";

/**
 * The invoice as the buyer receives it: one A4 PDF with the parties, the lines (over as many pages
 * as they take, the table's header on each), the tax and totals, how to pay, both QR codes, and on
 * every page the signature's key id and hash. The same input gives the same bytes: the file's dates
 * and id come from the signing time. A received invoice is printed the same way from the document as
 * received, without this service's codes and signature (it did not sign it), saying where it came from.
 */
export async function renderInvoicePdf(input: PdfInput): Promise<Buffer> {
  const view = invoiceView(input);
  const doc = new PDFDocument({
    size: "A4",
    // The layout places every block itself; pdfkit's margins at 0 keep it from breaking pages on its own.
    margin: 0,
    bufferPages: true,
    info: {
      Title: `${view.title} ${view.number}`.trim(),
      Subject: view.irn ? `IRN ${view.irn}` : view.title,
      CreationDate: view.signedAt,
      ModDate: view.signedAt,
    },
  });
  const chunks: Buffer[] = [];
  doc.on("data", (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });
  registerFonts(doc);
  const flow: Flow = {
    doc,
    y: 0,
    continuation: [`${view.title} ${view.number}`, view.irn && `IRN ${view.irn}`, "continued"]
      .filter(Boolean)
      .join("  ·  "),
    onNewPage: null,
  };
  header(flow, view);
  lines(flow, view);
  adjustments(flow, view);
  totals(flow, view);
  payment(flow, view);
  footers(doc, view);
  doc.end();
  return done;
}
