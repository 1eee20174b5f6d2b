import { nextTurn } from "./turns.ts";

/*
 * JSON text measured without parsing it: JSON.parse runs on the event loop in one piece, and its
 * cost grows with what the text holds, not only with its length (a MiB of `{},` is 350,000 objects;
 * 30 MB of them take 6.7 s to parse, while 32 MB of real invoices take 0.1 s). The measures are
 * linear: strings are skipped with the engine's own search, short bodies are measured by searches
 * alone, and long ones in steps with a turn for other requests between (see the body parser).
 */

/** Far deeper than any invoice (about 5 levels), far shallower than what exhausts the parser's stack. */
export const MAX_JSON_DEPTH = 64;
/**
 * Objects and arrays in one body: a line holds three, so a batch at its budget of 50,000 lines holds
 * about 165,000. Parsing 200,000 empty objects takes about 40 ms.
 */
export const MAX_JSON_CONTAINERS = 200_000;
/**
 * Values in one body (every element, member name and member value): a batch at its line budget holds
 * about 2,500,000; 3,000,000 empty strings parse in about 80 ms.
 */
export const MAX_JSON_VALUES = 3_000_000;
/**
 * Members of one object: an invoice's largest has about 30. An object with 90,000 members takes 130 ms
 * to parse and as long again for every walk over it (V8 keeps it as a hash table).
 */
export const MAX_JSON_MEMBERS = 1000;
/**
 * A number with this many digits, or with an exponent of three digits, may lie beyond the double
 * range (±1.8e308) and parse to Infinity: only then is the parsed value searched for one.
 */
const LONG_NUMBER_DIGITS = 200;

export type JsonScan = {
  depth: number;
  containers: number;
  /** The most members of any one object. */
  members: number;
  values: number;
  /** A number literal that may not be finite once parsed. */
  hugeNumber: boolean;
  /** A `\u0000` escape. */
  nul: boolean;
  /** A `\uD800`–`\uDFFF` escape, which may be a lone surrogate. */
  surrogateEscape: boolean;
};

const count = (n: number) => n.toLocaleString("en-US");

/**
 * The first bound the scanned text breaks, if any, said of `subject` ("the request body", "entry 3
 * of the list"): the same bounds for every JSON text this service did not write.
 */
export function brokenBound(
  scan: JsonScan,
  subject: string,
): { bound: "depth" | "containers" | "members" | "values" | "nul"; text: string } | undefined {
  if (scan.depth > MAX_JSON_DEPTH)
    return { bound: "depth", text: `${subject} nests deeper than ${MAX_JSON_DEPTH} levels` };
  if (scan.containers > MAX_JSON_CONTAINERS)
    return {
      bound: "containers",
      text: `${subject} holds ${count(scan.containers)} objects and arrays; at most ${count(MAX_JSON_CONTAINERS)} are accepted`,
    };
  if (scan.members > MAX_JSON_MEMBERS)
    return {
      bound: "members",
      text: `an object in ${subject} has ${count(scan.members)} members; at most ${count(MAX_JSON_MEMBERS)} are accepted`,
    };
  if (scan.values > MAX_JSON_VALUES)
    return { bound: "values", text: `${subject} holds more than ${count(MAX_JSON_VALUES)} values` };
  // Text columns cannot hold the NUL character (PostgreSQL refuses it), and no field has a use for it.
  if (scan.nul)
    return { bound: "nul", text: `${subject} contains a NUL character (\\u0000), which no field accepts` };
  return undefined;
}

/** Measures JSON text without parsing it. Malformed text is left for the parser to name. */
export function scanJson(text: string): JsonScan {
  return finish(scanSteps(text));
}

/**
 * Below this length, and with at most MAX_JSON_DEPTH brackets, a body cannot break a bound but by
 * its escapes or numbers, which the engine's own searches find: most requests (an invoice is 3 kB)
 * are measured without a pass of their own.
 */
const QUICK_SCAN_LENGTH = 5 * MAX_JSON_MEMBERS - 1;
const isDigit = (code: number) => code >= 0x30 && code <= 0x39;

/** An exponent of three digits or more: `1e999`. */
const LONG_EXPONENT = /[eE][+-]?\d{3}/g;

/**
 * Whether `text` holds a three-digit exponent that may be a number's. A search cannot tell a string
 * from a number, and a UUID's `0e123456` is such an exponent to it: about a third of random
 * business ids matched, so every sign of those businesses paid for a full scan (4.6–12.4 µs for
 * an invoice, against about 2 µs for this) on the event loop. An exponent counts here only after a
 * run of number characters that starts the text or follows what may stand before a number (`:`,
 * `,`, `[`, whitespace, a byte order mark); after a quote or a letter it is inside a string. A
 * string holding `:1e123` still counts, which leaves the body to the full scan: this may answer
 * yes for no number, never no for one.
 */
function hasLongExponent(text: string): boolean {
  LONG_EXPONENT.lastIndex = 0;
  for (let match = LONG_EXPONENT.exec(text); match !== null; match = LONG_EXPONENT.exec(text)) {
    if (numberLike(text, match.index)) return true;
  }
  return false;
}

