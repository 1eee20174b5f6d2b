import { type Sealer, sealedKid } from "../crypto/sealer.ts";
import { type Read, read } from "../db/batch-statements.ts";
import type { Executor } from "../db/database.ts";
import { DomainError } from "../errors.ts";
import type { DataKeyStateRepository } from "./key-state-repository.ts";

/** What one write transaction seals with: the key that was current when it read the state. */
export type SealingUnder = {
  kid: string;
  seal(value: string, context: string): string;
  /** A value sealed before the transaction (on the preparation thread), under `kid` if it was not. */
  reseal(sealed: string, context: string): string;
};

/**
 * Sealing that a data-key rotation cannot strand. Every write transaction that stores sealed values
 * asks `under(tx)` first: it reads the key `keys rotate-data-key` made current (share-locking it on
 * PostgreSQL; SQLite's write lock serialises the rest) and seals under that key. The rotation
 * records the new key in a write transaction of its own before it re-encrypts, so each write either
 * committed before that record (and the re-encryption, which starts after it, finds its rows) or
 * read the new key. A server that does not have the key answers 503 rather than seal under another.
 */
export function sealingService(deps: { sealer: Sealer; state: Pick<DataKeyStateRepository, "currentRead"> }) {
  const { sealer, state } = deps;
  /** `under` built and not run, to be run with other reads (readTogether). */
  function underRead(tx: Executor): Read<SealingUnder> {
    const current = state.currentRead(tx, { share: true });
    return {
      query: current.query,
      answer(rows) {
        const kid = current.answer(rows) ?? sealer.currentKid;
        if (!sealer.has(kid)) throw missingKey(kid);
        return {
          kid,
          seal: (value, context) => sealer.seal(value, context, kid),
          reseal: (sealed, context) =>
            sealedKid(sealed) === kid ? sealed : sealer.seal(sealer.open(sealed, context), context, kid),
        };
      },
    };
  }
  return {
    under: (tx: Executor): Promise<SealingUnder> => read(tx, underRead(tx)),
    underRead,
  };
}

export type SealingService = ReturnType<typeof sealingService>;

function missingKey(kid: string): DomainError {
  return new DomainError("service_unavailable", {
    message: "Service temporarily unavailable",
    details: `data key '${kid}', which \`keys rotate-data-key\` made current, is not configured in this process's EINVOICE_DATA_KEYS; nothing was changed, retry after the indicated delay`,
    publicMessage: "The service's encryption keys are being rotated; nothing was changed, retry in a moment.",
    retryAfter: 5,
  });
}
