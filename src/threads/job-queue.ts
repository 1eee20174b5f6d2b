/*
 * The queues a WorkerPool (worker-pool.ts) takes its jobs from: what a queue hands over, and the
 * plain one, in order of arrival. The fair one, by business, is fair-queue.ts.
 */

/** A job as a queue hands it over: the pool settles it once. */
export type QueuedJob<I, O> = { readonly input: I; resolve(value: O): void; reject(err: Error): void };

/** Where the pool takes its jobs from: a FairQueue (src/threads/fair-queue.ts) or a Fifo. */
export type JobQueue<I, O> = {
  readonly waiting: number;
  take(): QueuedJob<I, O> | undefined;
  clear(err: Error): void;
};

/** Jobs in order of arrival, for callers that bound their own numbers. */
export class Fifo<I, O> implements JobQueue<I, O> {
  private jobs: QueuedJob<I, O>[] = [];

  get waiting(): number {
    return this.jobs.length;
  }

  submit(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => this.jobs.push({ input, resolve, reject }));
  }

  take(): QueuedJob<I, O> | undefined {
    return this.jobs.shift();
  }

  clear(err: Error): void {
    const jobs = this.jobs;
    this.jobs = [];
    for (const job of jobs) job.reject(err);
  }
}