/** Whether the exponent at `at` follows a number's characters that a number may start with. */
function numberLike(text: string, at: number): boolean {
  let start = at;
  while (start > 0 && isNumberPart(text.charCodeAt(start - 1))) start--;
  if (start === at) return false; // after none of a number's characters: no number's exponent
  if (start === 0) return true;
  const before = text.charCodeAt(start - 1);
  // : , [ space tab newline return, and U+FEFF (the body parser takes a BOM off after this scan).
  return (
    before === 0x3a ||
    before === 0x2c ||
    before === 0x5b ||
    before === 0x20 ||
    before === 0x09 ||
    before === 0x0a ||
    before === 0x0d ||
    before === 0xfeff
  );
}

/** Digits, `.`, `-` and `+`: what a number is made of before its exponent. */
const isNumberPart = (code: number) => isDigit(code) || code === 0x2e || code === 0x2d || code === 0x2b;

/**
 * Whether `text` holds a run of LONG_NUMBER_DIGITS digits or more. Such a run covers two characters
 * LONG_NUMBER_DIGITS / 2 apart at multiples of that, so only those are looked at, and only a pair
 * of digits is measured: 0.06 µs over an invoice, where a pattern tried from every digit (with a
 * lookbehind so that it starts only at a run's first) took 3.1 µs, the most of any step of a sign's
 * body on the event loop.
 */
function hasLongDigitRun(text: string): boolean {
  const step = LONG_NUMBER_DIGITS / 2;
  for (let at = 0; at + step < text.length; at += step) {
    if (!isDigit(text.charCodeAt(at)) || !isDigit(text.charCodeAt(at + step))) continue;
    let start = at;
    while (start > 0 && isDigit(text.charCodeAt(start - 1))) start--;
    let end = at + 1;
    while (end < text.length && isDigit(text.charCodeAt(end))) end++;
    if (end - start >= LONG_NUMBER_DIGITS) return true;
  }
  return false;
}

/**
 * The scan of a short body without a pass over it: its depth and containers are upper bounds of the
 * exact ones, its members and values are known to be within their bounds (and given as 0), and none
 * of its flags is raised; undefined when a full scan must decide: a long body, an escape, a run of
 * digits anywhere, or a three-digit exponent where a number can stand (`numberLike`).
 */
export function quickScan(text: string): JsonScan | undefined {
  // 1,000 members take at least 5,000 characters (`"":0,`), so a shorter body has fewer.
  if (text.length > QUICK_SCAN_LENGTH || text.includes("\\u")) return undefined;
  if (hasLongExponent(text) || hasLongDigitRun(text)) return undefined;
  let brackets = 0;
  for (const open of ["{", "["]) {
    for (let at = text.indexOf(open); at !== -1; at = text.indexOf(open, at + 1)) {
      if (++brackets > MAX_JSON_DEPTH) return undefined;
    }
  }
  // Brackets inside strings count too: `brackets` is at least the depth and the containers.
  return {
    depth: brackets,
    containers: brackets,
    members: 0,
    values: 0,
    hugeNumber: false,
    nul: false,
    surrogateEscape: false,
  };
}

/** Runs a stepwise scan to its end at once. */
function finish<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Runs a stepwise scan with a turn for other requests after each step. */
async function finishInTurns<T>(steps: Generator<void, T>): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await nextTurn();
  }
}

/** `scanJson` with a turn for other requests after each SCAN_STEP characters, for long bodies. */
export const scanJsonInTurns = (text: string): Promise<JsonScan> => finishInTurns(scanSteps(text));

/** Characters scanned between turns: about 5 ms of scanning. */
const SCAN_STEP = 1 << 20;

/** Whether the character at `at` is escaped: preceded by an odd number of backslashes. */
function escaped(text: string, at: number): boolean {
  let b = at - 1;
  while (b >= 0 && text.charCodeAt(b) === 92) b--;
  return (at - 1 - b) % 2 === 1;
}

/** Where the string opening at `start` closes: its quote, or the text's end when none does. */
function stringEnd(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  while (end !== -1 && escaped(text, end)) end = text.indexOf('"', end + 1);
  return end === -1 ? text.length : end; // unterminated: the parser says so
}

