import { lineAt, parseXml, UBL_NAMESPACES, XML_BOUNDS } from "./xml.ts";

/*
 * The first documents a process parses run through unoptimised code: cold, a refused flood of 200,000
 * elements took 35 to 60 ms, warm 5 to 7, and the first MiB libxml2 parsed took 100 ms (its heap
 * grows, its code is compiled), later ones 15. V8 also drops optimised code at the first document
 * that takes a path it has not seen, so the warm-up takes them all: every refusal, and a document
 * near the bounds that libxml2 parses.
 */

const UBL = "urn:oasis:names:specification:ubl:schema:xsd";
const ROOT = `<Invoice xmlns="${UBL_NAMESPACES.Invoice}" xmlns:cac="${UBL}:CommonAggregateComponents-2" xmlns:cbc="${UBL}:CommonBasicComponents-2">`;
const invoice = (content: string) => `<?xml version="1.0" encoding="UTF-8"?>\n${ROOT}${content}</Invoice>`;

export function warmUpDocuments(): (string | Buffer)[] {
  const line =
    '<cac:InvoiceLine><cbc:ID schemeID="0088">1</cbc:ID><!-- a line --><?generator x?>' +
    "<cbc:Note><![CDATA[a < b]]> &amp; &#x263A; b</cbc:Note></cac:InvoiceLine>\n";
  const declarations = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) => ` xmlns:p${from + i}="urn:x:${from + i}"`).join("");
  return [
    invoice(line.repeat(Math.floor((XML_BOUNDS.bytes - 1024) / line.length))),
    invoice(`<cbc:Note>${"<x>".repeat(XML_BOUNDS.depth)}${"</x>".repeat(XML_BOUNDS.depth)}</cbc:Note>`),
    invoice("<a/>".repeat(XML_BOUNDS.elements)),
    invoice("<!--c-->".repeat(XML_BOUNDS.markup + 1)),
    invoice(`<a${' b=""'.repeat(XML_BOUNDS.attributes + 1)}/>`),
    invoice(`<a b="${"x".repeat(XML_BOUNDS.attributeBytes + 1)}"/>`),
    invoice(`<a>${"x".repeat(XML_BOUNDS.textBytes + 1)}</a>`),
    invoice(`<a${declarations(0, XML_BOUNDS.namespaces + 1)}/>`),
    invoice(`<a xmlns:p="urn:x"/>`.repeat(XML_BOUNDS.namespaceDeclarations + 1)),
    `<!DOCTYPE Invoice []>${invoice("")}`,
    invoice("<cbc:Note>cut").slice(0, -5),
    `<CrossIndustryInvoice xmlns="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"/>`,
    '<?xml version="1.0" encoding="ISO-8859-1"?><Invoice/>',
    Buffer.from([0x3c, 0x61, 0x3e, 0xe9, 0x3c, 0x2f, 0x61, 0x3e]),
    Buffer.from("\ufeff<a/>", "utf16le"),
  ];
}

/** Call once at start-up, before the first request: takes 0.3 to 0.5 s. */
export function warmUpXml(): void {
  const all = warmUpDocuments();
  for (let run = 0; run < 3; run++) {
    for (const body of all) {
      const parsed = parseXml(body);
      if (parsed.ok) parsed.doc.dispose();
    }
    const first = all[0] ?? "";
    lineAt(Buffer.from(first), first.length);
  }
  const [accepted] = all;
  const parsed = parseXml(accepted ?? "");
  if (!parsed.ok) throw new Error(`the warm-up invoice was refused: ${parsed.refusal.message}`);
  parsed.doc.dispose();
}
