/**
 * An attempt that did not get through. `permanent` ones (the receiver refused the job itself) are
 * not retried; all others (network, timeouts, 5xx, 429) are, within the retry budget. A sender's
 * own kind of failure (the authority's DeliveryError) extends this one with what it knows more.
 */
export class JobFailure extends Error {
  readonly permanent: boolean;
  constructor(message: string, permanent = false) {
    super(message);
    this.name = "JobFailure";
    this.permanent = permanent;
  }
}

/** What is recorded of a failure: its message. */
export const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));
