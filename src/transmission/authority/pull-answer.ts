import { createHash } from "node:crypto";
import { brokenBound, quickScan, scanJson } from "../../json-scan.ts";
import { pacer } from "../../turns.ts";
import type { WaitingInvoice, WaitingList } from "./connector.ts";

/*
 * A pull's answer read within bounds. The answer is the one input of this service whose size no
 * client chose: MBS answers a day of invoices for every taxpayer of the APP, and documents no paging
 * [doc]. Read whole and parsed in one piece, 63 MiB of `[0,0,…]` (33M entries) took a process to
 * 3.8 GB and held its event loop for 20 s. So the text is never parsed whole: one pass finds the
 * list and the span of each entry (counting at most PULL_MAX_ENTRIES, with turns for other work),
 * and each entry is measured and parsed on its own, when its slice of the list is stored. An entry
 * that breaks a bound is set aside with its reason; the others go on.
 */

/**
 * The most entries of one day's answer: ten thousand a day for each of five large taxpayers. Past
 * it the day's answer is refused as a whole: a list cut short would move the cursor past invoices.
 */
export const PULL_MAX_ENTRIES = 50_000;
/** The most one listed invoice may be: what a request may send to be signed (1 MiB). */
export const ENTRY_MAX_BYTES = 1 << 20;

/** How long reading the answer holds the event loop before other work gets a turn. */
const TURN_MS = 10;
/** Characters looked at between two checks of the clock. */
const STEP = 1 << 16;

/** Member names under `data` where a list was seen, in the order they are tried. */
const LIST_KEYS = ["items", "invoices", "data", "content", "records", "results"];

/** An answer that is not a list within the bounds: the day's pull fails with this reason. */
export class PullAnswerRefused extends Error {}

type Candidate = { spans: Array<[number, number]>; tooMany: boolean };

/** The name of the list a candidate path stands for, in the order `listOf` preferred them. */
const candidateName = (path: readonly string[]): string | undefined => {
  if (path.length === 0) return "(the answer)";
  if (path.length === 1 && path[0] === "data") return "data";
  if (path.length === 2 && path[0] === "data" && LIST_KEYS.includes(path[1] ?? "")) return `data.${path[1]}`;
  return undefined;
};
const PREFERENCE = ["(the answer)", "data", ...LIST_KEYS.map((key) => `data.${key}`)];

/**
 * Where the string opening at `start` closes: its quote, or the bytes' end. The answer is read as
 * UTF-8 bytes, never as one string (which would be a copy of it as large again): JSON's structure
 * is ASCII, and no byte of a multi-byte UTF-8 character is an ASCII byte.
 */
function stringEnd(bytes: Buffer, start: number): number {
  let end = bytes.indexOf(34, start + 1);
  while (end !== -1) {
    let b = end - 1;
    while (bytes[b] === 92) b--;
    if ((end - 1 - b) % 2 === 0) return end;
    end = bytes.indexOf(34, end + 1);
  }
  return bytes.length;
}

/**
 * One pass over the answer: the spans of the entries of every array standing where a list was seen
 * (the answer itself, `data`, `data.items`, …), each counted up to `maxEntries`. Whatever else the
 * text holds is skipped at the cost of reading it. Each entry is parsed on its own later, so one
 * that is not JSON is set aside then; an answer whose brackets do not balance is refused here.
 */
