import { escapeHtml, Html, html } from "../html/html.ts";

/**
 * An invoice's document on its page, sent or received alike, in a bounded number of characters
 * whatever its size: a received document is whatever the supplier sent, and one of 100,000 lines
 * made a page of 76.6 MB. The document is shown without its lines, then its lines a page at a time
 * (`?line=`), each as stored. A text longer than its bound is cut, and says so.
 */

/** Lines on one page of a document. */
export const LINES_PER_PAGE = 100;
/**
 * The most characters of markup shown of the document without its lines, and of one line: a page
 * holds at most DOCUMENT_CHARS + LINES_PER_PAGE × LINE_CHARS = 400,000 characters of a document.
 * The full sample invoice without its lines takes about 3,500, and the longest line a signed
 * invoice may hold about 2,500, both shown whole; only a document with most of its lists at their
 * most (1,000 tax subtotals: about 315,000) is cut, and says so.
 */
export const DOCUMENT_CHARS = 100_000;
export const LINE_CHARS = 3_000;

/**
 * JSON.stringify(value, null, 2), cut after `max` characters: the walk stops there, so a document of
 * any size costs no more than `max` characters of it (and a string, at most `max` of its own).
 */
export function prettyJson(value: unknown, max: number): { text: string; cut: boolean } {
  const out: string[] = [];
  let length = 0;
  const emit = (text: string) => {
    out.push(text);
    length += text.length;
    return length <= max;
  };
  const quoted = (text: string) => JSON.stringify(text.length > max ? text.slice(0, max) : text);
  // Each level indents by two more: the depth it reaches is bounded by `max` too.
  const write = (item: unknown, indent: string): boolean => {
    if (typeof item === "string") return emit(quoted(item));
    if (item === null || typeof item !== "object") return emit(JSON.stringify(item) ?? "null");
    const inner = `${indent}  `;
    if (Array.isArray(item)) {
      if (item.length === 0) return emit("[]");
      if (!emit("[")) return false;
      for (let i = 0; i < item.length; i++) {
        if (!emit(`${i > 0 ? "," : ""}\n${inner}`) || !write(item[i], inner)) return false;
      }
      return emit(`\n${indent}]`);
    }
    let first = true;
    for (const key in item) {
      if (!Object.hasOwn(item, key)) continue;
      const field = (item as Record<string, unknown>)[key];
      // As JSON.stringify: a field without a JSON value is left out.
      if (field === undefined || typeof field === "function" || typeof field === "symbol") continue;
      if (!emit(`${first ? "{" : ","}\n${inner}${quoted(key)}: `) || !write(field, inner)) return false;
      first = false;
    }
    return emit(first ? "{}" : `\n${indent}}`);
  };
  const whole = write(value, "");
  const text = out.join("");
  return whole ? { text, cut: false } : { text: text.slice(0, max), cut: true };
}

/** The text as markup, cut to `max` characters of markup (never inside an entity such as `&quot;`). */
function clipped(text: string, max: number, cut: boolean): Html {
  let markup = escapeHtml(text);
  if (markup.length > max) {
    markup = markup.slice(0, max).replace(/&[#a-zA-Z0-9]*$/, "");
    cut = true;
  }
  return html`${new Html(markup)}${cut ? html`<span class="muted">… (cut here: longer than the page shows)</span>` : ""}`;
}

const shown = (value: unknown, max: number) => {
  const { text, cut } = prettyJson(value, max);
  return clipped(text, max, cut);
};

const count = (n: number) => n.toLocaleString("en-US");

/** `first` is the first line to show (1-based, from `?line=`); `href` links to the page starting at a line. */
export function documentSection(
  document: Record<string, unknown>,
  first: number | undefined,
  href: (line: number) => string,
): Html {
  const lines = document.invoice_line;
  if (!Array.isArray(lines)) {
    return html`<h2>Document</h2>
<pre class="document">${shown(document, DOCUMENT_CHARS)}</pre>`;
  }
  const { invoice_line: _lines, ...rest } = document;
  const total = lines.length;
  // Pages start at 1, 101, 201…; a line past the end shows the last page.
  const last = Math.floor(Math.max(total - 1, 0) / LINES_PER_PAGE) * LINES_PER_PAGE + 1;
  const from = (first ?? 1) > total ? last : Math.max(first ?? 1, 1);
  const to = Math.min(from + LINES_PER_PAGE - 1, total);
  const link = (line: number, rel: string, label: string) =>
    html`<a rel="${rel}" href="${href(line)}#lines">${label}</a>`;
  const span = (start: number) => `${count(start)}–${count(Math.min(start + LINES_PER_PAGE - 1, total))}`;
  const previous = Math.max(1, from - LINES_PER_PAGE);
  const pager =
    total > LINES_PER_PAGE
      ? html`<p class="pager">${
          from > 1
            ? html`${link(1, "first", "« First")} ${link(previous, "prev", `← Lines ${span(previous)}`)} `
            : ""
        }${to < total ? html`${link(to + 1, "next", `Lines ${span(to + 1)} →`)} ${link(last, "last", "Last »")}` : ""}</p>`
      : "";
  return html`<h2>Document</h2>
<p class="muted">As stored; its <code>invoice_line</code> below, ${count(LINES_PER_PAGE)} lines a page.</p>
<pre class="document">${shown(rest, DOCUMENT_CHARS)}</pre>
<h2 id="lines">Lines</h2>
<p class="muted" id="lines-range">${total === 0 ? "No lines." : `Lines ${count(from)}–${count(to)} of ${count(total)}`}</p>
${pager}
${
  total === 0
    ? ""
    : html`<table id="document-lines">
<thead><tr><th class="num">#</th><th>As stored</th></tr></thead>
<tbody>${lines
        .slice(from - 1, to)
        .map(
          (line, i) =>
            html`<tr id="line-${from + i}"><td class="num">${from + i}</td><td><pre class="line">${shown(line, LINE_CHARS)}</pre></td></tr>`,
        )}</tbody>
</table>
${pager}`
}`;
}
