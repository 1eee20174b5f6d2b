import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { InvoicePdfs, ReceivedDocuments } from "../documents/pdf/service.ts";
import { receivedUbl } from "../documents/ubl/write.ts";
import { clientGone } from "../http/client-gone.ts";
import { sendPdf } from "../http/envelope.ts";
import { errorResponses, pdfResponses, xmlResponses } from "../http/openapi.ts";
import { sendXml } from "../http/xml-body.ts";
import { InboxIrnParams } from "./inbox-route-schemas.ts";

const PREFIX = "/api/v1/einvoice/inbox";
const BY_IRN = [400, 401, 404, 429, 503];

/** A received document is whatever the supplier sent: one too large to print is refused before rendering. */
const TOO_LARGE = {
  ...errorResponses([422])[422],
  description:
    "the received invoice is too large to print (more lines, or more characters of JSON, than a signed invoice may have, or its rendering outgrew the PDF thread's memory); `error.details` gives its count and the bound. Its document is served whole by `GET /api/v1/einvoice/inbox/{irn}`",
};

/**
 * A received invoice's PDF: the same A4 layout as a signed invoice's, from the document as received,
 * without this service's QR codes and signature (it did not sign it). A business prints only its
 * own: another's IRN is not found.
 */
export function inboxPdfRoutes(deps: {
  inbox: ReceivedDocuments;
  pdfs: Pick<InvoicePdfs, "receivedPdf">;
}): FastifyPluginAsyncTypebox {
  const { inbox, pdfs } = deps;
  return async (app) => {
    app.get(
      `${PREFIX}/:irn.pdf`,
      {
        schema: {
          summary:
            "A received invoice as an A4 PDF: the supplier's document as received, where it came from and its status",
          tags: ["inbox"],
          params: InboxIrnParams,
          response: { ...pdfResponses("the received invoice, application/pdf", BY_IRN), 422: TOO_LARGE },
        },
        config: { handler: "inbox.pdf", failureMessage: "Failed to fetch invoice" },
      },
      async (request, reply) => {
        // A PDF whose client has gone is not rendered.
        const pdf = await pdfs.receivedPdf(request.principal, request.params.irn, inbox, clientGone(reply));
        return sendPdf(reply, request.params.irn, pdf);
      },
    );

    app.get(
      `${PREFIX}/:irn.xml`,
      {
        schema: {
          summary:
            "A received invoice as a UBL 2.1 Invoice or CreditNote: the supplier's document as received, by the same mapping as a signed invoice's",
          tags: ["inbox"],
          params: InboxIrnParams,
          response: xmlResponses("the received invoice, application/xml", [...BY_IRN, 422]),
        },
        config: { handler: "inbox.ubl", failureMessage: "Failed to fetch invoice" },
      },
      async (request, reply) => {
        const found = await inbox.document(request.principal, request.params.irn);
        return sendXml(reply, found.row.irn, receivedUbl(found));
      },
    );
  };
}
