import type { FastifyReply, FastifyRequest } from "fastify";
import type { Violation } from "../errors.ts";
import { action, withWarnings } from "../http/envelope.ts";
import { fingerprint } from "../idempotency/fingerprint.ts";
import { answerInside, type DeferredClaim } from "../idempotency/hook.ts";
import { KeyNotClaimed } from "../idempotency/with-work.ts";
import type { JsonText } from "../json-text.ts";
import type { AnswerOf, InvoiceRegistration } from "./registration/register.ts";

/*
 * A sign's answer and its Idempotency-Key: stored with the invoice, in the group commit's
 * transaction, and the key claimed once the body is checked.
 */

const signed = (warnings: Violation[], beyond: number) =>
  withWarnings(action("Invoice signed successfully", []), warnings, beyond);

/**
 * With an Idempotency-Key, a sign's answer is stored with its invoice, in the group commit's
 * transaction (answerInside): the body the route then sends as it is (`signAnswer`).
 */
export function answerOf(request: FastifyRequest, reply: FastifyReply): AnswerOf | undefined {
  const inside = answerInside(request);
  return (
    inside &&
    ((warnings, beyond) => {
      const body = reply.serialize(signed(warnings, beyond));
      return typeof body === "string" ? inside(body) : undefined;
    })
  );
}

/** A sign's success: the body stored with it as it is, else built and serialized as any answer. */
export function signAnswer(
  reply: FastifyReply,
  warnings: Violation[],
  beyond: number,
  answered: string | undefined,
) {
  if (answered !== undefined) return reply.type("application/json; charset=utf-8").send(answered);
  return signed(warnings, beyond);
}

/**
 * A keyed JSON sign whose key is claimed once its body is checked (claimAfterCheck): the
 * preparation thread works the fingerprint out as it parses the body for the check, where the event
 * loop parsed and canonicalized the body for the fingerprint alone. The key is then claimed in the
 * sign's own transaction, inserted with the answer the sign gives (DeferredClaim's `claimWith`): a
 * statement, a commit and a round trip less before the sign, and the answer's update after it gone
 * (bench/RESULTS.md, 2026-12-07). A key that was not claimed so (another request holds it, the
 * business's quota is full) leaves the document unsigned, and is claimed the usual way, which
 * answers as it did before the check (its answer replayed, or 409, 422, 429). A body refused by the
 * check claims the key with the fingerprint worked out here, so that its refusal is kept and
 * repeated as before.
 */
export async function signClaimingAfterCheck(
  request: FastifyRequest,
  reply: FastifyReply,
  invoices: InvoiceRegistration,
  key: DeferredClaim,
) {
  // The hook defers the claim only for a body left unparsed (claimAfterCheck).
  const body = request.body as JsonText;
  const parsed = () => body.value();
  let checked: Awaited<ReturnType<InvoiceRegistration["checkSign"]>>;
  try {
    checked = await invoices.checkSign(request.principal, body);
  } catch (err) {
    if (await key.claim(await fingerprint(await parsed()))) return reply;
    throw err;
  }
  const print = checked.fingerprint ?? (await fingerprint(await parsed()));
  const answer = reply.serialize(signed(checked.warnings, checked.warningsBeyond));
  const withKey = typeof answer === "string" ? key.claimWith(print, answer) : undefined;
  if (withKey) {
    const failed = await checked
      .commit(() => withKey)
      .then(
        () => undefined,
        (err: unknown) => ({ err }),
      );
    if (!failed) {
      key.holdAnswered(withKey);
      return signAnswer(reply, checked.warnings, checked.warningsBeyond, withKey.body);
    }
    // Claimed, and the sign refused in its committed transaction (its IRN taken): the key is this
    // request's, for its refusal to be stored.
    if (withKey.claiming?.won) {
      key.holdRefused(withKey);
      throw failed.err;
    }
    // Not claimed with the sign (KeyNotClaimed), or failed otherwise (a transaction that failed
    // took its claim with it): the key is claimed the usual way, and a key held meanwhile answers
    // first. Another failure is then answered, its refusal kept; a key not claimed signs below.
    if (await key.claim(print)) return reply;
    if (!(failed.err instanceof KeyNotClaimed)) throw failed.err;
  } else if (await key.claim(print)) return reply;
  const { warnings, warningsBeyond, answered } = await checked.commit(answerOf(request, reply));
  return signAnswer(reply, warnings, warningsBeyond, answered);
}
