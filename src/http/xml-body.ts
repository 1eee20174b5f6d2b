import { errorCodes, type FastifyInstance } from "fastify";
import { DomainError } from "../errors.ts";

/**
 * XML bodies (`application/xml`, `text/xml`, `application/…+xml`, with or without parameters) kept
 * as the bytes that came: the UBL reader measures and parses them itself (documents/ubl/xml.ts),
 * under its own bounds. Added only in the plugins whose routes read UBL, and taken only by the routes
 * that say they consume XML; elsewhere an XML body stays a 415.
 */
export function acceptXmlBodies(app: FastifyInstance): void {
  // Fastify matches the type as it normalizes it, parameters included: `application/xml; charset="utf-8"`.
  app.addContentTypeParser(
    /^(?:application|text)\/(?:[\w.-]+\+)?xml(?:;|$)/,
    { parseAs: "buffer" },
    (request, body, done) => {
      const type = request.headers["content-type"] ?? "";
      // The plugin's other routes would check the bytes as their JSON object (a Buffer is an object
      // to the schema) and answer that its first field is missing, instead of what is wrong.
      const consumes = (request.routeOptions.schema as { consumes?: string[] } | undefined)?.consumes;
      if (!consumes?.some((consumed) => consumed.endsWith("xml"))) {
        done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(type), undefined);
        return;
      }
      // A charset parameter overrides the XML declaration (RFC 7303): the reader takes UTF-8 only.
      const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(type)?.[1];
      if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
        const details = `Content-Type '${type}' says charset=${charset}: XML is accepted in UTF-8 only`;
        done(
          new DomainError("unsupported_media_type", { message: "Unsupported media type", details }),
          undefined,
        );
        return;
      }
      done(null, body);
    },
  );
}

/** A UBL document as an answer: XML, named after its IRN, for the client to keep or file. */
export function sendXml(reply: import("fastify").FastifyReply, irn: string, xml: string) {
  return reply
    .type("application/xml; charset=utf-8")
    .header("content-disposition", `inline; filename="${irn.replace(/[^A-Za-z0-9._-]/g, "_")}.xml"`)
    .send(xml);
}
