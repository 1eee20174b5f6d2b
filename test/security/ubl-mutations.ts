/*
 * Mutations of a valid UBL document, as a careless ERP or a hostile client would send them: each one
 * is still within the parse bounds most of the time, so that it reaches the schema check and the
 * mapping, where an unexpected shape could otherwise throw. Deterministic for a seed.
 */

/** mulberry32: small, and the same sequence everywhere for a seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const int = (rand: Rand, n: number) => Math.floor(rand() * n);
const pick = <T>(rand: Rand, items: readonly T[]): T => items[int(rand, items.length)] as T;

/** Leaf elements whatever their prefix: name, attributes, text. */
const LEAF = /<((?:[\w.-]+:)?[A-Za-z]+)((?:\s[^>]*)?)>([^<]*)<\/\1>/g;
/** Elements that hold others: `cac:` ones under the usual prefixes, found by their name alone. */
const AGGREGATE =
  /<((?:[\w.-]+:)?(?:Invoice|CreditNote)?(?:Line|Party|TaxTotal|TaxSubtotal|TaxCategory|LegalMonetaryTotal|PaymentMeans|AllowanceCharge|Item|Price|PostalAddress|Contact|InvoicePeriod|BillingReference|Delivery|PaymentTerms|Country|AccountingSupplierParty|AccountingCustomerParty|PartyTaxScheme|PartyLegalEntity))(\s[^>]*)?>[\s\S]*?<\/\1>/g;
const NUMBER = /^-?\d+(?:\.\d+)?$/;

type Match = { start: number; end: number; name: string; attrs: string; text: string };

function matches(xml: string, re: RegExp): Match[] {
  return [...xml.matchAll(re)].map((m) => ({
    start: m.index,
    end: m.index + m[0].length,
    name: m[1] ?? "",
    attrs: m[2] ?? "",
    text: m[3] ?? "",
  }));
}

const splice = (xml: string, at: Match, by: string) => xml.slice(0, at.start) + by + xml.slice(at.end);
const leafWith = (m: Match, text: string) => `<${m.name}${m.attrs}>${text}</${m.name}>`;

/** Text as the bytes of its UTF-8, one character each: the mutants are worked on as bytes. */
const bytes = (text: string) => Buffer.from(text, "utf8").toString("latin1");

const HUGE = [
  "1e308",
  "1E400",
  "99999999999999999999999999999999.99",
  "9".repeat(400),
  `0.${"0".repeat(300)}1`,
  "NaN",
  "Infinity",
  "-0",
  "0x1F",
  "1,000.00",
  " 12.50 ",
  "12.5.0",
  "+7",
  "١٢٣",
].map(bytes);
const ODD_TEXT = [
  "",
  "   ",
  "&#x202E;evil&#x202C;",
  "&#128512;",
  "<![CDATA[<x>&amp;</x>]]>",
  "&#0;",
  "&#xD800;",
  "&unknown;",
  "2026-02-30",
  "99999-12-31",
  "a".repeat(50_000),
  "NG",
  "\u0000",
].map(bytes);
const UBL = "urn:oasis:names:specification:ubl:schema:xsd:";
/** A namespace and what it is swapped for: a version, the other document, the other library, none. */
const NAMESPACES = [
  [`${UBL}Invoice-2`, `${UBL}Invoice-3`],
  [`${UBL}Invoice-2`, `${UBL}CreditNote-2`],
  [`${UBL}CreditNote-2`, `${UBL}Invoice-2`],
  [`${UBL}CreditNote-2`, `${UBL}creditnote-2`],
  [`${UBL}CommonBasicComponents-2`, `${UBL}CommonAggregateComponents-2`],
  [`${UBL}CommonAggregateComponents-2`, "urn:example:other"],
  [`${UBL}CommonBasicComponents-2`, ""],
] as const;

