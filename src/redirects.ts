// Shared by every sender that calls a remote side (the authority connectors, the webhooks): none
// follows a redirect, since credentials and signed bodies go to the configured place only.

/** 3xx with somewhere to go (304 Not Modified goes nowhere, but is no answer to a delivery either). */
export const isRedirect = (status: number) => status >= 300 && status <= 399;

/** `302 to <Location>` for the record, the location cut short: it is the remote side's text. */
export function redirectOf(response: Pick<Response, "status" | "headers">): string {
  const location = response.headers.get("location");
  const shown = location === null ? "no Location" : JSON.stringify(location.slice(0, 300));
  return `${response.status} to ${shown}`;
}
