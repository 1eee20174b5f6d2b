import type { FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { type DomainCode, DomainError } from "../errors.ts";
import { JsonText } from "../json-text.ts";
import { keptAsIs, sha256 } from "./answers.ts";
import { fingerprint } from "./fingerprint.ts";
import type { Begun, Claim, IdempotencyService } from "./idempotency-service.ts";
import type { AnswerWith } from "./with-work.ts";

export const IDEMPOTENCY_HEADER = "idempotency-key";
export const REPLAYED_HEADER = "idempotent-replayed";
const KEY = /^[\x20-\x7E]+$/;
const MAX_KEY_LENGTH = 255;

/** For the route schemas: the request header (checked by the hook itself) and the replay header. */
export const IdempotencyHeaders = Type.Object({
  [IDEMPOTENCY_HEADER]: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_KEY_LENGTH,
      pattern: KEY.source,
      description:
        "makes a retry safe: the same key with the same body within 24 hours answers what the first request answered (status and body, with `Idempotent-Replayed: true`) instead of doing it again; 1 to 255 printable ASCII characters, e.g. a UUID",
    }),
  ),
});
export const ReplayedHeader = {
  "Idempotent-Replayed": {
    type: "string",
    enum: ["true"],
    description: "present on an answer replayed for a repeated Idempotency-Key",
  },
};

/**
 * Whether an answer is the outcome of the request, to replay to its retries. Refusals before any
 * work (credentials, rate limit, timeout) and server failures are not: a retry must run afresh. The
 * queued answer of sign-transmit is, although a 503: the invoice is signed, and a retry must hear so.
 */
function isOutcome(status: number, error: unknown): boolean {
  if (status === 401 || status === 408 || status === 429) return false;
  // `IRN already exists.` for this very document says so in a header, which a stored answer does
  // not keep: a retry runs afresh instead, and finds the same document signed.
  if (error instanceof DomainError && error.identicalSignedAt !== undefined) return false;
  if (status < 500) return true;
  return error instanceof DomainError && error.code === "transmission_queued";
}

/** Refusals that come before anything is written: a request refused so changed nothing. */
const REFUSED_UNCHANGED = new Set<DomainCode>([
  "invalid_request",
  "validation_failed",
  "batch_refused",
  "irn_exists",
  "payload_too_large",
  "unsupported_media_type",
]);

/**
 * Whether an answer too large to keep (see `answers.ts`) came from a request that changed nothing,
 * so that a retry may run it again: a refusal before any write, or a batch none of whose documents
 * was signed (each invalid or a duplicate). Anything else did, or may have, done something.
 */
function changedNothing(status: number, error: unknown, body: string): boolean {
  if (error instanceof DomainError) return REFUSED_UNCHANGED.has(error.code);
  // The framework's own refusals (the body's schema, its JSON) come before the handler runs.
  if (error !== undefined) return status >= 400 && status < 500;
  if (status !== 200) return false;
  try {
    const { data } = JSON.parse(body) as { data?: unknown };
    return (
      Array.isArray(data) &&
      data.length > 0 &&
      data.every((result: { status?: unknown } | null) =>
        ["invalid", "duplicate"].includes(String(result?.status)),
      )
    );
  } catch {
    return false;
  }
}

function keyProblem(key: string): string | undefined {
  if (key.length > MAX_KEY_LENGTH) return `is ${key.length} characters long; at most ${MAX_KEY_LENGTH}`;
  if (key.length === 0) return "is empty";
  if (!KEY.test(key)) return "holds a character that is not printable ASCII";
  return undefined;
}

/**
 * The key each request in flight holds: what it replaces (a rerun of an answer too large to keep),
 * the error it failed with, and the body of its answer when that was stored with its work
 * (`answerInside`).
 */
type Held = {
  claim: Claim;
  replaces?: (Begun & { kind: "claimed" })["replaces"];
  error?: unknown;
  inside?: string;
};
const held = new WeakMap<FastifyRequest, Held>();

