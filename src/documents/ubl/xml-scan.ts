/*
 * XML bytes measured before libxml2 sees them. libxml2-wasm offers no SAX or reader interface, only a
 * whole-tree parse, and what that parse costs grows with the markup, not the length: 1 MiB of `<a/>`
 * is 260,000 elements, 100,000 namespace declarations on one element take libxml2 about 100 ms, and a
 * walk of the built tree through the library's node objects costs 5 µs an element. So the bounds are
 * measured here, in one pass over the bytes, and libxml2 gets only documents within them. The pass
 * searches the first bytes by hand and only then calls Buffer#indexOf: a call into the engine costs
 * more than the few bytes markup usually has to skip, but far less than a long text searched by hand.
 *
 * The pass knows just enough XML to find where each piece of markup starts and ends. On a well-formed
 * document it sees what libxml2 will see; where the bytes stop making sense it stops and leaves the
 * verdict to libxml2, which parses in order and fails at that point at the latest, so it never builds
 * more than was measured.
 */

export const CBC_NAMESPACE = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2";

export type ScanBounds = {
  depth: number;
  elements: number;
  markup: number;
  attributes: number;
  attributeBytes: number;
  textBytes: number;
  namespaces: number;
  namespaceDeclarations: number;
};

export type ScanRule =
  | "doctype"
  | "depth"
  | "elements"
  | "markup"
  | "attributes"
  | "attribute_length"
  | "text_length"
  | "namespaces";

/** A bound broken at byte `at`, inside the elements of `path` (their names as written), if any. */
export type Breach = { rule: ScanRule; message: string; at: number; path?: string };

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const BANG = 0x21;
const QUESTION = 0x3f;
const EQUALS = 0x3d;
const COLON = 0x3a;
/** 100000 as "100,000", without toLocaleString: its first call loads ICU data for 25 ms. */
const count = (n: number) => String(n).replace(/\B(?=(\d{3})+$)/g, ",");

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d;

/** Searched by hand up to here; further on the engine's search, which is fast once called. */
const NEAR = 32;

function find(buf: Buffer, byte: number, from: number): number {
  const near = Math.min(from + NEAR, buf.length);
  for (let i = from; i < near; i++) if (buf[i] === byte) return i;
  return near < buf.length ? buf.indexOf(byte, near) : -1;
}

/** Where `end` (two or three bytes, distinct first byte) starts, from `from` on. */
function findEnd(buf: Buffer, end: string, from: number): number {
  const first = end.charCodeAt(0);
  for (let i = find(buf, first, from); i >= 0; i = find(buf, first, i + 1)) {
    if (startsWith(buf, i, end)) return i;
  }
  return -1;
}

function startsWith(buf: Buffer, at: number, prefix: string): boolean {
  for (let i = 0; i < prefix.length; i++) if (buf[at + i] !== prefix.charCodeAt(i)) return false;
  return true;
}

