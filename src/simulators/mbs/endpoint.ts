import type { IncomingHttpHeaders } from "node:http";
import type { Answer } from "./envelopes.ts";
import type { FaultPlanner, PrefixRule, RateClass } from "./faults.ts";
import type { Query } from "./paging.ts";
import type { Registry } from "./registry.ts";
import type { Credentials } from "./taxpayers.ts";

/** What a handler sees of a request. */
export type SimRequest = {
  params: Record<string, string>;
  query: Query;
  body: unknown;
  headers: IncomingHttpHeaders;
};

/** One route of the simulated API, with what the server needs to authenticate it and inject faults. */
export type Endpoint = {
  method: "GET" | "POST" | "PATCH";
  url: string;
  /** `error.handler` of its error answers. */
  handler: string;
  /** Answers without credentials and takes no injected fault but downtime (health, resource lists). */
  open?: boolean;
  /** Fault classes of this endpoint alone (`duplicate` on sign; `not_enabled`, `partial` on transmit). */
  extra?: readonly RateClass[];
  /** Invoice-number words that force a fault on this endpoint's first calls for an IRN. */
  prefixes?: readonly PrefixRule[];
  handle: (request: SimRequest) => Answer | Promise<Answer>;
};

/** What the route groups are built from. */
export type SimContext = {
  seed: number;
  credentials: Credentials;
  registry: Registry;
  /** Counts a fault a handler decides on itself (an invoice number marked REJECT). */
  faults: Pick<FaultPlanner, "count">;
};
