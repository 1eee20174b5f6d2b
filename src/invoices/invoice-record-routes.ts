import { Type } from "typebox";
import type { InvoicePdfs } from "../documents/pdf/service.ts";
import { clientGone } from "../http/client-gone.ts";
import { action, sendPdf } from "../http/envelope.ts";
import { EXAMPLES } from "../http/examples.ts";
import { Action, Empty, pdfResponses, responses } from "../http/openapi.ts";
import {
  type InvoiceApp as App,
  BY_IRN,
  FullRecord,
  IrnParams,
  Lookup,
  Payment,
  PREFIX,
  Status,
  UpdateBody,
} from "./invoice-route-schemas.ts";
import type { PaymentService } from "./payments/payment-service.ts";
import type { InvoiceQueries } from "./records/invoice-queries.ts";
import type { InvoiceTransmits } from "./transmits.ts";

/*
 * The invoice routes after the sign, by IRN: transmission, the views of the record, payments, and
 * the buyer's PDF.
 */

/** What comes after the sign: transmission, the views of the record, payments. */
export function recordRoutes(
  app: App,
  deps: {
    transmits: Pick<InvoiceTransmits, "transmit">;
    records: Pick<InvoiceQueries, "lookup" | "simple" | "record">;
    payments: PaymentService;
  },
): void {
  const { payments } = deps;
  app.get(
    `${PREFIX}/transmit/:irn`,
    {
      schema: {
        summary: "Transmit a signed invoice to the tax authority",
        tags: ["invoices"],
        params: IrnParams,
        response: responses(
          Action(Empty, "Invoice transmitted successfully"),
          "confirmed by the authority",
          BY_IRN,
        ),
      },
      config: { handler: "invoice.transmit", failureMessage: "Failed to transmit invoice" },
    },
    async (request) => {
      await deps.transmits.transmit(request.principal, request.params.irn);
      return action("Invoice transmitted successfully", []);
    },
  );

  app.get(
    `${PREFIX}/lookup/:irn`,
    {
      schema: {
        summary: "Look up an invoice's fiscalization status",
        tags: ["invoices"],
        params: IrnParams,
        response: responses(Action(Lookup, "Lookup completed"), "where the invoice stands", BY_IRN),
      },
      config: { handler: "invoice.lookup", failureMessage: "Failed to look up invoice" },
    },
    async (request) =>
      action("Lookup completed", await deps.records.lookup(request.principal, request.params.irn)),
  );

  app.get(
    `${PREFIX}/:irn/simple`,
    {
      schema: {
        summary: "The invoice as submitted, with its status",
        tags: ["invoices"],
        params: IrnParams,
        response: responses(
          Action(
            Type.Object(
              { status: Status, payment_status: Payment },
              {
                additionalProperties: true,
                description: "the document's fields, then status and payment_status",
              },
            ),
            "Invoice fetched successfully",
          ),
          "the invoice",
          BY_IRN,
        ),
      },
      config: { handler: "invoice.simple", failureMessage: "Failed to fetch invoice" },
    },
    async (request) =>
      action(
        "Invoice fetched successfully",
        await deps.records.simple(request.principal, request.params.irn),
      ),
  );

  app.get(
    `${PREFIX}/:irn`,
    {
      schema: {
        summary: "The invoice's full record: document, signature, QR code and history",
        tags: ["invoices"],
        params: IrnParams,
        response: responses(Action(FullRecord, "Invoice fetched successfully"), "the full record", BY_IRN),
      },
      config: { handler: "invoice.fetch", failureMessage: "Failed to fetch invoice" },
    },
    async (request) =>
      action(
        "Invoice fetched successfully",
        await deps.records.record(request.principal, request.params.irn),
      ),
  );

  app.patch(
    `${PREFIX}/update/:irn`,
    {
      schema: {
        summary:
          "Update an invoice's payment status: PENDING to PARTIAL (a payment, repeatable), PAID or REJECTED",
        tags: ["invoices"],
        params: IrnParams,
        body: { ...UpdateBody, examples: [EXAMPLES.partialPayment, EXAMPLES.fullPayment] },
        response: responses(Action(Empty, "Invoice updated successfully"), "updated", BY_IRN),
      },
      config: { handler: "invoice.update", failureMessage: "Failed to update invoice" },
    },
    async (request) => {
      await payments.update(request.principal, request.params.irn, request.body);
      return action("Invoice updated successfully", []);
    },
  );
}

/** The buyer's PDF: a document, not a JSON answer. */
export function pdfRoute(app: App, pdfs: Pick<InvoicePdfs, "pdf">): void {
  app.get(
    `${PREFIX}/:irn.pdf`,
    {
      schema: {
        summary:
          "The invoice as the buyer sees it: an A4 PDF with its lines, totals, the platform QR code and the verification QR code",
        tags: ["invoices"],
        params: IrnParams,
        response: pdfResponses("the invoice, application/pdf", BY_IRN),
      },
      config: { handler: "invoice.pdf", failureMessage: "Failed to fetch invoice" },
    },
    async (request, reply) => {
      // A PDF whose client has gone is not rendered.
      const pdf = await pdfs.pdf(request.principal, request.params.irn, clientGone(reply));
      return sendPdf(reply, request.params.irn, pdf);
    },
  );
}
