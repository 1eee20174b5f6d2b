import type { Sealer } from "../crypto/sealer.ts";
import { type Resealer, resealUnder } from "../keys/rotation.ts";
import type { InvoiceRepository } from "./invoice-repository.ts";

const PAGE = 500;

/** The invoices' part of a data-key rotation: their confidential fields, sealed under the IRN. */
export function invoiceResealer(deps: {
  sealer: Pick<Sealer, "seal" | "open">;
  invoices: Pick<InvoiceRepository, "sealedNotUnder" | "setSealedIf">;
}): Resealer {
  const { sealer, invoices } = deps;
  return async (kid, underKey) => {
    let count = 0;
    // Keyset pages over the primary key: one pass, each row read once.
    for (let after = ""; ; ) {
      const page = await invoices.sealedNotUnder(kid, after, PAGE);
      const last = page.at(-1);
      if (!last) return count;
      await underKey(async (tx) => {
        for (const row of page) {
          const sealed = row.sealed as string;
          // Compare-and-set: a value changed meanwhile is left as it now is.
          if (await invoices.setSealedIf(row.irn, sealed, resealUnder(sealer, sealed, row.irn, kid), tx)) {
            count += 1;
          }
        }
      });
      after = last.irn;
    }
  };
}
