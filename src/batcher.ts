/** One item's result inside a batch: a batch never fails an item for another item's fault. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

export type Batcher<I, O> = {
  /** Resolves with the item's own outcome once the batch holding it is done. */
  submit(item: I): Promise<O>;
};

/**
 * Hands the items submitted in one turn of the event loop to `run` together, at most `maxBatch` at
 * a time and `concurrency` batches in flight. `run` answers one outcome per item, in order, and each
 * item is answered only when `run` returns: for a group commit (see the invoice service), only after
 * the shared commit, so an acknowledged result is as durable as with a commit of its own. If `run`
 * itself throws, every item of its batch fails with that error. Under light load a batch holds one
 * item and nothing waits.
 */
export function batcher<I, O>(
  run: (items: I[]) => Promise<Outcome<O>[]>,
  options: { maxBatch: number; concurrency: number },
): Batcher<I, O> {
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
