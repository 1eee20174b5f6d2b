import { randomUUID } from "node:crypto";

export type Delivery = { irn: string; businessId: string; document: Record<string, unknown> };
export type Receipt = { reference: string; at: string };

/**
 * Where a signed invoice goes to be fiscalized. Delivery must be idempotent on the IRN: the same
 * invoice delivered twice is fiscalized once (the outbox retries after ambiguous failures).
 */
export type AuthorityConnector = {
  name: string;
  deliver(delivery: Delivery): Promise<Receipt>;
};

/** This service is the authority: a signed invoice is fiscalized the moment it is transmitted. */
export function builtinAuthority(): AuthorityConnector {
  return {
    name: "builtin",
    async deliver() {
      return { reference: `FISC-${randomUUID()}`, at: new Date().toISOString() };
    },
  };
}
