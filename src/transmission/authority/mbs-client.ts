import { randomUUID } from "node:crypto";
import { brokenBound, quickScan, scanJsonInTurns } from "../../json-scan.ts";
import { isRedirect, redirectOf } from "../../redirects.ts";
import { DeliveryError } from "./connector.ts";
import type { MbsAnswer } from "./mbs-answers.ts";

/**
 * [doc] `pull` takes `confirmed`. What it means is [unknown] (the MBS spec, section 2): read here as
 * "the receipt was acknowledged", so `false` asks for the invoices still waiting; `omit` sends none.
 * Whatever MBS makes of it, an invoice listed again is stored once (by buyer and IRN).
 */
export type PullConfirmed = "true" | "false" | "omit";

export type MbsSettings = {
  url: string;
  apiKey: string;
  apiSecret: string;
  callTimeoutMs: number;
  /** The APP's service id for VAT reports (`integrator_service_id`); else the invoice's own. */
  serviceId?: string;
  /** How often a sign refused (4xx) for an IRN still not registered is repeated, and after what pause. */
  signRepeats?: number;
  signRepeatDelayMs?: number;
  /** `pull`'s `confirmed` query (mbs-receipts.ts). */
  pullConfirmed?: PullConfirmed;
  /** The most a day's `pull` answer may be (mbs-receipts.ts). */
  pullMaxBytes?: number;
};

/** The most of an answer read: MBS answers are small; a proxy's page or a runaway body is cut off. */
const MAX_BODY_BYTES = 1 << 20;

/** An answer longer than the call allows, where a cut-off answer would be read as a shorter list. */
class AnswerTooLarge extends Error {}

/**
 * The most an encoded (gzip, deflate, br) answer may inflate: JSON lists of invoices compress 10 to
 * 50 times; 20 kB of gzip that inflated to 21 MB of `0,` (1,000 times) was an attack. Small answers
 * may inflate more: the bound is never under MIN_INFLATION_BOUND bytes.
 */
const MAX_INFLATION = 200;
const MIN_INFLATION_BOUND = 1 << 20;

/** Reads a successful answer's text in a way of its own (a pull's list); throws to refuse it. */
export type AnswerReader = (bytes: Buffer, mask: (value: unknown) => unknown) => Promise<unknown>;

/** What stands for a credential in an answer. */
export const MASK = "***";

/**
 * A masker of the given secrets: each occurrence in a text becomes MASK (the longest first, so a
 * secret inside another is not left half shown). Empty secrets mask nothing.
 */
export function secretMasker(secrets: readonly string[]): (text: string) => string {
  const kept = [...new Set(secrets.filter((secret) => secret !== ""))].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const secret of kept) if (out.includes(secret)) out = out.replaceAll(secret, MASK);
    return out;
  };
}

/**
 * The parsed answer with every text in it (values and field names, at any depth) masked, in place:
 * the answer is this client's own copy. Iterative, each value visited once.
 */
function maskedValue(value: unknown, mask: (text: string) => string): unknown {
  if (typeof value === "string") return mask(value);
  if (typeof value !== "object" || value === null) return value;
  const stack: object[] = [value];
  for (let at = stack.pop(); at !== undefined; at = stack.pop()) {
    if (Array.isArray(at)) {
      for (let i = 0; i < at.length; i++) {
        const item: unknown = at[i];
        if (typeof item === "string") at[i] = mask(item);
        else if (typeof item === "object" && item !== null) stack.push(item);
      }
      continue;
    }
    const record = at as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const item = record[key];
      const name = mask(key);
      if (name !== key) delete record[key];
      if (typeof item === "string") record[name] = mask(item);
      else {
        if (name !== key) record[name] = item;
        if (typeof item === "object" && item !== null) stack.push(item);
      }
    }
  }
  return value;
}

/**
 * The answer's bytes; past `limit` bytes, cut off (`strict`: refused, for a list that must be
 * whole). The bytes are counted as they come, after any content-encoding was undone; an encoded
 * answer that inflates past MAX_INFLATION times its declared length is refused as it grows.
 */
async function readBytes(response: Response, limit: number, strict: boolean): Promise<Buffer | null> {
  const reader = response.body?.getReader();
  if (!reader) return null;
  const declared = Number(response.headers.get("content-length"));
  const encoded = (response.headers.get("content-encoding") ?? "identity") !== "identity";
  const inflationBound =
    encoded && Number.isFinite(declared) && declared > 0
      ? Math.max(MIN_INFLATION_BOUND, declared * MAX_INFLATION)
      : Number.POSITIVE_INFINITY;
  // Where its length is declared and within the bound, the answer is copied into one buffer as it
  // comes: a list of chunks joined at the end holds it twice (a 62 MiB answer, 124 MB at once).
  const whole = !encoded && Number.isInteger(declared) && declared > 0 && declared <= limit;
  const into = whole ? Buffer.allocUnsafe(declared) : undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (into && size + value.byteLength > into.length) {
      await reader.cancel();
      throw new AnswerTooLarge(`longer than its declared ${declared} bytes`);
    }
    if (into) into.set(value, size);
    size += value.byteLength;
    if (size > inflationBound) {
      await reader.cancel();
      throw new AnswerTooLarge(
        `inflated past ${MAX_INFLATION} times its ${declared} encoded bytes (a compression bomb, or not a list)`,
      );
    }
    if (size > limit) {
      await reader.cancel();
      if (strict) throw new AnswerTooLarge(`over ${limit} bytes`);
      break;
    }
    if (!into) chunks.push(value);
  }
  return into ? into.subarray(0, size) : Buffer.concat(chunks);
}

