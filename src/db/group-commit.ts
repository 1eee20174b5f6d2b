/** One item's result inside a batch: a batch never fails an item for another item's fault. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

export type GroupCommit<I, O> = {
  /** Resolves with the item's own outcome once the batch holding it has committed. */
  submit(item: I): Promise<O>;
};

/**
 * Group commit. The items submitted in one turn of the event loop are handed to `run` together, so
 * they share one transaction, one commit (on SQLite, one fsync of the WAL) and a few multi-row
 * statements instead of a transaction and about ten statements each. `run` answers one outcome per
 * item, in order; an item is answered only after `run` returns, that is after the shared commit, so
 * an acknowledged result is as durable as with a commit of its own. If `run` itself throws (the
 * transaction could not begin or commit), every item of the batch fails with that error.
 *
 * `concurrency` batches may be in flight at once: one where the engine has one writer (SQLite),
 * more where transactions run side by side on a pool (PostgreSQL). Under light load a batch holds
 * one item and nothing waits.
 */
export function groupCommit<I, O>(
  run: (items: I[]) => Promise<Outcome<O>[]>,
  options: { maxBatch: number; concurrency: number },
): GroupCommit<I, O> {
  type Pending = { item: I; resolve(value: O): void; reject(reason: unknown): void };
  let queue: Pending[] = [];
  let running = 0;
  let scheduled = false;

  async function runBatch(batch: Pending[]): Promise<void> {
    let outcomes: Outcome<O>[];
    try {
      outcomes = await run(batch.map((pending) => pending.item));
    } catch (error) {
      for (const pending of batch) pending.reject(error);
      return;
    }
    batch.forEach((pending, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok) pending.resolve(outcome.value);
      else pending.reject(outcome ? outcome.error : new Error("the batch gave no outcome for this item"));
    });
  }

  function schedule(): void {
    if (scheduled || running >= options.concurrency || queue.length === 0) return;
    scheduled = true;
    // Statements complete within microtasks on SQLite, so a batch started at once would hold only
    // its first item. Starting it after the event loop's poll phase gathers every request read in
    // that phase; under light load that is the same turn, without a timer.
    setImmediate(() => {
      scheduled = false;
      while (running < options.concurrency && queue.length > 0) {
        const batch = queue.slice(0, options.maxBatch);
        queue = queue.slice(batch.length);
        running++;
        void runBatch(batch).finally(() => {
          running--;
          schedule();
        });
      }
    });
  }

  return {
    submit(item: I): Promise<O> {
      return new Promise<O>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        schedule();
      });
    },
  };
}

/**
 * Splits rows for multi-row statements into chunks whose sizes are powers of two (at most `max`):
 * a statement's text depends on its row count, and prepared statements are kept by text, so a few
 * sizes are prepared once instead of one statement per batch size.
 */
export function powerOfTwoChunks<T>(rows: readonly T[], max = 64): T[][] {
  const chunks: T[][] = [];
  let at = 0;
  while (at < rows.length) {
    let size = max;
    while (size > rows.length - at) size /= 2;
    chunks.push(rows.slice(at, at + size));
    at += size;
  }
  return chunks;
}
