import { randomUUID } from "node:crypto";
import type { AuthorityConnector } from "./connector.ts";

/** This service is the authority: a signed invoice is fiscalized the moment it is transmitted. */
export function builtinAuthority(): AuthorityConnector {
  return {
    name: "builtin",
    async deliver() {
      return { reference: `FISC-${randomUUID()}`, at: new Date().toISOString() };
    },
  };
}
