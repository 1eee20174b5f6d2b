import canonicalize from "canonicalize";
import { isRedirect, redirectOf } from "../../redirects.ts";
import {
  type AuthorityConnector,
  type Delivery,
  DeliveryError,
  type ProbeAnswer,
  type Receipt,
} from "./connector.ts";

type Envelope = { status?: boolean; code?: number; message?: string; data?: unknown; error?: unknown };

/**
 * The credential's probe: the API's health check, `GET /`. It carries no tenant's content and
 * needs the credential: every endpoint of the API answers 401 without valid ones, the health check
 * included (its liveness and readiness checks need none, so they could not tell).
 */
export const HTTP_PROBE_PATH = "/";

/** An upstream's answer: its status, its envelope, or (not JSON: a proxy's page) its text, bounded. */
type Answer = { status: number; envelope: Envelope; page?: string };

// 409: an earlier attempt with the same key is still being processed there.
const transient = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500;
// What a refused credential is answered with; judged by the probe before it pauses anyone.
const credentialLike = (status: number) => status === 401 || status === 403;

function describe({ status, envelope, page }: Answer): string {
  const details = (envelope.error as { details?: unknown } | undefined)?.details;
  const words = `${envelope.message ?? ""}${typeof details === "string" ? `: ${details}` : ""}`;
  return `upstream answered ${status} ${page === undefined ? words : JSON.stringify(page)}`.trim();
}

/** The failure of a call that did not succeed, by its status. */
function failure(answer: Answer): DeliveryError {
  if (!credentialLike(answer.status)) return new DeliveryError(describe(answer), !transient(answer.status));
  return new DeliveryError(describe(answer), false, {
    answer: { status: answer.status },
    hold: "configuration",
    credential: true,
  });
}

/** The answer's body: its envelope, or the text of a body that is not JSON, bounded. */
async function bodyOf(response: Response): Promise<Pick<Answer, "envelope" | "page">> {
  let text: string;
  try {
    text = await response.text();
  } catch {
    // The answer was cut off: its status is all there is.
    return { envelope: {} };
  }
  try {
    return { envelope: (JSON.parse(text) ?? {}) as Envelope };
  } catch {
    // Not JSON (a proxy's or a firewall's page): kept, bounded, for the people who read the error.
    return text === "" ? { envelope: {} } : { envelope: {}, page: text.slice(0, 200) };
  }
}

/**
 * An upstream API of the same shape (the national platform, or another instance of this service).
 * The IRN is the idempotency key: an upstream `IRN already exists.` for the same document means an
 * earlier attempt got through, and counts as delivered.
 */
export function httpAuthority(options: {
  url: string;
  apiKey: string;
  apiSecret: string;
}): AuthorityConnector {
  const headers = {
    "content-type": "application/json",
    accept: "application/json",
    "api-key": options.apiKey,
    "api-secret": options.apiSecret,
  };

  async function call(
    method: "GET" | "POST",
    path: string,
    signal: AbortSignal,
    body?: unknown,
    irn?: string,
  ) {
    let response: Response;
    try {
      response = await fetch(`${options.url}${path}`, {
        method,
        headers: irn ? { ...headers, "idempotency-key": irn } : headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
        // The credentials go to the configured upstream only, never to wherever it points on.
        redirect: "manual",
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      throw new DeliveryError(`upstream unreachable: ${cause ?? (err as Error).message}`);
    }
    if (isRedirect(response.status)) {
      await response.body?.cancel();
      throw new DeliveryError(`upstream answered a redirect: ${redirectOf(response)}`);
    }
    // An upstream of this service's version replays the answer of an earlier attempt with the key.
    return {
      status: response.status,
      ...(await bodyOf(response)),
      replayed: response.headers.get("idempotent-replayed") === "true",
    };
  }

  async function probe(signal: AbortSignal): Promise<ProbeAnswer> {
    const answer = await call("GET", HTTP_PROBE_PATH, signal);
    if (answer.status === 200) return { outcome: "passed" };
    const message = `credential probe (health check): ${describe(answer)}`;
    return credentialLike(answer.status)
      ? { outcome: "refused", message }
      : { outcome: "unanswered", message };
  }

  async function receipt(irn: string, signal: AbortSignal): Promise<Receipt> {
    const lookup = await call("GET", `/api/v1/einvoice/lookup/${encodeURIComponent(irn)}`, signal);
    const data = (lookup.envelope.data ?? {}) as { authority_reference?: unknown; transmitted_at?: unknown };
    return {
      reference: typeof data.authority_reference === "string" ? data.authority_reference : `UPSTREAM-${irn}`,
      at: new Date().toISOString(),
    };
  }

  /** The upstream already holds this IRN: delivered if it is our document, and transmitted there. */
  async function reconcile(delivery: Delivery, signal: AbortSignal): Promise<Receipt> {
    const path = `/api/v1/einvoice/${encodeURIComponent(delivery.irn)}`;
    const held = await call("GET", path, signal);
    if (held.status !== 200) throw failure(held);
    const record = (held.envelope.data ?? {}) as { document?: unknown; status?: unknown };
    if (canonicalize(record.document) !== canonicalize(delivery.document)) {
      throw new DeliveryError(`upstream holds IRN ${delivery.irn} with a different document`, true);
    }
    if (record.status !== "TRANSMITTED") {
      const sent = await call("GET", `/api/v1/einvoice/transmit/${encodeURIComponent(delivery.irn)}`, signal);
      if (sent.status !== 200) throw failure(sent);
    }
    return receipt(delivery.irn, signal);
  }

  return {
    name: "http",
    async deliver(delivery, signal) {
      const sent = await call(
        "POST",
        "/api/v1/einvoice/sign-transmit",
        signal,
        delivery.document,
        delivery.irn,
      );
      if (sent.status === 200) return receipt(delivery.irn, signal);
      // Registered there before: by an earlier attempt (its answer replayed, or the IRN found taken).
      if (sent.status === 400 && sent.envelope.message === "IRN already exists.")
        return reconcile(delivery, signal);
      if (sent.status === 503 && sent.replayed) return reconcile(delivery, signal);
      throw failure(sent);
    },
    probe,
  };
}
