import { compiledByCount, type Read, read } from "../db/batch-statements.ts";
import { type Db, type Executor, engineOf } from "../db/database.ts";

/** The one row that says which data key new values are sealed under (migration 0010). */
export function dataKeyStateRepository(db: Db) {
  function currentRead(tx: Executor = db, options: { share?: boolean } = {}): Read<string | null> {
    const share = options.share && engineOf(tx) === "postgres";
    const query = compiledByCount(tx, share ? "data key, shared" : "data key", [1], () => {
      const built = tx.selectFrom("data_key_state").select("kid").where("id", "=", 1);
      return share ? built.forShare() : built;
    });
    return { query, answer: (rows) => (rows[0]?.kid as string | null | undefined) ?? null };
  }
  return {
    /**
     * The key id `keys rotate-data-key` made current, or null before any rotation. With `share`, on
     * PostgreSQL the row stays share-locked until the caller's transaction ends, so an update of it
     * (a rotation) waits for that transaction and is waited for by it; SQLite's single writer
     * orders write transactions by itself.
     */
    async current(tx: Executor = db, options: { share?: boolean } = {}): Promise<string | null> {
      return read(tx, currentRead(tx, options));
    },
    /** `current` built and not run, to be run with other reads (readTogether). */
    currentRead,

    async record(kid: string, at: string, tx: Executor = db): Promise<void> {
      await tx.updateTable("data_key_state").set({ kid, rotated_at: at }).where("id", "=", 1).execute();
    },
  };
}

export type DataKeyStateRepository = ReturnType<typeof dataKeyStateRepository>;
