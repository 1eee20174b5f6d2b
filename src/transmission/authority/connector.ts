export type Delivery = { irn: string; businessId: string; document: Record<string, unknown> };
export type Receipt = { reference: string; at: string };

/**
 * A delivery that did not happen. `permanent` ones (the authority refused the invoice itself) are
 * not retried; all others (network, timeouts, 5xx, 429, refused credentials) are.
 */
export class DeliveryError extends Error {
  readonly permanent: boolean;
  constructor(message: string, permanent = false) {
    super(message);
    this.name = "DeliveryError";
    this.permanent = permanent;
  }
}

/**
 * Where a signed invoice goes to be fiscalized. Delivery must be idempotent on the IRN: the outbox
 * retries after ambiguous failures, so the same invoice may arrive twice and is fiscalized once.
 */
export type AuthorityConnector = {
  name: string;
  deliver(delivery: Delivery, signal: AbortSignal): Promise<Receipt>;
};

/** 3xx with somewhere to go (304 Not Modified goes nowhere, but is no answer to a delivery either). */
export const isRedirect = (status: number) => status >= 300 && status <= 399;

/** `302 to <Location>` for the record, the location cut short: it is the remote side's text. */
export function redirectOf(response: Pick<Response, "status" | "headers">): string {
  const location = response.headers.get("location");
  const shown = location === null ? "no Location" : JSON.stringify(location.slice(0, 300));
  return `${response.status} to ${shown}`;
}
