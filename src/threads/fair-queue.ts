import { DomainError } from "../errors.ts";

/**
 * The queue in front of a worker thread, shared between businesses: each business has a lane of at
 * most `share` waiting jobs, and the thread takes the first job of each lane in turn (round robin:
 * the lane of the business served least recently first), not the oldest job overall. A business
 * that floods the thread waits behind itself: another business's job waits for the job running and
 * at most one job of each other business waiting, however many the first one sent. When all `capacity` places are taken, the business with the longest lane
 * gives up its newest job to a business with a shorter one. A job whose AbortSignal fires while it
 * waits (its client closed the connection) leaves the queue at once and is never run.
 *
 * Jobs submitted without a business (the operator's CLI, the benchmarks) share one lane bounded by
 * `capacity` alone.
 */

/** What a refusal says of the refused business's backlog. */
export type Backlog = {
  /** Its jobs waiting, and being run, when it was refused. */
  waiting: number;
  running: number;
  /** Why: its own lane is full, or every place of the queue is taken. */
  reason: "share" | "capacity";
  /** Seconds after which a retry may find room: a round of the lanes at the recent jobs' pace. */
  retryAfter: number;
};

/** The business's share of the queue is used (or the whole queue is): the caller answers 503. */
export class QueueFull extends Error {
  readonly backlog: Backlog;
  constructor(message: string, backlog: Backlog) {
    super(message);
    this.backlog = backlog;
  }
}

/** The job's signal fired while it waited (its client went away): it was dropped, never run. */
export class JobDropped extends Error {}

export type FairQueueOptions = {
  /** Jobs of one business that may wait (e.g. 4). */
  share: number;
  /** Jobs that may wait in all. */
  capacity: number;
  /** The work, for messages: `{ one: "PDF", plural: "PDFs", verb: "rendered" }`. */
  work: { one: string; plural: string; verb: string };
  /** The pool's own refusal, a QueueFull (so callers can tell one pool's from another's). */
  refusal?: new (
    message: string,
    backlog: Backlog,
  ) => QueueFull;
};

/** A job taken off the queue: the pool runs it and settles it once; settling frees its place. */
export type Job<I, O> = {
  readonly business: string | undefined;
  readonly input: I;
  resolve(value: O): void;
  reject(err: Error): void;
};

type Waiting<I, O> = {
  business: string | undefined;
  input: I;
  resolve(value: O): void;
  reject(err: Error): void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
};

/** The lane of jobs without a business. */
const NO_BUSINESS = "";

export class FairQueue<I, O> {
  /** Lanes with waiting jobs, in order of arrival: the next job is the first of the lane served least recently. */
  private readonly lanes = new Map<string, Waiting<I, O>[]>();
  private readonly runningBy = new Map<string, number>();
  /** When each business with a job waiting or running was last served (a count of jobs taken). */
  private readonly servedAt = new Map<string, number>();
  private turn = 0;
  private waitingCount = 0;
  private averageMs: number | undefined;
  /** Jobs run to an answer, dropped before running (client gone), refused (queue full). */
  readonly counts = { ran: 0, dropped: 0, refused: 0 };

  constructor(private readonly options: FairQueueOptions) {}

  /** Jobs waiting, of every business. */
  get waiting(): number {
    return this.waitingCount;
  }

  /** Jobs taken and not yet settled. */
  get running(): number {
    let sum = 0;
    for (const n of this.runningBy.values()) sum += n;
    return sum;
  }

  /**
   * Queues a job; its promise settles with the job's answer, or rejects at once with a QueueFull
   * (the business's lane, or the whole queue, is full) or later with a JobDropped (the signal fired
   * before the job was taken).
   */
  submit(business: string | undefined, input: I, signal?: AbortSignal): Promise<O> {
    const key = business ?? NO_BUSINESS;
    if (signal?.aborted) {
      this.counts.dropped++;
      return Promise.reject(this.dropped());
    }
    const mine = this.lanes.get(key)?.length ?? 0;
    const share = business === undefined ? this.options.capacity : this.options.share;
    if (mine >= share) return this.refuse(key, "share");
    if (this.waitingCount >= this.options.capacity && !this.evictFor(mine)) {
      return this.refuse(key, "capacity");
    }
    return new Promise<O>((resolve, reject) => {
      const entry: Waiting<I, O> = {
        business,
        input,
        resolve,
        reject,
        signal,
        onAbort: () => this.drop(entry),
      };
      const lane = this.lanes.get(key);
      if (lane) lane.push(entry);
      else this.lanes.set(key, [entry]);
      this.waitingCount++;
      signal?.addEventListener("abort", entry.onAbort, { once: true });
    });
  }

  /** Throws the refusal a job of `business` would meet now, counted; returns when it would be let in. */
  admit(business: string | undefined): void {
    const refused = this.refusal(business);
    if (!refused) return;
    this.counts.refused++;
    throw refused;
  }

  /**
   * The refusal a job of `business` would meet now (its lane is full, or the queue is and no lane is
   * longer), so that a caller can refuse before preparing the job's input; undefined when it would
   * be let in.
   */
  refusal(business: string | undefined): QueueFull | undefined {
    const key = business ?? NO_BUSINESS;
    const mine = this.lanes.get(key)?.length ?? 0;
    const share = business === undefined ? this.options.capacity : this.options.share;
    if (mine >= share) return this.full(key, "share");
    if (this.waitingCount < this.options.capacity) return undefined;
    for (const lane of this.lanes.values()) if (lane.length > mine) return undefined;
    return this.full(key, "capacity");
  }

