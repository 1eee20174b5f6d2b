import { showBidiControls } from "../../bidi.ts";

/**
 * Reading a stored document without trusting its shape: every reader here answers something
 * printable (or nothing) for any value, so the renderer never throws on a missing or odd field.
 */

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A field of an object, own properties only: a key such as "constructor" reads nothing inherited. */
export function field(object: unknown, key: string): unknown {
  return isRecord(object) && Object.hasOwn(object, key) ? object[key] : undefined;
}

/** A field at the end of a path of keys. */
export const path = (object: unknown, ...keys: string[]): unknown =>
  keys.reduce<unknown>((at, key) => field(at, key), object);

export const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/**
 * How many characters of one value are printed, by kind. A printed invoice is read by a person: a
 * 10,000-character name would fill pages and hide the rest, and the stored document stays the
 * authority. The caps keep any single table row shorter than a page.
 */
export const CAP = { short: 120, name: 300, line: 1_000, paragraph: 2_000 } as const;

// Control characters print as empty boxes and lone surrogates have no glyph at all.
const CONTROL = /[\p{Cc}\p{Cs}]/gu;

/**
 * The value cut to `max` characters, its bidirectional controls shown as visible markers
 * (`⟨U+202E⟩`, src/bidi.ts): the drawn text reads as it is stored, and the markers count in the cap.
 */
function cap(value: string, max: number): string {
  const shown = showBidiControls(value.length > max * 2 ? value.slice(0, max * 2) : value);
  // Counted in code points: cutting a surrogate pair in half would leave a character with no glyph.
  const points = Array.from(shown.length > max * 2 ? shown.slice(0, max * 2) : shown);
  return points.length > max ? `${points.slice(0, max - 1).join("")}…` : shown;
}

/** One line of text: strings as they are, numbers and booleans as written; anything else is nothing. */
export function text(value: unknown, max: number = CAP.short): string | undefined {
  let raw: string;
  if (typeof value === "string") raw = value;
  else if (typeof value === "number" && Number.isFinite(value)) raw = String(value);
  else if (typeof value === "boolean") raw = String(value);
  else return undefined;
  const cleaned = cap(raw, max).replace(/\s+/g, " ").replace(CONTROL, "").trim();
  return cleaned === "" ? undefined : cleaned;
}

/** Free text kept in its lines (a note, payment terms); blank lines and stray controls removed. */
export function paragraph(value: unknown): string | undefined {
  if (typeof value !== "string") return text(value);
  const lines = cap(value, CAP.paragraph)
    .split(/\r\n|[\r\n\u2028\u2029]/)
    .map((line) => line.replace(/\s+/g, " ").replace(CONTROL, "").trim())
    .filter((line) => line !== "");
  return lines.length > 0 ? lines.join("\n") : undefined;
}

/** A number from a number or a plain decimal string ("645000.50"); nothing otherwise. */
export function num(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value === "string" && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

const formats = new Map<string, Intl.NumberFormat>();

function decimals(min: number, max: number): Intl.NumberFormat {
  const key = `${min}:${max}`;
  let format = formats.get(key);
  if (!format) {
    format = new Intl.NumberFormat("en-US", { minimumFractionDigits: min, maximumFractionDigits: max });
    formats.set(key, format);
  }
  return format;
}

/** An amount with thousands separators and the currency's minor digits; a non-number as written. */
export function money(value: unknown, digits: number): string {
  const n = num(value);
  return n === undefined ? (text(value) ?? "") : decimals(digits, digits).format(n);
}

/** A unit price: the currency's minor digits at least, up to four where the price has them. */
export function price(value: unknown, digits: number): string {
  const n = num(value);
  return n === undefined ? (text(value) ?? "") : decimals(digits, Math.max(digits, 4)).format(n);
}

export function quantity(value: unknown): string {
  const n = num(value);
  return n === undefined ? (text(value) ?? "") : decimals(0, 4).format(n);
}

export function percent(value: unknown): string {
  const n = num(value);
  return n === undefined ? (text(value) ?? "") : `${decimals(0, 4).format(n)}%`;
}
