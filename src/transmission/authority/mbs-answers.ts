import { type AuthorityAnswer, DeliveryError } from "./connector.ts";

/**
 * What an MBS answer means, decided in this one place (the spec of the MBS API, section 7). MBS
 * answers most failures, transient ones included, as HTTP 400: the texts tell them apart.
 */
export type MbsVerdict =
  | { kind: "ok" }
  /** Retry with backoff: nothing happened there, or the result is unknown (confirm it first). */
  | { kind: "transient" }
  /**
   * The APP's credentials were refused, or the host has no such route (EINVOICE_MBS_URL points at
   * the wrong place): the operator must fix it; no invoice is to blame.
   */
  | { kind: "configuration" }
  /** The buyer has not enabled receiving: retrying helps only once the buyer acts. */
  | { kind: "not_enabled" }
  /** The sign stands, the transmission did not happen: transmit again later. */
  | { kind: "partial" }
  /** The IRN is registered there already (a sign repeated after a lost answer, or a true clash). */
  | { kind: "duplicate" }
  /** Registered nowhere: `confirm` of an IRN MBS does not hold. */
  | { kind: "not_found" }
  /** The authority refused the request itself: retrying would be refused the same way. */
  | { kind: "permanent" };

/** `requestId`: the `x-request-id` the call carried, named in its errors to find it in MBS's logs. */
export type MbsAnswer = { status: number; body: unknown; requestId?: string };

// Phrases integrators match to retry (lower case; the texts vary in case and punctuation).
const TRANSIENT_TEXTS = [
  "try again later",
  "unable to complete this operation at this time",
  "please try again",
  "temporarily unavailable",
  "service unavailable",
  "timed out",
  "timeout",
];
const CREDENTIAL_TEXTS = ["unable to validate api key", "invalid api key", "api key"];
const NO_ROUTE_TEXT = "no route found for this path";
const PARTIAL_TEXTS = ["could not transmit", "might be offline or busy"];
const DUPLICATE_TEXTS = [
  "already exist",
  "duplicate",
  "already been signed",
  "already registered",
  "already transmitted",
  "already been transmitted",
];
const NOT_FOUND_TEXTS = ["not found", "does not exist", "no invoice"];

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** The error object of an MBS error envelope, its fields kept verbatim (bounded in length). */
export function answerOf(answer: MbsAnswer): AuthorityAnswer {
  const error = isObject(answer.body) && isObject(answer.body.error) ? answer.body.error : {};
  const cut = (v: unknown) => text(v)?.slice(0, 2000);
  const kept: AuthorityAnswer = { status: answer.status };
  const id = cut(error.id);
  const details = cut(error.details);
  const publicMessage = cut(error.public_message);
  const sub = cut(error.sub_message);
  if (id !== undefined) kept.id = id;
  if (details !== undefined) kept.details = details;
  if (publicMessage !== undefined) kept.public_message = publicMessage;
  if (sub !== undefined) kept.sub_message = sub;
  return kept;
}

/**
 * The answer's own words, lower case, to look for the phrases in: its messages, never `details`,
 * which echo the request (an IRN such as `DUPLICATE7-…` or a quoted field must not change the
 * verdict). A body that is not an envelope (a proxy's page) is all words. Bounded.
 */
function wordsOf(answer: MbsAnswer): string {
  const body = answer.body;
  if (typeof body === "string") return body.slice(0, 4000).toLowerCase();
  if (!isObject(body)) return "";
  const error = isObject(body.error) ? body.error : {};
  return [body.message, error.public_message, error.sub_message, error.message]
    .filter((v): v is string => typeof v === "string")
    .map((v) => v.slice(0, 2000))
    .join(" | ")
    .toLowerCase();
}

/** NOT_ENABLED may come in `error.sub_message` or anywhere else in the body (the MBS spec, section 4). */
function saysNotEnabled(answer: MbsAnswer): boolean {
  try {
    return JSON.stringify(answer.body ?? "")
      .slice(0, 8000)
      .includes("NOT_ENABLED");
  } catch {
    return false;
  }
}

const says = (words: string, phrases: readonly string[]) => phrases.some((p) => words.includes(p));

/** The verdict on one MBS answer. */
export function classify(answer: MbsAnswer): MbsVerdict {
  const { status } = answer;
  if (status >= 200 && status <= 299) return { kind: "ok" };
  const words = wordsOf(answer);
  if (saysNotEnabled(answer)) return { kind: "not_enabled" };
  if (status === 408 || status === 425 || status === 429 || status >= 500) return { kind: "transient" };
  if (status === 401 || status === 403 || (status === 400 && says(words, CREDENTIAL_TEXTS)))
    return { kind: "configuration" };
  if (status === 404 && words.includes(NO_ROUTE_TEXT)) return { kind: "configuration" };
  if (says(words, PARTIAL_TEXTS)) return { kind: "partial" };
  if (says(words, TRANSIENT_TEXTS)) return { kind: "transient" };
  if (status === 409 || says(words, DUPLICATE_TEXTS)) return { kind: "duplicate" };
  if (status === 404 || says(words, NOT_FOUND_TEXTS)) return { kind: "not_found" };
  return { kind: "permanent" };
}

/** `MBS sign answered 400: validation failed: …: invoicerequest…` — the authority's words, for people. */
export function describe(step: string, answer: MbsAnswer): string {
  const kept = answerOf(answer);
  const said = [kept.public_message, kept.details, kept.sub_message].filter((t) => t !== undefined);
  const request = answer.requestId ? ` (request ${answer.requestId})` : "";
  return `MBS ${step} answered ${answer.status}${said.length > 0 ? `: ${said.join(": ")}` : ""}${request}`;
}

/** The DeliveryError an answer that is not a success becomes, by its verdict. */
export function failureOf(
  step: string,
  answer: MbsAnswer,
  verdict: MbsVerdict = classify(answer),
): DeliveryError {
  const message = describe(step, answer);
  const kept = answerOf(answer);
  switch (verdict.kind) {
    case "configuration":
      return new DeliveryError(message, false, { answer: kept, hold: "configuration" });
    case "not_enabled":
      return new DeliveryError(message, false, { answer: kept, hold: "buyer", state: "AWAITING_BUYER" });
    case "partial":
      return new DeliveryError(message, false, { answer: kept, state: "REGISTERED" });
    case "transient":
      return new DeliveryError(message, false, { answer: kept });
    default:
      return new DeliveryError(message, true, { answer: kept });
  }
}
