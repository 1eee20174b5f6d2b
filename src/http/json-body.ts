import type { FastifyInstance } from "fastify";
import { DomainError } from "../errors.ts";
import {
  arrayMemberInTurns,
  brokenBound,
  type JsonScan,
  quickScan,
  scanJson,
  scanJsonInTurns,
} from "../json-scan.ts";
import { JsonText, keepJsonText, withoutBom } from "../json-text.ts";
import { pacer } from "../turns.ts";

/*
 * The JSON body parser. Every body is measured before it is parsed (json-scan.ts), and refused,
 * with a reason, when it would cost more than any real document: deep nesting, too many objects
 * and arrays, members or values. After parsing, what only the parsed value can tell: lone
 * surrogates and numbers beyond the double range.
 */

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when any string or key in a parsed JSON value holds an unpaired surrogate. */
function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === "string") return LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).some(([k, v]) => LONE_SURROGATE.test(k) || hasLoneSurrogate(v));
  }
  return false;
}

/** True when any number in a parsed JSON value is infinite. */
function hasNonFinite(value: unknown): boolean {
  if (typeof value === "number") return !Number.isFinite(value);
  if (Array.isArray(value)) return value.some(hasNonFinite);
  if (typeof value === "object" && value !== null) return Object.values(value).some(hasNonFinite);
  return false;
}

const invalid = (details: string) =>
  new DomainError("invalid_request", { message: "Invalid request", details });

/** Why the scanned text is refused before parsing, if it is. */
function refusal(scan: JsonScan): DomainError | undefined {
  const broken = brokenBound(scan, "the request body");
  if (!broken) return undefined;
  return invalid(broken.bound === "values" ? `${broken.text}; split it into several requests` : broken.text);
}

/** Bodies past this size (only the batch routes take them) are parsed one document at a time. */
const PARSE_IN_PIECES = 1024 * 1024;
/** How long parsing one body holds the event loop before other requests get a turn. */
const PARSE_TURN_MS = 20;

/** What Fastify's `done` is told: the error that refuses the body, or its value. */
type Done = (err: Error | null, body?: unknown) => void;
/** Fastify's JSON parser, bound to the request: `next` receives the value of `text`, or its error. */
type Parse = (text: string, next: Done) => void;

/**
 * Why the parsed value is refused, if it is. The value is walked only when the scan found an escape
 * or a number that can make it so.
 */
function parsedRefusal(scan: JsonScan, parsed: unknown): DomainError | undefined {
  // An escaped lone surrogate (`\ud800`) parses into a string that is not Unicode text: no
  // field can store, sign or canonicalize it, so it is refused here with a reason.
  if (scan.surrogateEscape && hasLoneSurrogate(parsed)) {
    return invalid(
      "the request body contains a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape); text must be valid Unicode",
    );
  }
  // A number literal beyond the double range parses to Infinity, which no JSON can carry back,
  // in any field, known or not.
  if (scan.hugeNumber && hasNonFinite(parsed)) {
    return invalid("the request body contains a number too large to represent (beyond ±1.8e308)");
  }
  return undefined;
}

/** Parses the body in one piece, and answers with its value or why it is refused. */
function parseWhole(parse: Parse, text: string, scan: JsonScan, done: Done): void {
  parse(text, (err, parsed) => {
    const refused = err ?? parsedRefusal(scan, parsed);
    if (refused) done(refused, undefined);
    else {
      keepJsonText(parsed, text);
      done(null, parsed);
    }
  });
}

/** The value of one piece of the body; throws when the piece does not parse. */
function parsePiece(parse: Parse, piece: string): unknown {
  let out: unknown;
  let failed = false;
  parse(piece, (err, value) => {
    failed = err !== null;
    out = value;
  });
  if (failed) throw new Error("piece does not parse");
  return out;
}

/** A large body refused by its scan, parsed in pieces, or to be parsed whole after all. */
type Outcome =
  | { refused: DomainError }
  | { scan: JsonScan; parsed: unknown }
  | { scan: JsonScan; whole: true };