/** A namespace declaration's value, its references decoded. */
function decodeReferences(value: string): string {
  const named: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
  return value.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (whole, ref: string) => {
    if (ref[0] !== "#") return named[ref] ?? whole;
    const code = ref[1] === "x" ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/** Where a piece of markup ends: the byte after it, a breach, or MALFORMED. */
type Step = number | Breach;
const MALFORMED = -1;

/*
 * One pass over one document. A class, not closures: closures made anew for each document are new
 * call targets each time, and V8 threw away the optimised scan at every document for it.
 */
class Scan {
  // The open elements' names, as byte ranges: decoded only to report a breach.
  private readonly nameStarts: number[] = [];
  private readonly nameEnds: number[] = [];
  /** The namespace declarations in scope, as byte ranges: decoded only for a long text. */
  private readonly scope: {
    nameStart: number;
    nameEnd: number;
    valueStart: number;
    valueEnd: number;
    depth: number;
  }[] = [];
  // Some writers declare the namespace again on every element: only distinct ones are counted.
  private readonly distinct = new Set<string>();
  private elements = 0;
  private declarations = 0;
  private markup = 0;

  constructor(
    private readonly buf: Buffer,
    private readonly start: number,
    private readonly bounds: ScanBounds,
  ) {}

  run(): Breach | undefined {
    const buf = this.buf;
    let pos = this.start;
    while (pos < buf.length) {
      const lt = find(buf, LT, pos);
      const tooLong = this.textBreach(pos, lt < 0 ? buf.length : lt);
      if (tooLong) return tooLong;
      if (lt < 0) return undefined;
      const next = buf[lt + 1];
      const step =
        next === BANG || next === QUESTION
          ? this.special(lt)
          : next === SLASH
            ? this.endTag(lt)
            : this.startTag(lt);
      if (typeof step !== "number") return step;
      if (step === MALFORMED) return undefined;
      pos = step;
    }
    return undefined;
  }

  private breach(rule: ScanRule, message: string, at: number): Breach {
    if (this.nameStarts.length === 0) return { rule, message, at };
    const names = this.nameStarts.map((s, i) => this.buf.toString("utf8", s, this.nameEnds[i]));
    return { rule, message, at, path: `/${names.join("/")}` };
  }

  /** Base64 attachments are the one text an invoice may legitimately carry at length. */
  private inAttachment(): boolean {
    const depth = this.nameStarts.length;
    const name = this.buf.toString("utf8", this.nameStarts[depth - 1], this.nameEnds[depth - 1]);
    const colon = name.indexOf(":");
    if (name.slice(colon + 1) !== "EmbeddedDocumentBinaryObject") return false;
    const prefix = colon < 0 ? "" : name.slice(0, colon);
    for (let i = this.scope.length - 1; i >= 0; i--) {
      const declaration = this.scope[i];
      if (!declaration) continue;
      const { nameStart, nameEnd, valueStart, valueEnd } = declaration;
      const declared = nameEnd === nameStart + 5 ? "" : this.buf.toString("utf8", nameStart + 6, nameEnd);
      if (declared !== prefix) continue;
      return decodeReferences(this.buf.toString("utf8", valueStart, valueEnd)) === CBC_NAMESPACE;
    }
    return false;
  }

  private textBreach(from: number, to: number): Breach | undefined {
    const { textBytes } = this.bounds;
    if (to - from <= textBytes || this.nameStarts.length === 0 || this.inAttachment()) return undefined;
    return this.breach(
      "text_length",
      `a text of ${count(to - from)} bytes: at most ${count(textBytes)}`,
      from,
    );
  }

  /** A comment, processing instruction, CDATA section or DOCTYPE at `lt`. */
  private special(lt: number): Step {
    const buf = this.buf;
    let end: number;
    if (buf[lt + 1] === QUESTION) end = findEnd(buf, "?>", lt + 2);
    else if (startsWith(buf, lt, "<!--")) end = findEnd(buf, "-->", lt + 4);
    else if (startsWith(buf, lt, "<![CDATA[")) {
      end = findEnd(buf, "]]>", lt + 9);
      const tooLong = end >= 0 ? this.textBreach(lt + 9, end) : undefined;
      if (tooLong) return tooLong;
    } else if (startsWith(buf, lt, "<!DOCTYPE")) {
      return this.breach("doctype", "a document type declaration (DOCTYPE) is not accepted", lt);
    } else return MALFORMED;
    if (end < 0) return MALFORMED;
    // At the very start, `<?xml ...?>` is the XML declaration, not a processing instruction.
    if (lt !== this.start && ++this.markup > this.bounds.markup) {
      const what = "comments, processing instructions and CDATA sections";
      return this.breach("markup", `more than ${count(this.bounds.markup)} ${what}`, lt);
    }
    return find(buf, GT, end) + 1;
  }

  private endTag(lt: number): Step {
    const end = find(this.buf, GT, lt + 2);
    if (end < 0) return MALFORMED;
    this.close();
    return end + 1;
  }

  private close(): void {
    const depth = this.nameStarts.length;
    while (this.scope.length > 0 && this.scope[this.scope.length - 1]?.depth === depth) this.scope.pop();
    this.nameStarts.pop();
    this.nameEnds.pop();
  }

  /** A start tag: its name, then attributes up to `>` or `/>`. */
  private startTag(lt: number): Step {
    const { buf, bounds } = this;
    let i = lt + 1;
    while (i < buf.length && !isSpace(buf[i]) && buf[i] !== GT && buf[i] !== SLASH) i++;
    if (i === lt + 1) return MALFORMED;
    this.nameStarts.push(lt + 1);
    this.nameEnds.push(i);
    const depth = this.nameStarts.length;
    if (depth > bounds.depth)
      return this.breach("depth", `elements nested deeper than ${bounds.depth} levels`, lt);
    if (++this.elements > bounds.elements)
      return this.breach("elements", `more than ${count(bounds.elements)} elements`, lt);
    let attributes = 0;
    // Every index is checked against the end before it is read: a read past a Buffer's end is no
    // fault in JavaScript, but V8 drops the scan's optimised code at the first one (a document cut
    // inside a start tag), and the next flood takes six times as long.
    for (;;) {
      while (i < buf.length && isSpace(buf[i])) i++;
      if (i >= buf.length) return MALFORMED;
      if (buf[i] === GT || buf[i] === SLASH) break;
      const nameStart = i;
      while (i < buf.length && !isSpace(buf[i]) && buf[i] !== EQUALS && buf[i] !== GT && buf[i] !== SLASH)
        i++;
      const nameEnd = i;
      while (i < buf.length && isSpace(buf[i])) i++;
      if (nameEnd === nameStart || i >= buf.length || buf[i] !== EQUALS) return MALFORMED;
      i++;
      while (i < buf.length && isSpace(buf[i])) i++;
      if (i >= buf.length) return MALFORMED;
      const quote = buf[i];
      if (quote !== 0x22 && quote !== 0x27) return MALFORMED;
      const valueEnd = find(buf, quote, i + 1);
      if (valueEnd < 0) return MALFORMED;
      const length = valueEnd - i - 1;
      if (length > bounds.attributeBytes) {
        const limit = count(bounds.attributeBytes);
        return this.breach(
          "attribute_length",
          `an attribute value of ${count(length)} bytes: at most ${limit}`,
          nameStart,
        );
      }
      const isDeclaration =
        startsWith(buf, nameStart, "xmlns") && (nameEnd === nameStart + 5 || buf[nameStart + 5] === COLON);
      if (isDeclaration) {
        const breach = this.declare(nameStart, nameEnd, i + 1, valueEnd);
        if (breach) return breach;
      } else if (++attributes > bounds.attributes) {
        return this.breach(
          "attributes",
          `more than ${bounds.attributes} attributes on one element`,
          nameStart,
        );
      }
      i = valueEnd + 1;
    }
    const empty = buf[i] === SLASH;
    const end = find(buf, GT, i);
    if (end < 0) return MALFORMED;
    if (empty) this.close();
    return end + 1;
  }

  /** A namespace declaration of the element being opened, its name and value at these bytes. */
  private declare(nameStart: number, nameEnd: number, valueStart: number, valueEnd: number) {
    const { buf, bounds } = this;
    if (++this.declarations > bounds.namespaceDeclarations) {
      const message = `more than ${count(bounds.namespaceDeclarations)} namespace declarations`;
      return this.breach("namespaces", message, nameStart);
    }
    // Counted as written, undecoded: the same namespace written two ways counts twice.
    this.distinct.add(
      `${buf.toString("latin1", nameStart, nameEnd)} ${buf.toString("latin1", valueStart, valueEnd)}`,
    );
    if (this.distinct.size > bounds.namespaces) {
      const message = `more than ${bounds.namespaces} distinct namespace declarations`;
      return this.breach("namespaces", message, nameStart);
    }
    this.scope.push({ nameStart, nameEnd, valueStart, valueEnd, depth: this.nameStarts.length });
    return undefined;
  }
}

/** The first bound `buf` breaks from byte `start` on, or undefined. */
export function scanXml(buf: Buffer, start: number, bounds: ScanBounds): Breach | undefined {
  return new Scan(buf, start, bounds).run();
}