async function candidates(text: Buffer, maxEntries: number): Promise<Map<string, Candidate>> {
  const found = new Map<string, Candidate>();
  // Per open container, up to depth 3: its path, whether it is an object, the member name pending.
  const path: string[][] = [[]];
  const isObject: boolean[] = [false];
  const pendingKey: Array<string | undefined> = [undefined];
  const list: Array<Candidate | undefined> = [undefined];
  const entryStart: number[] = [-1];
  let lastString: [number, number] | undefined;
  let depth = 0;
  // The top-level value has ended: only whitespace may follow.
  let closed = false;
  const pace = pacer(TURN_MS);
  let stepAt = STEP;
  for (let i = 0; i < text.length; i++) {
    if (i >= stepAt) {
      await pace();
      stepAt = i + STEP;
    }
    const c = text[i] ?? 0;
    if (c === 32 || c === 9 || c === 10 || c === 13) continue;
    if (depth === 0 && closed) throw new PullAnswerRefused("that is not JSON (more follows its end)");
    const inList = depth > 0 && list[depth] !== undefined;
    if (inList && entryStart[depth] === -1 && c !== 93 && c !== 44) entryStart[depth] = i;
    if (c === 34) {
      const end = stringEnd(text, i);
      if (depth > 0 && depth <= 3 && isObject[depth]) lastString = [i, end + 1];
      i = end;
      continue;
    }
    if (c === 123 || c === 91) {
      depth++;
      if (depth > 3) continue;
      const parentKey = depth === 1 ? undefined : pendingKey[depth - 1];
      const here = depth === 1 ? [] : [...(path[depth - 1] ?? []), parentKey ?? "?"];
      path[depth] = here;
      isObject[depth] = c === 123;
      pendingKey[depth] = undefined;
      entryStart[depth] = -1;
      const name = c === 91 ? candidateName(here) : undefined;
      if (name !== undefined && !found.has(name)) {
        const candidate = { spans: [], tooMany: false };
        found.set(name, candidate);
        list[depth] = candidate;
      } else list[depth] = undefined;
      continue;
    }
    if (c === 125 || c === 93) {
      // A bracket that closes what it did not open, or more than were opened: which entries the
      // list holds cannot be told.
      if (depth === 0 || (depth <= 3 && (c === 93) === isObject[depth]))
        throw new PullAnswerRefused("that is not JSON (a bracket closes what it did not open)");
      if (depth <= 3) {
        const candidate = list[depth];
        if (candidate && c === 93) push(candidate, entryStart[depth] ?? -1, i);
        list[depth] = undefined;
      }
      depth--;
      if (depth === 0) closed = true;
      continue;
    }
    if (c === 58 && depth > 0 && depth <= 3 && isObject[depth] && lastString) {
      // Each name is read once, and only one short enough to be a list's name: a run of colons
      // after one long name would otherwise read it again at every colon.
      const [from, to] = lastString;
      lastString = undefined;
      try {
        pendingKey[depth] =
          to - from <= 32 ? (JSON.parse(text.toString("utf8", from, to)) as string) : undefined;
      } catch {
        pendingKey[depth] = undefined;
      }
      continue;
    }
    if (c === 44 && depth > 0 && depth <= 3) {
      const candidate = list[depth];
      if (candidate) {
        push(candidate, entryStart[depth] ?? -1, i);
        entryStart[depth] = -1;
        // The answer itself, or its `data`, is the list wherever it is one: past the bound, the rest
        // of its entries need not be read to refuse it.
        if (candidate.tooMany && depth <= 2) return found;
      }
      if (isObject[depth]) pendingKey[depth] = undefined;
    }
  }
  // Cut off or malformed between its entries: which entries it holds cannot be told.
  if (depth !== 0) throw new PullAnswerRefused("that is not JSON (its brackets do not balance)");
  return found;

  function push(candidate: Candidate, start: number, end: number): void {
    if (start < 0) return;
    if (candidate.spans.length >= maxEntries) candidate.tooMany = true;
    else candidate.spans.push([start, end]);
  }
}