/**
 * The key of a request whose route claims it itself (`claimAfterCheck`), once its body is checked,
 * with the fingerprint the preparation thread worked out as it parsed the body for the check,
 * instead of the event loop parsing and canonicalizing it first for the fingerprint alone.
 */
export type DeferredClaim = {
  /**
   * Claims the key before the work: answers as this hook would have answered before the handler
   * (false: claimed, the handler goes on; true: a replay was sent, the handler returns the reply;
   * or it throws 409, 422, 429). A body refused by its check is to claim the key so too, before
   * its refusal is sent, so that the refusal is kept and repeated as any answer is.
   */
  claim(fingerprint: string): Promise<boolean>;
  /**
   * The answer to claim the key with in the transaction of the work, the work's success (200)
   * answering `body` (`claimWith`): undefined for a body over 1 KiB, to claim before the work.
   */
  claimWith(fingerprint: string, body: string): AnswerWith | undefined;
  /**
   * The key claimed with the work (`claimWith`, its `claiming.won`), which committed: its answer is
   * stored, the one the route sends.
   */
  holdAnswered(answer: AnswerWith): void;
  /**
   * The key claimed with the work, which was refused in its transaction (its answer taken back):
   * the request's answer is to be stored as any answer.
   */
  holdRefused(answer: AnswerWith): void;
};

const deferred = new WeakMap<FastifyRequest, DeferredClaim>();

/**
 * For a route configured `claimAfterCheck` that received a JSON body unparsed (JsonText) with an
 * Idempotency-Key: its key, for the handler to claim (DeferredClaim), handed over once. Undefined
 * for any other request.
 *
 * The entry goes as it is taken (or as the answer leaves, for a request whose handler never ran),
 * not when the request is collected. Its value's closures hold the request and its reply, and V8's
 * young-generation collection holds the values of a WeakMap that lives in the old generation:
 * every keyed sign's request, body and reply survived each scavenge while its entry lasted, and
 * went to the old generation. Measured at saturation, one process: its scavenges 4.8 ms against
 * 2.6 ms, 1.7 MB promoted by each against 0.15–0.6 MB (bench/RESULTS.md, 2026-12-07, on another VM
 * type).
 */
export function claimAfterCheck(request: FastifyRequest): DeferredClaim | undefined {
  const claim = deferred.get(request);
  deferred.delete(request);
  return claim;
}

/**
 * For a route that stores its success's answer with the writes of its work, in their transaction
 * (a sign: group-commit.ts), instead of in a statement and a commit of its own before the answer
 * leaves: given the 200 answer's body, the answer to store with the work (undefined when it is over
 * 1 KiB, kept otherwise). The route then sends exactly that body; this hook finds it already stored
 * and stores nothing. Any other answer (a failure, another body) is stored as any route's. Undefined
 * when the request holds no key, or runs again in place of an answer too large to keep.
 */
export function answerInside(
  request: FastifyRequest,
): ((body: string) => AnswerWith | undefined) | undefined {
  const holding = held.get(request);
  if (!holding || holding.replaces) return undefined;
  return (body) => {
    if (!keptAsIs(body)) return undefined;
    holding.inside = body;
    return { claim: holding.claim, status: 200, body };
  };
}

/**
 * Route options that make a route honour Idempotency-Key: spread into the options of each route
 * that opts in. The key is claimed before the body is validated (or, with `claimAfterCheck`, before
 * the refusal of a body its check refused is sent), so a request refused as invalid is answered
 * the same way when repeated.
 */
