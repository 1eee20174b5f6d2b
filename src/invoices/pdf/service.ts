import type { Principal } from "../../businesses/service.ts";
import { DomainError } from "../../errors.ts";
import type { InvoiceQueries } from "../queries.ts";
import { type PdfRenderer, PdfRendererBusy } from "./pool.ts";

/** The buyer's PDF of an invoice: same tenant rules as `GET {IRN}`, rendered off the event loop. */
export function invoicePdfs(deps: {
  records: Pick<InvoiceQueries, "printable" | "operatorPrintable">;
  renderer: Pick<PdfRenderer, "render">;
}) {
  const { records, renderer } = deps;

  async function render(input: Awaited<ReturnType<InvoiceQueries["printable"]>>): Promise<Buffer> {
    try {
      return await renderer.render(input);
    } catch (err) {
      if (err instanceof PdfRendererBusy) {
        throw new DomainError("service_unavailable", {
          message: "Service temporarily unavailable",
          details: `the PDF renderer is busy (${err.message}); retry after the indicated delay`,
          retryAfter: 1,
        });
      }
      throw err;
    }
  }

  return {
    pdf: async (principal: Principal, irn: string) => render(await records.printable(principal, irn)),
    /** Any business's invoice, for the operator (the CLI). */
    operatorPdf: async (irn: string) => render(await records.operatorPrintable(irn)),
  };
}

export type InvoicePdfs = ReturnType<typeof invoicePdfs>;
