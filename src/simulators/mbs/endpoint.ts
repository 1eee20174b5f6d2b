import type { IncomingHttpHeaders } from "node:http";
import type { Answer, MbsError } from "./envelopes.ts";
import type { FaultPlanner, PrefixRule, RateClass } from "./faults.ts";
import type { InboundSource } from "./inbound.ts";
import type { Query } from "./paging.ts";
import type { Registry } from "./registry.ts";
import type { ReferenceCodes } from "./resources.ts";
import type { Rules } from "./rules.ts";
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
  /**
   * One of the simulator's own routes (`/_simulator/…`), not MBS's: it needs the APP credential but
   * takes no injected fault, not even downtime, so a test can set up its case whatever faults run.
   */
  control?: boolean;
  /** Fault classes of this endpoint alone (`try_later`, `duplicate`; `not_enabled`, `partial`, `no_webhook`). */
  extra?: readonly RateClass[];
  /** Invoice-number words that force a fault on this endpoint's first calls for an IRN. */
  prefixes?: readonly PrefixRule[];
  /** A route that exists only under a rule; otherwise it answers the no-route 404, as an unknown path. */
  enabled?: (rules: Rules) => boolean;
  /**
   * A refusal of the request's own path parameters that MBS answers before it looks at the
   * credentials [recorded: the entity id]; undefined lets the request go on to the credential check.
   */
  beforeCredentials?: (params: Readonly<Record<string, string>>) => MbsError | undefined;
  handle: (request: SimRequest) => Answer | Promise<Answer>;
};

/** What the route groups are built from. */
export type SimContext = {
  seed: number;
  credentials: Credentials;
  registry: Registry;
  /** The rules in force now (they may change while the simulator runs). */
  rules: () => Rules;
  /** The reference lists, by name. */
  resources: Readonly<Record<string, readonly object[]>>;
  /** The codes of the lists served, which documents are checked against. */
  codes: ReferenceCodes;
  /** Counts a fault a handler decides on itself (an invoice number marked REJECT). */
  faults: Pick<FaultPlanner, "count">;
  /** The invoices other APPs' sellers send to the taxpayers (inbound.ts). */
  inbound: InboundSource;
};
