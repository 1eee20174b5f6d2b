import type { FastifyInstance } from "fastify";

/**
 * XML bodies (`application/xml`, `text/xml`, `application/…+xml`) kept as the bytes that came: the
 * UBL reader measures and parses them itself (documents/ubl/xml.ts), under its own bounds. Added
 * only in the plugins whose routes read UBL; elsewhere an XML body stays a 415.
 */
export function acceptXmlBodies(app: FastifyInstance): void {
  app.addContentTypeParser(
    /^(?:application|text)\/(?:[\w.-]+\+)?xml$/,
    { parseAs: "buffer" },
    (_request, body, done) => done(null, body),
  );
}

/** A UBL document as an answer: XML, named after its IRN, for the client to keep or file. */
export function sendXml(reply: import("fastify").FastifyReply, irn: string, xml: string) {
  return reply
    .type("application/xml; charset=utf-8")
    .header("content-disposition", `inline; filename="${irn.replace(/[^A-Za-z0-9._-]/g, "_")}.xml"`)
    .send(xml);
}