function* scanSteps(text: string): Generator<void, JsonScan> {
  let depth = 0;
  let deepest = 0;
  let containers = 0;
  // Per open container up to the depth limit: whether it is an object, and its members so far.
  const isObject = new Uint8Array(MAX_JSON_DEPTH + 2);
  const memberCount = new Uint32Array(MAX_JSON_DEPTH + 2);
  let members = 0;
  let values = 0;
  let digits = 0;
  let exponentDigits = -1;
  let hugeNumber = false;
  let nul = false;
  let surrogateEscape = false;
  // Most bodies have no `\u` escape at all: then no string needs looking into. Otherwise the next
  // one is kept, and a string is looked into only when it holds it: each search starts where the
  // last ended, so the text is searched once however many strings it has.
  let nextU = text.indexOf("\\u");
  let turnAt = SCAN_STEP;
  for (let i = 0; i < text.length; i++) {
    if (i >= turnAt) {
      yield;
      turnAt = i + SCAN_STEP;
    }
    const c = text.charCodeAt(i);
    if (c === 34) {
      // A string: its end is found by the engine's own search (most of a body is strings), then
      // its `\u` escapes are looked at if the body has any.
      const end = stringEnd(text, i);
      if (nextU !== -1 && nextU <= i) nextU = text.indexOf("\\u", i + 1);
      if (nextU !== -1 && nextU < end) {
        let u = nextU;
        for (; u !== -1 && u < end; u = text.indexOf("\\u", u + 2)) {
          if (escaped(text, u)) continue; // `\\u`: an escaped backslash, then the letter u
          const h1 = text.charCodeAt(u + 2) | 0x20;
          const h2 = text.charCodeAt(u + 3) | 0x20;
          if (h1 === 48 && h2 === 48 && text.startsWith("00", u + 4)) nul = true;
          else if (h1 === 100 && ((h2 >= 56 && h2 <= 57) || (h2 >= 97 && h2 <= 102))) surrogateEscape = true;
        }
        nextU = u;
      }
      values++;
      digits = 0;
      exponentDigits = -1;
      i = end;
      continue;
    }
    if (c >= 48 && c <= 57) {
      if (exponentDigits >= 0) {
        if (++exponentDigits >= 3) hugeNumber = true;
      } else if (++digits >= LONG_NUMBER_DIGITS) hugeNumber = true;
      continue;
    }
    if (c === 101 || c === 69) {
      // An exponent only follows digits; an `e` elsewhere is the parser's to refuse.
      if (digits > 0) exponentDigits = 0;
      continue;
    }
    if (c === 43 || c === 45 || c === 46) continue; // sign or decimal point: the number goes on
    digits = 0;
    exponentDigits = -1;
    if (c === 123 || c === 91) {
      containers++;
      values++;
      if (++depth > deepest) deepest = depth;
      if (depth <= MAX_JSON_DEPTH + 1) {
        isObject[depth] = c === 123 ? 1 : 0;
        memberCount[depth] = 0;
      }
    } else if (c === 125 || c === 93) depth--;
    else if (c === 58) {
      // A colon ends a member's name: one more member of the object it is in.
      if (depth > 0 && depth <= MAX_JSON_DEPTH + 1 && isObject[depth] === 1) {
        const n = (memberCount[depth] ?? 0) + 1;
        memberCount[depth] = n;
        if (n > members) members = n;
      }
    } else if (c === 44) values++;
  }
  return { depth: deepest, containers, members, values, hugeNumber, nul, surrogateEscape };
}

/**
 * Where the elements of the array under `key` of the top-level object lie in `text`: the array's
 * brackets and each element's span. Undefined when the text is not such an object (or names the key
 * twice); malformed text is left to the whole parse to name.
 */
export function arrayMember(text: string, key: string): ArrayMember | undefined {
  return finish(arrayMemberSteps(text, key));
}

/** `arrayMember` with a turn for other requests after each SCAN_STEP characters. */
export const arrayMemberInTurns = (text: string, key: string): Promise<ArrayMember | undefined> =>
  finishInTurns(arrayMemberSteps(text, key));

type ArrayMember = { open: number; close: number; elements: [number, number][] };

function* arrayMemberSteps(text: string, key: string): Generator<void, ArrayMember | undefined> {
  let depth = 0;
  let lastString: [number, number] | undefined;
  let pendingKey: string | undefined;
  let open = -1;
  let close = -1;
  let elementStart = -1;
  const elements: [number, number][] = [];
  const inArray = () => depth === 2 && open >= 0 && close < 0;
  let turnAt = SCAN_STEP;
  for (let i = 0; i < text.length; i++) {
    if (i >= turnAt) {
      yield;
      turnAt = i + SCAN_STEP;
    }
    const c = text.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13) continue;
    if (inArray() && elementStart < 0 && c !== 93 && c !== 44) elementStart = i;
    if (c === 34) {
      const end = stringEnd(text, i);
      if (depth === 1) lastString = [i, end + 1];
      i = end;
    } else if (c === 123 || c === 91) {
      depth++;
      if (depth === 1 && c !== 123) return undefined;
      if (depth === 2 && c === 91 && pendingKey === key) {
        if (open >= 0) return undefined;
        open = i;
      }
    } else if (c === 125 || c === 93) {
      if (inArray() && c === 93) {
        if (elementStart >= 0) elements.push([elementStart, i]);
        close = i;
      }
      depth--;
    } else if (c === 58 && depth === 1 && lastString) {
      // Each name is read once: a run of colons after one long name would read it again each time.
      const [from, to] = lastString;
      lastString = undefined;
      try {
        pendingKey = JSON.parse(text.slice(from, to)) as string;
      } catch {
        return undefined;
      }
    } else if (c === 44) {
      if (inArray()) {
        elements.push([elementStart, i]);
        elementStart = -1;
      }
      if (depth === 1) pendingKey = undefined;
    }
  }
  return open >= 0 && close > open ? { open, close, elements } : undefined;
}
