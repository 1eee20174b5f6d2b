/*
 * Bidirectional formatting controls: invisible characters that reorder the text around them when it
 * is shown. U+202E (RIGHT-TO-LEFT OVERRIDE) in a party's or an item's name makes it read otherwise
 * than it is stored. They are valid Unicode, and a document is signed as it is sent, so they are kept
 * where they are stored: validation warns of them (documents/validation/rules/bidi.ts), and everything that shows
 * stored text to a person (the dashboard and the verification page through html/html.ts, the
 * PDF through documents/pdf/fields.ts) shows each as a visible marker, `⟨U+202E⟩`, so that what is
 * read is what is stored. No domain: any folder may import this.
 */

/** The embeddings and overrides (U+202A–U+202E), the isolates (U+2066–U+2069) and the marks (U+200E, U+200F, U+061C). */
const CONTROL = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;
const CONTROLS = new RegExp(CONTROL.source, "g");

/** Whether a UTF-16 code unit is one of the controls (the class of CONTROL, without a RegExp). */
const isControl = (code: number): boolean =>
  code === 0x061c ||
  code === 0x200e ||
  code === 0x200f ||
  (code >= 0x202a && code <= 0x202e) ||
  (code >= 0x2066 && code <= 0x2069);

const MARKERS = new Map<string, string>();

/** The visible marker of one control, e.g. `⟨U+202E⟩`. */
export function bidiMarker(control: string): string {
  let marker = MARKERS.get(control);
  if (marker === undefined) {
    const code = (control.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
    marker = `⟨U+${code}⟩`;
    // Only the twelve controls are remembered: the map stays that small whatever it is asked.
    if (control.length === 1 && isControl(control.charCodeAt(0))) MARKERS.set(control, marker);
  }
  return marker;
}

/** Whether the text holds a bidirectional control (one pass over it, a single character class). */
export const hasBidiControl = (text: string): boolean => CONTROL.test(text);

/**
 * The text with each bidirectional control replaced by its visible marker: what every renderer
 * shows of stored text. One pass, no backtracking; a text without controls is returned as it is.
 */
export const showBidiControls = (text: string): string =>
  hasBidiControl(text) ? text.replace(CONTROLS, bidiMarker) : text;

/** The markers of the distinct controls in the text, in the order they first appear (at most twelve). */
export function bidiControlsIn(text: string): string[] {
  const found: string[] = [];
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x061c || !isControl(code)) continue;
    const marker = bidiMarker(String.fromCharCode(code));
    if (!found.includes(marker)) found.push(marker);
  }
  return found;
}