  /** The next job of the round (of the business served least recently), or undefined when nothing waits. */
  take(): Job<I, O> | undefined {
    let next: [string, Waiting<I, O>[]] | undefined;
    let nextAt = Number.POSITIVE_INFINITY;
    for (const lane of this.lanes) {
      // A business not served since it last had nothing queued comes first; ties in order of arrival.
      const at = this.servedAt.get(lane[0]) ?? -1;
      if (at < nextAt) [next, nextAt] = [lane, at];
    }
    if (!next) return undefined;
    const [key, lane] = next;
    const entry = lane.shift() as Waiting<I, O>;
    this.waitingCount--;
    if (lane.length === 0) this.lanes.delete(key);
    this.servedAt.set(key, ++this.turn);
    entry.signal?.removeEventListener("abort", entry.onAbort);
    return this.started(key, entry);
  }

  /** Fails every waiting job (the pool is closing). */
  clear(err: Error): void {
    const all = [...this.lanes.values()].flat();
    this.lanes.clear();
    this.waitingCount = 0;
    for (const key of this.servedAt.keys()) this.forget(key);
    for (const entry of all) {
      entry.signal?.removeEventListener("abort", entry.onAbort);
      entry.reject(err);
    }
  }

  private started(key: string, entry: Waiting<I, O>): Job<I, O> {
    this.runningBy.set(key, (this.runningBy.get(key) ?? 0) + 1);
    const since = performance.now();
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      const left = (this.runningBy.get(key) ?? 1) - 1;
      if (left > 0) this.runningBy.set(key, left);
      else this.runningBy.delete(key);
      this.forget(key);
      const ms = performance.now() - since;
      this.averageMs = this.averageMs === undefined ? ms : 0.8 * this.averageMs + 0.2 * ms;
      return true;
    };
    return {
      business: entry.business,
      input: entry.input,
      resolve: (value) => {
        if (!settle()) return;
        this.counts.ran++;
        entry.resolve(value);
      },
      reject: (err) => {
        if (settle()) entry.reject(err);
      },
    };
  }

  private drop(entry: Waiting<I, O>): void {
    const key = entry.business ?? NO_BUSINESS;
    const lane = this.lanes.get(key);
    const at = lane?.indexOf(entry) ?? -1;
    if (!lane || at < 0) return;
    lane.splice(at, 1);
    if (lane.length === 0) this.lanes.delete(key);
    this.forget(key);
    this.waitingCount--;
    this.counts.dropped++;
    entry.reject(this.dropped());
  }

  /**
   * Makes room for a business with `mine` jobs waiting: the longest lane, when longer than that,
   * gives up its newest job (refused as its own lane's overflow). False when no lane is longer.
   */
  private evictFor(mine: number): boolean {
    let longest: [string, Waiting<I, O>[]] | undefined;
    for (const lane of this.lanes) if (!longest || lane[1].length > longest[1].length) longest = lane;
    if (!longest || longest[1].length <= mine) return false;
    const [key, lane] = longest;
    const refusal = this.full(key, "capacity", true);
    const evicted = lane.pop() as Waiting<I, O>;
    if (lane.length === 0) this.lanes.delete(key);
    this.forget(key);
    this.waitingCount--;
    this.counts.refused++;
    evicted.signal?.removeEventListener("abort", evicted.onAbort);
    evicted.reject(refusal);
    return true;
  }

  /** A business with nothing waiting or running starts afresh (and the map stays small). */
  private forget(key: string): void {
    if (!this.lanes.has(key) && !this.runningBy.has(key)) this.servedAt.delete(key);
  }

  private refuse(key: string, reason: Backlog["reason"]): Promise<never> {
    this.counts.refused++;
    return Promise.reject(this.full(key, reason));
  }

  private full(key: string, reason: Backlog["reason"], evicted = false): QueueFull {
    const { share, capacity, work, refusal = QueueFull } = this.options;
    const waiting = this.lanes.get(key)?.length ?? 0;
    const running = this.runningBy.get(key) ?? 0;
    const own = `this business has ${waiting} ${work.plural} waiting to be ${work.verb} and ${running} being ${work.verb}`;
    const why =
      reason === "share"
        ? `at most ${share} of one business's ${work.plural} wait their turn`
        : evicted
          ? `all ${capacity} places of the queue were taken, most of them by this business: its newest gave way to a business with fewer`
          : `all ${capacity} places of the queue are taken, by businesses with no fewer waiting`;
    // One round of the lanes at the recent pace frees a place in this business's lane.
    const roundMs = (this.averageMs ?? 1000) * Math.max(1, this.lanes.size);
    const retryAfter = Math.min(60, Math.max(1, Math.ceil(roundMs / 1000)));
    return new refusal(`${own} (${why})`, { waiting, running, reason, retryAfter });
  }

  private dropped(): JobDropped {
    const { one, verb } = this.options.work;
    return new JobDropped(`the client closed its connection before its ${one} was ${verb}: it was dropped`);
  }
}

/** The 503 of a full queue, naming the business's own backlog; logged at warn (see the error mapper). */
export function busyError(what: string, err: QueueFull): DomainError {
  return new DomainError("service_unavailable", {
    message: "Service temporarily unavailable",
    details: `${what} is busy: ${err.message}; retry after the indicated delay`,
    retryAfter: err.backlog.retryAfter,
    busy: true,
  });
}

/** A job's answer, its refusal by a full queue turned into the 503 that names `what`. */
export async function orBusy<T>(answer: Promise<T>, what: string): Promise<T> {
  try {
    return await answer;
  } catch (err) {
    if (err instanceof QueueFull) throw busyError(what, err);
    throw err;
  }
}

/** A job dropped because its client went away: there is no one to answer, so a warn at most. */
export function droppedError(err: JobDropped): DomainError {
  return new DomainError("service_unavailable", {
    message: "Service temporarily unavailable",
    details: err.message,
    retryAfter: 1,
    busy: true,
  });
}
