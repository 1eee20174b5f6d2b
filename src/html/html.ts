import { showBidiControls } from "../bidi.ts";

/** Markup that is already safe: produced by `html`, never by concatenating input. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/**
 * Text as markup that shows it as it is: the markup characters escaped, and each bidirectional
 * control (U+202E…) shown as a visible marker such as `⟨U+202E⟩` (src/bidi.ts), so that a stored
 * name cannot be made to read otherwise than it is on a page.
 */
export const escapeHtml = (text: string) =>
  showBidiControls(text).replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join("");
  if (value === null || value === undefined || value === false) return "";
  return escapeHtml(String(value));
}

/**
 * A template whose every interpolation is escaped unless it is `Html` itself: a page cannot carry
 * markup from the data it shows (an invoice's note, a business's name).
 */
export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0] as string;
  for (let i = 0; i < values.length; i++) out += render(values[i] as Value) + (strings[i + 1] as string);
  return new Html(out);
}