/**
 * A batch of 30 MB takes 100 ms or more to parse, and 50 ms to scan, each in one piece: scanned
 * in steps and parsed a document at a time, with a turn for other requests in between, the
 * event loop is never held that long. The same parser reads each piece (it refuses
 * `__proto__` and `constructor` keys); a body that does not parse in pieces is parsed whole,
 * so its error is the whole parse's.
 */
async function parseInPieces(parse: Parse, text: string): Promise<Outcome> {
  const scan = await scanJsonInTurns(text);
  const refused = refusal(scan);
  if (refused) return { refused };
  const pieces = await arrayMemberInTurns(text, "invoices");
  if (!pieces) return { scan, whole: true };
  try {
    const outside = parsePiece(parse, `${text.slice(0, pieces.open)}[]${text.slice(pieces.close + 1)}`);
    const documents: unknown[] = [];
    const pace = pacer(PARSE_TURN_MS);
    for (const [from, to] of pieces.elements) {
      await pace();
      documents.push(parsePiece(parse, text.slice(from, to)));
    }
    (outside as Record<string, unknown>).invoices = documents;
    return { scan, parsed: outside };
  } catch {
    return { scan, whole: true };
  }
}

/** Parses a large body in pieces, with turns for other requests, and answers as parseWhole does. */
function parseLarge(parse: Parse, text: string, done: Done): void {
  parseInPieces(parse, text).then(
    (outcome) => {
      if ("refused" in outcome) done(outcome.refused, undefined);
      else if ("parsed" in outcome) {
        const refused = parsedRefusal(outcome.scan, outcome.parsed);
        if (refused) done(refused, undefined);
        else done(null, outcome.parsed);
      } else parseWhole(parse, text, outcome.scan, done);
    },
    (err: Error) => done(err, undefined),
  );
}

/** Text that cannot name `__proto__` or `constructor`: neither word, and no `\u` escape to spell one. */
const plainText = (text: string): boolean =>
  !text.includes("\\u") && !text.includes("__proto__") && !text.includes("constructor");

/**
 * The value of text that cannot name `__proto__` or `constructor` (neither word, and no `\u`
 * escape to spell one with), parsed as Fastify's parser would: after JSON.parse, that parser
 * (secure-json-parse) tests two patterns over the whole text for those keys, which cost more than
 * a fifth of the parse for an invoice. Undefined for other text, and for text that does not parse,
 * which Fastify's parser then reads and refuses with its own error.
 */
function plainParse(text: string): unknown {
  if (!plainText(text)) return undefined;
  try {
    // A leading byte order mark is skipped, as that parser skips it.
    const value: unknown = JSON.parse(withoutBom(text));
    // null (the text `null`) is told apart from "not parsed here": the other parser answers it.
    return value === null ? undefined : value;
  } catch {
    return undefined;
  }
}

/** Replaces Fastify's JSON parser with the bounded one. */
export function useBoundedJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const text = body as string;
    const parse: Parse = (piece, next) => {
      const value = plainParse(piece);
      if (value === undefined) parseJson(request, piece, next);
      else next(null, value);
    };
    if (text.length > PARSE_IN_PIECES) {
      parseLarge(parse, text, done);
      return;
    }
    const scan = quickScan(text) ?? scanJson(text);
    const refused = refusal(scan);
    const unmarked = withoutBom(text);
    if (refused) done(refused, undefined);
    else if (request.routeOptions.config?.deferredJson === true && deferrable(unmarked, scan)) {
      done(
        null,
        new JsonText(
          unmarked,
          () =>
            new Promise((resolve, reject) =>
              parseWhole(parse, text, scan, (err, value) => (err ? reject(err) : resolve(value))),
            ),
        ),
      );
    } else parseWhole(parse, text, scan, done);
  });
}

/**
 * Whether a measured body, without its byte order mark, may be left unparsed (JsonText): an
 * object (`{` first), with nothing only the parsed value can refuse (a lone surrogate, a number
 * beyond the double range) and no `__proto__` or `constructor` key, spelt out or escaped
 * (plainParse's test).
 */
function deferrable(text: string, scan: JsonScan): boolean {
  if (scan.surrogateEscape || scan.hugeNumber || !plainText(text)) return false;
  return /\S/.exec(text)?.[0] === "{";
}
