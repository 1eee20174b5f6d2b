import type { Principal } from "../businesses/business-service.ts";
import type { UblIn, UblReader } from "../documents/ubl/ubl-in.ts";
import { writeUbl } from "../documents/ubl/write.ts";
import { DomainError, type Violation } from "../errors.ts";
import { action } from "../http/envelope.ts";
import { Action, responses, xmlResponses } from "../http/openapi.ts";
import { sendXml } from "../http/xml-body.ts";
import {
  type InvoiceApp as App,
  BY_IRN,
  Converted,
  IrnParams,
  PREFIX,
  UblQuery,
} from "./invoice-route-schemas.ts";
import type { InvoiceQueries } from "./records/invoice-queries.ts";

/*
 * The invoice routes' UBL 2.1 edge: a UBL body read into this API's document before registering it,
 * the conversion on its own, and a signed invoice written as UBL.
 */

export type Registered = { warnings: Violation[]; warningsBeyond: number };

/**
 * The registration `work` on the request's document. A UBL body is read into this API's document
 * first; its findings then name the UBL element beside the field, and what it did not carry is
 * listed with the warnings.
 */
export async function registered<R extends Registered>(
  ubl: UblReader,
  request: { principal: Principal; body: unknown; query: { irn?: string | undefined } },
  work: (document: unknown) => Promise<R>,
): Promise<R> {
  if (!Buffer.isBuffer(request.body)) return work(request.body);
  const read: UblIn = await ubl.read(request.principal, request.body, request.query.irn);
  try {
    const done = await work(read.document);
    return { ...done, warnings: [...read.locate(done.warnings), ...read.warnings] };
  } catch (err) {
    throw read.locateError(err);
  }
}

/** UBL 2.1 both ways: what a document would be once read, and a signed invoice written as UBL. */
export function ublRoutes(app: App, ubl: UblReader, records: Pick<InvoiceQueries, "record">): void {
  app.post(
    `${PREFIX}/ubl/convert`,
    {
      schema: {
        summary:
          "Read a UBL 2.1 Invoice or CreditNote into this API's document, without validating or signing it",
        tags: ["invoices"],
        consumes: ["application/xml"],
        querystring: UblQuery,
        response: responses(
          Action(Converted, "Invoice converted successfully"),
          "the document that would be signed",
          // It reads UBL only: a JSON body is a 415 (newman found it answered, undocumented).
          [400, 401, 413, 415, 429, 503],
        ),
      },
      config: { handler: "invoice.ubl_convert", failureMessage: "Failed to convert invoice" },
    },
    async (request) => {
      if (!Buffer.isBuffer(request.body)) {
        throw new DomainError("unsupported_media_type", {
          message: "Unsupported media type",
          details: "send a UBL 2.1 Invoice or CreditNote with Content-Type application/xml",
        });
      }
      const read = await ubl.read(request.principal, request.body, request.query.irn);
      return action("Invoice converted successfully", {
        document: read.document,
        not_carried: read.warnings.map((w) => ({ xpath: w.xpath ?? "", message: w.message })),
      });
    },
  );

  app.get(
    `${PREFIX}/:irn.xml`,
    {
      schema: {
        summary:
          "The signed invoice as a UBL 2.1 Invoice or CreditNote (EN 16931), with its IRN, QR payload and signature as document references",
        tags: ["invoices"],
        params: IrnParams,
        response: xmlResponses("the invoice, application/xml", [...BY_IRN]),
      },
      config: { handler: "invoice.ubl", failureMessage: "Failed to fetch invoice" },
    },
    async (request, reply) => {
      const record = await records.record(request.principal, request.params.irn);
      return sendXml(reply, record.irn, writeUbl(record));
    },
  );
}