/** `{"code": 200, "data": null}` (nothing waiting, as MBS answers an empty success elsewhere). */
function isEmptySuccess(bytes: Buffer): boolean {
  if (bytes.length > 4096) return false;
  try {
    const body = JSON.parse(bytes.toString("utf8")) as unknown;
    return typeof body === "object" && body !== null && "data" in body && body.data === null;
  } catch {
    return false;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/**
 * One listed invoice: the document itself, or the document beside what the listing says of it
 * (`document` or `invoice`). An entry that is neither is handed on empty, so the checks report it
 * (no IRN) instead of it vanishing.
 */
export function waitingOf(item: unknown): WaitingInvoice {
  if (!isObject(item)) return { document: {} };
  const document = isObject(item.document) ? item.document : isObject(item.invoice) ? item.invoice : item;
  const waiting: WaitingInvoice = { document };
  const irn = text(item.irn) ?? text(document.irn);
  if (irn !== undefined) waiting.irn = irn;
  const customerTin = text(item.customer_tin) ?? text(item.buyer_tin) ?? text(item.receiver_tin);
  if (customerTin !== undefined) waiting.customerTin = customerTin;
  const supplierTin = text(item.supplier_tin) ?? text(item.sender_tin);
  if (supplierTin !== undefined) waiting.supplierTin = supplierTin;
  const transmittedAt = text(item.transmitted_at);
  if (transmittedAt !== undefined) waiting.transmittedAt = transmittedAt;
  return waiting;
}

/** One entry measured, then parsed: its invoice, or why it is set aside. */
function entryOf(
  source: Buffer,
  [from, to]: [number, number],
  index: number,
  mask: (value: unknown) => unknown,
): WaitingInvoice {
  const subject = `entry ${index + 1} of the list`;
  const setAside = (reason: string): WaitingInvoice => ({ document: {}, setAside: reason });
  if (to - from > ENTRY_MAX_BYTES)
    return setAside(`${subject} is ${to - from} bytes; at most ${ENTRY_MAX_BYTES} are read`);
  const entry = source.toString("utf8", from, to);
  const broken = brokenBound(quickScan(entry) ?? scanJson(entry), subject);
  if (broken) return setAside(broken.text);
  try {
    return waitingOf(mask(JSON.parse(entry)));
  } catch {
    return setAside(`${subject} is not JSON`);
  }
}

/**
 * The entries of a pull's successful answer, read a slice at a time. Refused whole
 * (PullAnswerRefused) when no list is where one was looked for, or it holds more than `maxEntries`.
 * `mask` is applied to each parsed entry (the client's masking of its credentials).
 */
export async function pulledList(
  source: Buffer,
  mask: (value: unknown) => unknown,
  maxEntries = PULL_MAX_ENTRIES,
): Promise<WaitingList> {
  const found = await candidates(source, maxEntries);
  const name = PREFERENCE.find((key) => found.has(key));
  const list = name === undefined ? undefined : found.get(name);
  if (!list) {
    if (isEmptySuccess(source))
      return { length: 0, sliceEnd: (start) => start, read: async () => [], prefixDigest: () => "" };
    throw new PullAnswerRefused(
      "without a list of invoices where one was looked for (data, data.items, data.invoices)",
    );
  }
  if (list.tooMany) throw new PullAnswerRefused(`with more than ${maxEntries} entries in ${name}`);
  const spans = list.spans;
  return {
    length: spans.length,
    sliceEnd(start, maxEntries, maxBytes) {
      let end = start;
      let bytes = 0;
      while (end < spans.length && end - start < maxEntries) {
        const [from, to] = spans[end] ?? [0, 0];
        if (end > start && bytes + (to - from) > maxBytes) break;
        bytes += to - from;
        end++;
      }
      return end;
    },
    prefixDigest(end) {
      const last = spans[Math.min(end, spans.length) - 1];
      const first = spans[0];
      if (!last || !first) return "";
      return createHash("sha256").update(source.subarray(first[0], last[1])).digest("hex");
    },
    async read(start, end) {
      const pace = pacer(TURN_MS);
      const out: WaitingInvoice[] = [];
      for (let i = start; i < Math.min(end, spans.length); i++) {
        await pace();
        const span = spans[i];
        if (span) out.push(entryOf(source, span, i, mask));
      }
      return out;
    },
  };
}