/** Not JSON, or beyond what a JSON answer may cost: its words still count for the verdict. */
const asText = (text: string, mask: (text: string) => string) =>
  mask(text.slice(0, 4000 + 1024)).slice(0, 4000);

/** The answer parsed, once measured within the bounds of every JSON text from outside. */
async function parsedAnswer(text: string, mask: (text: string) => string): Promise<unknown> {
  const scan = quickScan(text) ?? (await scanJsonInTurns(text));
  if (brokenBound(scan, "the answer")) return asText(text, mask);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return asText(text, mask);
  }
  // Masked once parsed, so that an echo escaped in JSON (`\u0026`, `\"`) is found as well.
  return maskedValue(parsed, mask);
}

/**
 * One call to MBS: with the APP's credentials as MBS wants them, a request id of its own (sent as
 * `x-request-id` and named in every error, so an attempt can be found in the authority's logs), a
 * time limit, and no redirect followed (the credentials go to the configured host only). The
 * credentials appear in no message this makes, and are masked (MASK) in every answer it reads: the
 * authority's texts are kept and shown to tenants (`authority_error`, the attempts' errors), and an
 * answer that echoed the request's headers would otherwise carry the shared key to them.
 */
export function mbsClient(settings: MbsSettings) {
  const mask = secretMasker([settings.apiKey, settings.apiSecret]);
  const headers = {
    "content-type": "application/json",
    accept: "application/json",
    "x-api-key": settings.apiKey,
    "x-api-secret": settings.apiSecret,
  };

  return {
    async call(
      step: string,
      method: "GET" | "POST" | "PATCH",
      path: string,
      signal: AbortSignal,
      body?: unknown,
      /**
       * `maxBytes`: a successful answer's bound, over which the call fails (default: cut off at
       * 1 MiB, as every other answer is); `readOk`: how a successful answer is read (default: parsed).
       */
      options: { maxBytes?: number; readOk?: AnswerReader } = {},
    ): Promise<MbsAnswer & { requestId: string }> {
      const requestId = randomUUID();
      const limit = AbortSignal.timeout(settings.callTimeoutMs);
      const both = AbortSignal.any([signal, limit]);
      let response: Response;
      try {
        response = await fetch(`${settings.url}${path}`, {
          method,
          headers: { ...headers, "x-request-id": requestId },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: both,
          redirect: "manual",
        });
      } catch (err) {
        if (limit.aborted && !signal.aborted) {
          throw new DeliveryError(
            `MBS ${step} gave no answer within ${settings.callTimeoutMs} ms (request ${requestId})`,
          );
        }
        if (signal.aborted) throw err;
        const reason = (err as { cause?: { code?: string; message?: string } }).cause;
        const cause = reason?.code ?? reason?.message;
        throw new DeliveryError(
          `MBS ${step} unreachable: ${cause ?? (err as Error).message} (request ${requestId})`,
        );
      }
      if (isRedirect(response.status)) {
        await response.body?.cancel();
        throw new DeliveryError(
          `MBS ${step} answered a redirect, not followed: ${mask(redirectOf(response))} (request ${requestId})`,
        );
      }
      const ok = response.status >= 200 && response.status <= 299;
      let bytes: Buffer | null;
      try {
        const strict = ok && options.maxBytes !== undefined;
        bytes = await readBytes(response, strict ? (options.maxBytes ?? 0) : MAX_BODY_BYTES, strict);
      } catch (err) {
        if (signal.aborted) throw err;
        if (err instanceof AnswerTooLarge)
          throw new DeliveryError(`MBS ${step}'s answer is ${err.message} (request ${requestId})`);
        // The connection dropped mid-answer: whether the call took effect is unknown.
        throw new DeliveryError(`MBS ${step}'s answer was cut off (request ${requestId})`);
      }
      if (bytes === null) return { status: response.status, body: null, requestId };
      if (ok && options.readOk) {
        try {
          const body = await options.readOk(bytes, (value) => maskedValue(value, mask));
          return { status: response.status, body, requestId };
        } catch (err) {
          throw new DeliveryError(
            `MBS ${step} answered ${response.status} ${mask((err as Error).message)} (request ${requestId})`,
          );
        }
      }
      return { status: response.status, body: await parsedAnswer(bytes.toString("utf8"), mask), requestId };
    },
  };
}

export type MbsClient = ReturnType<typeof mbsClient>;
