import { messageOf } from "../../outbox/failure.ts";
import { type AuthorityConnector, DeliveryError, type ProbeAnswer } from "./connector.ts";

/**
 * How long a probe's answer stands for the refusals that follow it. Long enough that a run of
 * refusals (one tenant's invoices, each refused by a firewall for its note) costs one probe, not
 * one each; short enough that a credential revoked or fixed meanwhile is seen within seconds. A
 * credential revoked just after a probe passed is refused meanwhile as if for the request: those
 * attempts are counted (never failed for good, see `judged`), and the hold opens on the next probe.
 */
export const PROBE_MEMO_MS = 3000;

/** A probe's answer, and when it was given. */
export type Probed = ProbeAnswer & { at: string };

/**
 * The connector's content-free probe of its credential, asked at most once at a time: whoever asks
 * while it runs shares its answer. `ask` takes an answer given within `memoMs` (a refused job's
 * judgement); `fresh` asks again (the hold's probe, once per interval in all processes). The probe
 * has its own time limit: it answers every one who shares it, whoever stops waiting first.
 */
export function credentialProbe(deps: {
  probe: NonNullable<AuthorityConnector["probe"]>;
  timeoutMs: number;
  memoMs?: number;
}) {
  const memoMs = deps.memoMs ?? PROBE_MEMO_MS;
  let running: Promise<Probed> | undefined;
  let last: { at: number; probed: Probed } | undefined;

  function fresh(): Promise<Probed> {
    running ??= deps
      .probe(AbortSignal.timeout(deps.timeoutMs))
      .catch((err: unknown): ProbeAnswer => ({ outcome: "unanswered", message: messageOf(err) }))
      .then((answer) => {
        const at = Date.now();
        last = { at, probed: { ...answer, at: new Date(at).toISOString() } };
        running = undefined;
        return last.probed;
      });
    return running;
  }

  return {
    fresh,
    ask: (): Promise<Probed> =>
      last && Date.now() - last.at < memoMs ? Promise.resolve(last.probed) : fresh(),
  };
}

export type CredentialProbe = ReturnType<typeof credentialProbe>;

/** `work`, or the signal's reason as soon as it aborts: a caller's time limit is kept while it waits. */
function until<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason);
    signal.addEventListener("abort", stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
  });
}

/**
 * What a call that carried a tenant's content (a document, an IRN) and was answered as a refused
 * credential is (401, 403, MBS's credential 400), by asking the probe:
 *
 * - the probe refused too: the credential is refused (the hold opens; the job waits on it, not
 *   counted). The message is the probe's alone: the hold shows it to every tenant, and the job's
 *   answer may echo its own content (a firewall's page, MBS's `details`);
 * - the probe passed: the refusal was of this request, not of the credential. An ordinary failed
 *   attempt, counted against the job's own budget, its answer kept verbatim. Not a permanent one:
 *   the pass may be a few seconds older than the refusal (`PROBE_MEMO_MS`), a credential revoked in
 *   between must not fail invoices for good, and a firewall's rule may be lifted; the budget ends it;
 * - the probe got no answer: nothing is known, a retryable failure like any other without an answer.
 */
export async function judged(err: DeliveryError, probe: CredentialProbe, signal: AbortSignal) {
  const probed = await until(probe.ask(), signal);
  const kept = { answer: err.answer, state: err.state };
  switch (probed.outcome) {
    case "refused":
      return new DeliveryError(probed.message, false, { ...kept, hold: "configuration", credential: true });
    case "passed":
      return new DeliveryError(
        `${err.message}: refused for this request, not for the credential, which passed the credential probe at ${probed.at}`,
        false,
        kept,
      );
    default:
      return new DeliveryError(
        `${err.message}: whether the credential was refused is not known, the credential probe got no answer (${probed.message})`,
        false,
        kept,
      );
  }
}

/**
 * The connector, with each answer that reads as a refused credential to a call carrying a tenant's
 * content judged by the probe (`judged`): deliveries (the document), forwards (an IRN, a payment, a
 * report) and acknowledgements (an IRN the seller chose). A pull carries none (a window of days):
 * its refusal is evidence enough and is passed on as it is.
 */
export function probedAuthority(connector: AuthorityConnector, probe: CredentialProbe): AuthorityConnector {
  async function checked<T>(signal: AbortSignal, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof DeliveryError) || !err.credential) throw err;
      throw await judged(err, probe, signal);
    }
  }
  const { forward, receipts } = connector;
  return {
    ...connector,
    deliver: (delivery, signal) => checked(signal, () => connector.deliver(delivery, signal)),
    ...(forward ? { forward: (message, signal) => checked(signal, () => forward(message, signal)) } : {}),
    ...(receipts
      ? {
          receipts: {
            pull: (window, signal) => receipts.pull(window, signal),
            acknowledge: (irn, signal) => checked(signal, () => receipts.acknowledge(irn, signal)),
          },
        }
      : {}),
  };
}
