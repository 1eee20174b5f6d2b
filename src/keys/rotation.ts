import type { Sealer } from "../crypto/sealer.ts";
import { type Db, type Executor, writeTransaction } from "../db/database.ts";
import type { DataKeyStateRepository } from "./key-state-repository.ts";

/**
 * Runs `work` in a write transaction that first checks `kid` is still the current data key: a second
 * rotation to another key started meanwhile has the last word, so this one stops.
 */
export type UnderKey = <T>(work: (tx: Executor) => Promise<T>) => Promise<T>;

/**
 * One domain's part of a rotation: re-encrypts every value it seals that is not under `kid`, each
 * batch of rows in `underKey`, and says how many it changed. The domains that own sealed rows
 * implement it (invoices/invoice-reseal.ts, webhooks/reseal.ts, inbox/inbox-reseal.ts), so this folder
 * reads none of their tables.
 */
export type Resealer = (kid: string, underKey: UnderKey) => Promise<number>;

/** A value opened and sealed again under `kid`, in the same context. */
export const resealUnder = (
  sealer: Pick<Sealer, "seal" | "open">,
  sealed: string,
  context: string,
  kid: string,
) => sealer.seal(sealer.open(sealed, context), context, kid);

/**
 * Data-key rotation: makes the first configured key current for every process, then re-encrypts
 * every sealed value (invoices' confidential fields, webhook secrets) under it, a page per
 * transaction. The key is recorded first, in a transaction of its own: from its commit on, every
 * write that seals uses the new key (see sealing.ts), so the single pass that follows finds every
 * row still under an old one. Values sealed under older keys stay readable throughout, so the
 * service keeps running while this runs; afterwards the old keys may be retired.
 */
export function dataKeyRotation(deps: {
  db: Db;
  sealer: Pick<Sealer, "currentKid">;
  state: Pick<DataKeyStateRepository, "current" | "record">;
  reseal: { invoices: Resealer; webhooks: Resealer; received: Resealer };
}) {
  const { db, sealer, state, reseal } = deps;

  return {
    async resealAll(): Promise<{ kid: string; invoices: number; webhooks: number; received: number }> {
      const kid = sealer.currentKid;
      await writeTransaction(db, (tx) => state.record(kid, new Date().toISOString(), tx));
      const underKey: UnderKey = (work) =>
        writeTransaction(db, async (tx) => {
          const now = await state.current(tx, { share: true });
          if (now !== kid) {
            throw new Error(
              `data key '${now}' was made current while re-encrypting under '${kid}': rotate again`,
            );
          }
          return work(tx);
        });
      const invoices = await reseal.invoices(kid, underKey);
      const webhooks = await reseal.webhooks(kid, underKey);
      const received = await reseal.received(kid, underKey);
      return { kid, invoices, webhooks, received };
    },
  };
}
