import { type AuthorityAnswer, DeliveryError } from "./connector.ts";

/*
 * What an MBS answer means, decided in this one place (the MBS spec, sections 4 and 7). The rule is
 * "decide by asking, not by reading words": MBS puts one `public_message` on every refusal of
 * validate and sign ("…also confirm this is not a duplicate request"), and answers a duplicate IRN
 * with `details` "…kindly try again later", so neither "duplicate" nor "try again" means anything.
 * An answer is judged by its status and by the step that got it; whether a refused sign registered
 * the IRN is asked of MBS (`confirm`, mbs.ts). The only texts still matched are those the spec
 * records MBS giving for one purpose, each cited where it is matched.
 */

export type MbsVerdict =
  | { kind: "ok" }
  /** Retry with backoff: nothing happened there, or the result is unknown (confirm it first). */
  | { kind: "transient" }
  /**
   * The operator must act, no invoice is to blame: the APP's credentials refused, the host without
   * such a route (EINVOICE_MBS_URL points at the wrong place), or the APP's webhook not set up.
   */
  | { kind: "configuration" }
  /** The buyer has not enabled receiving: retrying helps only once the buyer acts. */
  | { kind: "not_enabled" }
  /** The sign stands, the transmission did not happen: transmit again later. */
  | { kind: "partial" }
  /**
   * A 4xx in MBS's envelope that is none of the above. What it means depends on the step: at
   * `validate` a refusal, at `sign` a question for `confirm`, at `confirm` "not registered".
   */
  | { kind: "refused" };

/** `requestId`: the `x-request-id` the call carried, named in its errors to find it in MBS's logs. */
export type MbsAnswer = { status: number; body: unknown; requestId?: string };

/** [recorded] `error.public_message` of every refused credential (HTTP 400, handler `handler`). */
export const CREDENTIAL_REFUSED = "unable to validate api key";
/** [recorded] `message` of the 404 for a path MBS has no route for (no `error` object). */
export const NO_ROUTE = "no route found for this path";
/** [client] The sign stands, the transmission failed (met in an error and inside a 2xx answer). */
export const SIGNED_NOT_TRANSMITTED = "invoice is signed but could not transmit";
/** [client] Transmission refused until the APP's webhook is set up in the MBS dashboard. */
export const NO_WEBHOOK = "webhook url is not setup";
/** [client] The buyer has not enabled receiving: in `error.sub_message` or anywhere in the body. */
export const NOT_ENABLED = "NOT_ENABLED";

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** The error object of an MBS error envelope, its fields kept verbatim (bounded in length). */
export function answerOf(answer: MbsAnswer): AuthorityAnswer {
  const error = isObject(answer.body) && isObject(answer.body.error) ? answer.body.error : {};
  const cut = (v: unknown) => text(v)?.slice(0, 2000);
  const kept: AuthorityAnswer = { status: answer.status };
  for (const field of ["id", "handler", "details", "public_message", "sub_message"] as const) {
    const value = cut(error[field]);
    if (value !== undefined) kept[field] = value;
  }
  return kept;
}

/** One field of the answer's envelope, lower case, bounded: `message` or one of `error`'s. */
function said(answer: MbsAnswer, field: "message" | "public_message"): string {
  const body = answer.body;
  if (!isObject(body)) return "";
  const holder = field === "message" ? body : isObject(body.error) ? body.error : {};
  return (text(holder[field]) ?? "").slice(0, 2000).toLowerCase();
}

/** The whole body as text, bounded: NOT_ENABLED may be anywhere in it. */
function bodyText(answer: MbsAnswer): string {
  try {
    const body = answer.body;
    return (typeof body === "string" ? body : (JSON.stringify(body ?? "") ?? "")).slice(0, 8000);
  } catch {
    return "";
  }
}

/**
 * What the answer says in its own words, lower case, bounded: its messages and `details`, never the
 * rest of `data` (a download echoes the invoice, whose notes are the seller's text).
 */