/** One mutation of `xml`, named by what it did. */
const MUTATIONS: Record<string, (xml: string, rand: Rand) => string> = {
  truncate: (xml, rand) => xml.slice(0, int(rand, xml.length)),
  flipBytes: (xml, rand) => {
    const buf = Buffer.from(xml, "latin1");
    for (let i = 1 + int(rand, 6); i > 0; i--) buf[int(rand, buf.length)] = int(rand, 256);
    return buf.toString("latin1");
  },
  duplicate: (xml, rand) => {
    const all = [...matches(xml, LEAF), ...matches(xml, AGGREGATE)];
    const m = pick(rand, all);
    const copy = xml.slice(m.start, m.end);
    return xml.slice(0, m.end) + copy.repeat(1 + int(rand, 3)) + xml.slice(m.end);
  },
  remove: (xml, rand) => splice(xml, pick(rand, [...matches(xml, LEAF), ...matches(xml, AGGREGATE)]), ""),
  namespace: (xml, rand) => {
    const [from, to] = pick(
      rand,
      NAMESPACES.filter(([from]) => xml.includes(from)),
    );
    return xml.replaceAll(`"${from}"`, `"${to}"`).replaceAll(`'${from}'`, `'${to}'`);
  },
  hugeNumber: (xml, rand) => {
    const m = pick(
      rand,
      matches(xml, LEAF).filter((leaf) => NUMBER.test(leaf.text.trim())),
    );
    return splice(xml, m, leafWith(m, pick(rand, HUGE)));
  },
  negative: (xml, rand) => {
    const numbers = matches(xml, LEAF).filter((m) => NUMBER.test(m.text.trim()) && !m.text.includes("-"));
    const m = pick(rand, numbers);
    return splice(xml, m, leafWith(m, `-${m.text.trim()}`));
  },
  emptyElement: (xml, rand) => {
    const m = pick(rand, matches(xml, LEAF));
    return splice(xml, m, rand() < 0.5 ? `<${m.name}${m.attrs}/>` : leafWith(m, pick(rand, ODD_TEXT)));
  },
  oddText: (xml, rand) => {
    const m = pick(rand, matches(xml, LEAF));
    return splice(xml, m, leafWith(m, pick(rand, ODD_TEXT)));
  },
  reorder: (xml, rand) => {
    const all = matches(xml, AGGREGATE);
    const a = pick(rand, all);
    const b = pick(rand, all);
    if (a.end <= b.start || b.end <= a.start) {
      const [first, second] = a.start < b.start ? [a, b] : [b, a];
      return (
        xml.slice(0, first.start) +
        xml.slice(second.start, second.end) +
        xml.slice(first.end, second.start) +
        xml.slice(first.start, first.end) +
        xml.slice(second.end)
      );
    }
    // Nested: the inner one moved to the document's end, inside the root.
    const inner = a.start > b.start ? a : b;
    const rest = xml.slice(0, inner.start) + xml.slice(inner.end);
    const close = rest.lastIndexOf("</");
    return rest.slice(0, close) + xml.slice(inner.start, inner.end) + rest.slice(close);
  },
  // The root renamed and its namespace with it, its children left as they were: a CreditNote root
  // over InvoiceLines and an InvoiceTypeCode, or the other way round.
  otherRoot: (xml) => {
    const [from, to] = /<(?:[\w.-]+:)?Invoice\s/.test(xml)
      ? ["Invoice", "CreditNote"]
      : ["CreditNote", "Invoice"];
    return xml
      .replace(new RegExp(`<((?:[\\w.-]+:)?)${from}(\\s)`), `<$1${to}$2`)
      .replace(new RegExp(`</((?:[\\w.-]+:)?)${from}>(\\s*)$`), `</$1${to}>$2`)
      .replace(`schema:xsd:${from}-2`, `schema:xsd:${to}-2`);
  },
  wrongAttribute: (xml, rand) => {
    const m = pick(rand, matches(xml, LEAF));
    const attribute = pick(rand, [
      ' currencyID="XXX"',
      ' currencyID=""',
      ' unitCode="%%"',
      ' listID="HS" name=""',
      ` schemeID="${"s".repeat(4000)}"`,
      ' currencyID="NGN" currencyID="USD"',
    ]);
    return splice(xml, m, `<${m.name}${attribute}>${m.text}</${m.name}>`);
  },
};

const MUTATION_NAMES = Object.keys(MUTATIONS);

/**
 * `count` mutated documents from `bases`, each one to three mutations deep; the name says which, and
 * the seed and index replay it.
 */
export function* mutants(bases: readonly string[], count: number, seed: number) {
  const rand = random(seed);
  for (let i = 0; i < count; i++) {
    // Each kind first once on its own, then at random, sometimes stacked.
    const names =
      i < MUTATION_NAMES.length
        ? [MUTATION_NAMES[i] as string]
        : Array.from({ length: 1 + int(rand, rand() < 0.7 ? 1 : 3) }, () => pick(rand, MUTATION_NAMES));
    let xml = bytes(pick(rand, bases));
    for (const name of names) {
      try {
        xml = MUTATIONS[name]?.(xml, rand) ?? xml;
      } catch {
        // A kind with nothing to act on (no number left after a truncation): the document as it was.
      }
    }
    yield { name: `#${i} ${names.join("+")}`, body: Buffer.from(xml, "latin1") };
  }
}
