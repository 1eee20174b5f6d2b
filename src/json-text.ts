/**
 * The JSON text each parsed request body was read from, kept beside the value for as long as the
 * value lives: a body sent to a thread goes over as its text (a copy of one string, 1.5 µs for the
 * full sample invoice) instead of as the parsed value (a structured copy of every object, 6 µs),
 * and the thread parses it again, into the same value.
 */
const texts = new WeakMap<object, string>();

export function keepJsonText(value: unknown, text: string): void {
  // Without a leading byte order mark, which the body's parser skipped (RFC 8259 §8.1 lets a parser
  // ignore one) and JSON.parse, on the thread, refuses.
  if (typeof value === "object" && value !== null)
    texts.set(value, text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
}

/** The text `value` was parsed from, when it is a request body parsed whole. */
export function jsonTextOf(value: unknown): string | undefined {
  return typeof value === "object" && value !== null ? texts.get(value) : undefined;
}