export function idempotent(
  idempotency: Pick<IdempotencyService, "begin" | "complete" | "release" | "answeredWith" | "claimWith">,
) {
  return {
    async preValidation(request: FastifyRequest, reply: FastifyReply) {
      const raw = request.headers[IDEMPOTENCY_HEADER];
      if (raw === undefined) return;
      // A body its route checks before the key is claimed stays unparsed here (`claimAfterCheck`).
      const deferring =
        request.body instanceof JsonText && request.routeOptions.config?.claimAfterCheck === true;
      // A body left unparsed (JsonText) is parsed before anything else here, as the body parser
      // would have parsed it: one that does not parse is refused as such, before the key is read.
      const parsed =
        request.body instanceof JsonText && !deferring ? await request.body.value() : request.body;
      const key = Array.isArray(raw) ? raw.join(", ") : raw;
      const problem = keyProblem(key);
      if (problem) {
        // The same precedence for a body left unparsed: one that does not parse is refused as such.
        if (deferring) await (request.body as JsonText).value();
        throw new DomainError("invalid_request", {
          message: request.routeOptions.config?.failureMessage ?? "Invalid request",
          details: `the Idempotency-Key header ${problem}`,
          violations: [
            {
              path: `headers.${IDEMPOTENCY_HEADER}`,
              rule: "idempotency_key",
              message: `must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters`,
            },
          ],
        });
      }
      const keyed = (print: string) => ({
        businessId: request.principal.businessId,
        key,
        route: `${request.method} ${request.routeOptions.url}`,
        fingerprint: print,
      });
      // True when the key's earlier answer was sent instead (a replay). Not the reply itself: it
      // is a thenable, which an async function's promise would wait for and resolve to undefined.
      const claim = async (print: string): Promise<boolean> => {
        // The connection closing before the answer: the client gave up (and may be retrying).
        const gone = new AbortController();
        const away = () => gone.abort();
        reply.raw.once("close", away);
        const begun = await idempotency
          .begin(keyed(print), gone.signal)
          .finally(() => reply.raw.off("close", away));
        if (begun.kind === "claimed") {
          held.set(request, { claim: begun.claim, ...(begun.replaces ? { replaces: begun.replaces } : {}) });
          return false;
        }
        const { status, body, retryAfter } = begun.answer;
        if (retryAfter !== null) void reply.header("retry-after", String(retryAfter));
        void reply
          .header(REPLAYED_HEADER, "true")
          .code(status)
          .type("application/json; charset=utf-8")
          .send(body);
        return true;
      };
      if (deferring) {
        deferred.set(request, {
          claim,
          claimWith: (print, body) => idempotency.claimWith(keyed(print), 200, body),
          holdAnswered: (answer) => held.set(request, { claim: answer.claim, inside: answer.body }),
          holdRefused: (answer) => held.set(request, { claim: answer.claim }),
        });
        return;
      }
      // Returning the reply ends the request here: the route's handler does not run.
      if (await claim(await fingerprint(parsed))) return reply;
    },

    async onError(request: FastifyRequest, _reply: FastifyReply, error: unknown) {
      const holding = held.get(request);
      if (holding) holding.error = error;
    },

    /** Stores the answer before it leaves: a retry that follows it finds it. */
    async onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
      // A deferred claim its handler never took (refused before it ran): see claimAfterCheck.
      deferred.delete(request);
      const holding = held.get(request);
      if (!holding) return payload;
      held.delete(request);
      const { claim, replaces, error, inside } = holding;
      try {
        const body =
          typeof payload === "string" ? payload : Buffer.isBuffer(payload) ? payload.toString() : null;
        const status = reply.statusCode;
        // Stored with the work that it answers, which committed (the route sends it only then).
        if (inside !== undefined && status === 200 && body === inside && error === undefined) {
          idempotency.answeredWith(claim);
          return payload;
        }
        if (body !== null && isOutcome(status, error)) {
          // Run again for an answer too large to keep: when it answers the very same bytes, it is a
          // replay as far as the client can tell.
          if (replaces && replaces.status === status && replaces.sha256 === (await sha256(body))) {
            void reply.header(REPLAYED_HEADER, "true");
          }
          const retryAfter = Number(reply.getHeader("retry-after"));
          await idempotency.complete(claim, {
            status,
            body,
            retryAfter: Number.isInteger(retryAfter) ? retryAfter : null,
            changedNothing: () => changedNothing(status, error, body),
          });
        } else {
          await idempotency.release(claim);
        }
      } catch (err) {
        // The answer goes out all the same; a key left claimed is taken over once it is stale.
        request.log.warn({ err, key: claim.key }, "storing the answer of an Idempotency-Key failed");
        await idempotency.release(claim).catch(() => {});
      }
      return payload;
    },
  };
}
