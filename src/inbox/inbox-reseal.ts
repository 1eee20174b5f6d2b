import type { Sealer } from "../crypto/sealer.ts";
import { type Resealer, resealUnder } from "../keys/rotation.ts";
import type { InboxRepository } from "./inbox-repository.ts";

const PAGE = 500;

/** The received invoices' part of a data-key rotation: their confidential fields, sealed under the IRN. */
export function receivedResealer(deps: {
  sealer: Pick<Sealer, "seal" | "open">;
  inbox: Pick<InboxRepository, "sealedNotUnder" | "setSealedIf">;
}): Resealer {
  const { sealer, inbox } = deps;
  return async (kid, underKey) => {
    let count = 0;
    // Keyset pages over the primary key: one pass, each row read once.
    for (let after = 0; ; ) {
      const page = await inbox.sealedNotUnder(kid, after, PAGE);
      const last = page.at(-1);
      if (!last) return count;
      await underKey(async (tx) => {
        for (const row of page) {
          // Compare-and-set: a value changed meanwhile is left as it now is.
          if (
            await inbox.setSealedIf(row.id, row.sealed, resealUnder(sealer, row.sealed, row.irn, kid), tx)
          ) {
            count += 1;
          }
        }
      });
      after = last.id;
    }
  };
}