function messages(answer: MbsAnswer): string {
  const body = answer.body;
  if (typeof body === "string") return body.slice(0, 4000).toLowerCase();
  if (!isObject(body)) return "";
  const error = isObject(body.error) ? body.error : {};
  const data = isObject(body.data) ? body.data : {};
  return [body.message, error.public_message, error.details, error.sub_message, data.message]
    .map((v) => (text(v) ?? "").slice(0, 2000))
    .join(" | ")
    .toLowerCase();
}

/** MBS's error envelope: an object with `code` and an `error` object, or the no-route body. */
const isEnvelope = (body: unknown) => isObject(body) && ("error" in body || "code" in body);

/** The verdict on one MBS answer, whatever step got it; the step's own meaning is mbs.ts's. */
export function classify(answer: MbsAnswer): MbsVerdict {
  const { status } = answer;
  const words = messages(answer);
  // [client] "Invoice is Signed but could not transmit…": one integrator met it inside a 2xx too.
  if (words.includes(SIGNED_NOT_TRANSMITTED)) return { kind: "partial" };
  if (status >= 200 && status <= 299) return { kind: "ok" };
  // [client] NOT_ENABLED "in error.sub_message (or anywhere in the body)".
  if (bodyText(answer).includes(NOT_ENABLED)) return { kind: "not_enabled" };
  // Transient by status: nothing here reads words (the spec's section 7).
  if (status === 408 || status === 425 || status === 429 || status >= 500) return { kind: "transient" };
  if (status === 401 || status === 403) return { kind: "configuration" };
  // [recorded] a refused credential is a 400 with this public_message.
  if (status === 400 && said(answer, "public_message") === CREDENTIAL_REFUSED)
    return { kind: "configuration" };
  // [recorded] the no-route 404 names the path, not an invoice.
  if (status === 404 && said(answer, "message").startsWith(NO_ROUTE)) return { kind: "configuration" };
  // [client] transmission needs the APP's webhook set up in the dashboard.
  if (words.includes(NO_WEBHOOK)) return { kind: "configuration" };
  // A body that is not MBS's envelope (a proxy's page, a load balancer's HTML) is not MBS's verdict.
  if (!isEnvelope(answer.body)) return { kind: "transient" };
  return { kind: "refused" };
}

/** Whether MBS refused the APP's credential (not the path or webhook): holds every delivery. */
export const isCredentialRefusal = (answer: MbsAnswer) =>
  answer.status === 401 ||
  answer.status === 403 ||
  (answer.status === 400 && said(answer, "public_message") === CREDENTIAL_REFUSED);

/** `MBS sign answered 400: validation failed: …: invoicerequest…` — the authority's words, for people. */
export function describe(step: string, answer: MbsAnswer): string {
  const kept = answerOf(answer);
  const words = [kept.public_message, kept.details, kept.sub_message].filter((t) => t !== undefined);
  if (words.length === 0 && typeof answer.body === "string" && answer.body !== "")
    words.push(JSON.stringify(answer.body.slice(0, 200)));
  if (words.length === 0 && isObject(answer.body) && typeof answer.body.message === "string")
    words.push(answer.body.message.slice(0, 500));
  const request = answer.requestId ? ` (request ${answer.requestId})` : "";
  return `MBS ${step} answered ${answer.status}${words.length > 0 ? `: ${words.join(": ")}` : ""}${request}`;
}

/**
 * The DeliveryError an answer that is not a success becomes, by its verdict. A `refused` one is
 * permanent here: the steps where a 4xx means something else (sign, confirm, transmit) decide
 * before they call this.
 */
export function failureOf(
  step: string,
  answer: MbsAnswer,
  verdict: MbsVerdict = classify(answer),
): DeliveryError {
  const message = describe(step, answer);
  const kept = answerOf(answer);
  switch (verdict.kind) {
    case "configuration":
      return new DeliveryError(message, false, {
        answer: kept,
        hold: "configuration",
        ...(isCredentialRefusal(answer) ? { credential: true } : {}),
      });
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
