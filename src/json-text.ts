/**
 * The JSON text each parsed request body was read from, kept beside the value for as long as the
 * value lives: a body sent to a thread goes over as its text (a copy of one string, 1.5 µs for the
 * full sample invoice) instead of as the parsed value (a structured copy of every object, 6 µs),
 * and the thread parses it again, into the same value.
 */
const texts = new WeakMap<object, string>();

/**
 * JSON text without its leading byte order mark, if it has one: RFC 8259 §8.1 lets a parser ignore
 * one, the body's parser skips it, and JSON.parse refuses it.
 */
export const withoutBom = (text: string): string => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

export function keepJsonText(value: unknown, text: string): void {
  // Without the mark, for the thread's JSON.parse.
  if (typeof value === "object" && value !== null) texts.set(value, withoutBom(text));
}

/** The text `value` was parsed from, when it is a request body parsed whole. */
export function jsonTextOf(value: unknown): string | undefined {
  return typeof value === "object" && value !== null ? texts.get(value) : undefined;
}

/**
 * A JSON object body left unparsed on the event loop, for a route that hands it to a thread whole
 * (a single validate or sign, `deferredJson` in the route's config): the thread parses it anyway,
 * and parsing it here too cost about 8% of the event loop's instructions a sign. It has been
 * measured and bounded as any body is (json-body.ts), holds no `__proto__` or `constructor` key,
 * starts with `{` and has no byte order mark. `value()` parses it as the body parser would have,
 * with the same refusals, for what needs the value after all (an Idempotency-Key's fingerprint, a
 * text the thread could not read).
 */
export class JsonText {
  #value: Promise<unknown> | undefined;
  constructor(
    readonly text: string,
    private readonly parse: () => Promise<unknown>,
  ) {}

  value(): Promise<unknown> {
    this.#value ??= this.parse();
    return this.#value;
  }
}
