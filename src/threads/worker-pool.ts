import { type ResourceLimits, Worker } from "node:worker_threads";
import type { JobQueue, QueuedJob } from "./job-queue.ts";
import { builtThreadModule, inPlaceModule, THREAD_EXEC_ARGV, threadModule } from "./thread-bundle.ts";

/**
 * One worker thread and the jobs it runs, for work that would hold the event loop (cryptography,
 * PDFs, QR decoding, large validations). The thread starts with the first job, so a process that
 * never uses it pays nothing; it is replaced when it crashes (its running jobs fail, later ones run
 * on the new thread), when a job runs past the time limit, or when an answer says so (`retire`); it
 * does not keep the process alive while idle. With `thread: false` (one core) the same module runs
 * in place, from the same queue.
 *
 * The thread's module default-exports a `ThreadMain`: called once with `data`, it returns the
 * function that answers one input. src/threads/thread-main.ts calls it on the thread; the two are
 * bundled into one module the first time a thread starts (thread-bundle.ts), which the threads start
 * from: a worker thread does not inherit the TypeScript loader of its process.
 *
 * Not piscina (5.x): its pool of one thread starts with the pool, not the first job; it cannot
 * replace a thread after an answer (the QR decoder's WebAssembly memory only grows), nor say when a
 * thread starts a job (the time limits here leave out start-up and warm-up); and the fair queue and
 * the batching stay in front of it anyway, which leaves it only the spawning and the messages.
 */

/** A thread module's default export: called once per thread (and once in place) with the pool's `data`. */
export type ThreadMain = (data: never) => ThreadHandler | Promise<ThreadHandler>;
export type ThreadHandler = (input: never) => unknown;

/** What the thread made of one input. */
export type ThreadAnswer = { ok: true; value: unknown } | { ok: false; message: string };

/** Why a job failed, for the pool in front to put in its own words (`fail`). */
export type Failure = {
  /**
   * threw: the thread's code threw on it; stopped: its thread stopped under it (an uncaught `error`,
   * an exit with `code`, or replaced for another job); time: it ran `ms` past its start on the
   * thread, or its thread was not ready within `ms`.
   */
  kind: "threw" | "stopped" | "time";
  /** In general words. */
  message: string;
  error?: Error;
  code?: number;
  ms?: number;
};

const failures = {
  threw: (message: string): Failure => ({ kind: "threw", message }),
  crashed: (error: Error): Failure => ({ kind: "stopped", message: error.message, error }),
  exited: (code: number): Failure => ({
    kind: "stopped",
    message: `the thread stopped (exit code ${code})`,
    code,
  }),
  replaced: (): Failure => ({ kind: "stopped", message: "the thread was replaced" }),
  time: (ms: number): Failure => ({ kind: "time", message: `no answer within ${ms} ms`, ms }),
};

/** True when the job's thread stopped on reaching its `resourceLimits`: the job outgrew them. */
export const outOfMemory = (failure: Failure): boolean =>
  (failure.error as NodeJS.ErrnoException | undefined)?.code === "ERR_WORKER_OUT_OF_MEMORY";

/**
 * A pool's `fail` in its own words: `doing` failed with what the thread's code threw, or `thread`
 * stopped (its crash as it is, else its exit code).
 */
export const failedWith =
  (doing: string, thread: string) =>
  (failure: Failure): Error =>
    failure.kind === "threw"
      ? new Error(`${doing} failed: ${failure.message}`)
      : (failure.error ?? new Error(`${thread} stopped (exit code ${failure.code})`));

/** A failure in general words, for a pool that has none of its own. */
export class ThreadFailure extends Error {
  constructor(readonly failure: Failure) {
    super(failure.message);
  }
}

export type WorkerPoolOptions<I, O> = {
  /** The thread's module (a .ts file): its default export is a ThreadMain. */
  entry: URL;
  /** Handed to the module's main (a structured copy, on the thread). */
  data?: unknown;
  queue: JobQueue<I, O>;
  /** false runs the module in place, on the event loop (one core): no batches, no time limit. */
  thread?: boolean;
  /** Messages out to the thread at once (default 1): with 2 it starts the next while an answer is used. */
  inFlight?: number;
  /** The jobs of one turn of the event loop go over in one message, this many at most. */
  batch?: number;
  /**
   * A batch also closes once its jobs weigh this much (`weight` of each input; a job heavier than
   * it goes alone): the jobs of the next batch, another business's say, then wait behind one large
   * job, not behind `batch` of them.
   */
  batchWeight?: { most: number; of: (input: I) => number };
  /** A message still running this long after the thread started it fails, and its thread is replaced. */
  timeLimitMs?: number;
  /** A thread not ready (its module loaded) this long after it was started is replaced, its jobs failed. */
  startLimitMs?: number;
  /** The thread's heap, so that a job that outgrows it stops its thread instead of the process. */
  resourceLimits?: ResourceLimits;
  /** What goes over for an input; `thread` numbers the threads, so state a thread keeps goes once to each. */
  toThread?: (input: I, thread: number) => unknown;
  /** The job's value from the thread's answer; what it throws fails the job. */
  fromThread?: (value: unknown) => O;
  /** True when the thread should give way to a fresh one after this answer (its memory grew, say). */
  retire?: (answer: ThreadAnswer) => boolean;
  /** The pool's own error for a failed job. */
  fail?: (failure: Failure) => Error;
};

/** What goes between the pool and src/threads/thread-main.ts. */
export type ThreadData = { data: unknown; timed: boolean };
export type ThreadRequest = { id: number; inputs: unknown[] };
export type ThreadReply = { ready: true } | { started: number } | { id: number; answers: ThreadAnswer[] };

type Message<I, O> = { id: number; jobs: QueuedJob<I, O>[]; timer?: NodeJS.Timeout };
type Thread<I, O> = {
  worker: Worker;
  number: number;
  ready: boolean;
  gone: boolean;
  out: Map<number, Message<I, O>>;
  startTimer?: NodeJS.Timeout;
};

export class WorkerPool<I, O> {
  /** The thread new jobs go to; a retired one may still be finishing its own (in `threads`). */
  private current: Thread<I, O> | undefined;
  private readonly threads = new Set<Thread<I, O>>();
  private readonly inPlace = new Set<QueuedJob<I, O>>();
  private main: Promise<(input: unknown) => unknown> | undefined;
  /** The bundled thread module, once built (thread-bundle.ts); `loading` while it is being built. */
  private module: URL | undefined;
  private loading = false;
  private out = 0;
  private nextId = 0;
  private started = 0;
  private scheduled = false;
  private closed: Error | undefined;

  constructor(private readonly options: WorkerPoolOptions<I, O>) {}

  /** Threads started so far: one, plus one per thread replaced. */
  get threadsStarted(): number {
    return this.started;
  }

  /** Sends what waits in the queue, as far as the bound allows: call it after each submission. */
  pump(): void {
    const { queue, batch, thread = true } = this.options;
    if (this.closed) {
      queue.clear(this.closed);
      return;
    }
    if (!thread || !batch) {
      this.fill();
      return;
    }
    if (this.scheduled || queue.waiting === 0 || this.out >= (this.options.inFlight ?? 1)) return;
    this.scheduled = true;
    // After the poll phase: every request read in it has submitted its job by then.
    setImmediate(() => {
      this.scheduled = false;
      this.fill();
    });
  }

  /** Fails every job waiting or running with `reason`, and any submitted later; stops the threads. */
  async close(reason: Error): Promise<void> {
    this.closed = reason;
    this.options.queue.clear(reason);
    for (const job of this.inPlace) job.reject(reason);
    this.inPlace.clear();
    const threads = [...this.threads];
    for (const thread of threads) this.forget(thread, () => reason);
    await Promise.all(threads.map((thread) => thread.worker.terminate()));
  }

  private fill(): void {
    const { queue, thread = true } = this.options;
    if (thread && !this.module) {
      // Another pool of this process may have built the bundle already: its threads start at once.
      this.module = builtThreadModule(this.options.entry);
      if (!this.module) {
        this.load();
        return;
      }
    }
    while (!this.closed && this.out < (this.options.inFlight ?? 1)) {
      const jobs: QueuedJob<I, O>[] = [];
      const most = thread ? (this.options.batch ?? 1) : 1;
      const weight = this.options.batchWeight;
      let weighs = 0;
      while (jobs.length < most && (!weight || weighs < weight.most)) {
        const job = queue.take();
        if (!job) break;
        jobs.push(job);
        if (weight) weighs += weight.of(job.input);
      }
      if (jobs.length === 0) return;
      if (thread) this.post(jobs);
      else for (const job of jobs) void this.runInPlace(job);
    }
  }

  /** Builds the thread module, then sends what waits; a failed build fails the jobs waiting. */
  private load(): void {
    if (this.loading || this.closed) return;
    this.loading = true;
    threadModule(this.options.entry).then(
      (module) => {
        this.loading = false;
        this.module = module;
        this.pump();
      },
      (err: unknown) => {
        this.loading = false;
        this.options.queue.clear(err instanceof Error ? err : new Error(String(err)));
      },
    );
  }

  private post(jobs: QueuedJob<I, O>[]): void {
    const thread = this.current ?? this.start();
    const { toThread } = this.options;
    const message: Message<I, O> = { id: this.nextId++, jobs };
    try {
      const inputs = jobs.map((job) => (toThread ? toThread(job.input, thread.number) : job.input));
      thread.worker.postMessage({ id: message.id, inputs } satisfies ThreadRequest);
    } catch (err) {
      // An input that cannot be copied to the thread fails alone.
      for (const job of jobs) job.reject(this.failure(failures.threw(String(err))));
      return;
    }
    thread.out.set(message.id, message);
    this.out++;
    // While a job is out the thread keeps the process alive; idle, it does not.
    thread.worker.ref();
  }

  private start(): Thread<I, O> {
    const { data, timeLimitMs, startLimitMs, resourceLimits } = this.options;
    const workerData: ThreadData = { data, timed: timeLimitMs !== undefined };
    const worker = new Worker(this.module as URL, {
      workerData,
      execArgv: THREAD_EXEC_ARGV,
      ...(resourceLimits ? { resourceLimits } : {}),
    });
    const thread: Thread<I, O> = {
      worker,
      number: ++this.started,
      ready: false,
      gone: false,
      out: new Map(),
    };
    if (startLimitMs !== undefined) {
      thread.startTimer = setTimeout(() => this.replace(thread, failures.time(startLimitMs)), startLimitMs);
    }
    worker.on("message", (reply: ThreadReply) => this.receive(thread, reply));
    worker.on("error", (error) => this.stopped(thread, failures.crashed(error)));
    worker.on("exit", (code) => this.stopped(thread, failures.exited(code)));
    this.threads.add(thread);
    this.current = thread;
    return thread;
  }

  private receive(thread: Thread<I, O>, reply: ThreadReply): void {
    if (thread.gone) return;
    if ("ready" in reply) {
      thread.ready = true;
      clearTimeout(thread.startTimer);
      return;
    }
    const id = "started" in reply ? reply.started : reply.id;
    const message = thread.out.get(id);
    if (!message) return;
    if ("started" in reply) {
      const ms = this.options.timeLimitMs ?? 0;
      message.timer = setTimeout(() => this.replace(thread, failures.time(ms), message), ms);
      return;
    }
    clearTimeout(message.timer);
    thread.out.delete(id);
    this.out--;
    let retire = false;
    message.jobs.forEach((job, i) => {
      const answer = reply.answers[i] ?? { ok: false, message: "the thread gave no answer for this job" };
      this.settle(job, answer);
      retire ||= this.options.retire?.(answer) ?? false;
    });
    if (retire && this.current === thread) this.current = undefined;
    if (thread.out.size === 0) {
      if (this.current === thread) thread.worker.unref();
      else this.forget(thread, failures.replaced, true);
    }
    this.pump();
  }

  private settle(job: QueuedJob<I, O>, answer: ThreadAnswer): void {
    if (!answer.ok) {
      job.reject(this.failure(failures.threw(answer.message)));
      return;
    }
    try {
      job.resolve(this.options.fromThread ? this.options.fromThread(answer.value) : (answer.value as O));
    } catch (err) {
      job.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** A thread stuck on `culprit` (or not ready in time): its jobs fail, the next ones get a new thread. */
  private replace(thread: Thread<I, O>, failure: Failure, culprit?: Message<I, O>): void {
    if (thread.gone || (culprit && !thread.out.has(culprit.id))) return;
    this.forget(thread, (message) => (!culprit || message === culprit ? failure : failures.replaced()), true);
    this.pump();
  }

  private stopped(thread: Thread<I, O>, failure: Failure): void {
    if (thread.gone) return;
    if (thread.ready) {
      this.forget(thread, () => failure);
      this.pump();
      return;
    }
    // It never started (its module failed to load): every job waiting would meet the same, and the
    // fault is the service's, so they all fail with the error itself; the next job tries a new thread.
    const err = failure.error ?? new Error(`${failure.message} before it was ready`);
    this.forget(thread, () => err);
    this.options.queue.clear(err);
  }

  /** Takes the thread out of service; its jobs still out fail with what `why` says. */
  private forget(thread: Thread<I, O>, why: (message: Message<I, O>) => Failure | Error, terminate = false) {
    thread.gone = true;
    this.threads.delete(thread);
    if (this.current === thread) this.current = undefined;
    clearTimeout(thread.startTimer);
    for (const message of thread.out.values()) {
      clearTimeout(message.timer);
      const reason = why(message);
      const err = reason instanceof Error ? reason : this.failure(reason);
      for (const job of message.jobs) job.reject(err);
    }
    this.out -= thread.out.size;
    thread.out.clear();
    if (terminate) void thread.worker.terminate();
  }

  private async runInPlace(job: QueuedJob<I, O>): Promise<void> {
    const { entry, data, toThread } = this.options;
    this.out++;
    this.inPlace.add(job);
    let answer: ThreadAnswer | Error;
    try {
      this.main ??= inPlaceModule(entry).then(async (url) => {
        const module = (await import(url.href)) as { default: ThreadMain };
        return (await module.default(data as never)) as (input: unknown) => unknown;
      });
      const handle = await this.main;
      try {
        answer = { ok: true, value: await handle(toThread ? toThread(job.input, 0) : job.input) };
      } catch (err) {
        answer = { ok: false, message: err instanceof Error ? err.message : String(err) };
      }
    } catch (err) {
      // The module failed to load: as on a thread, the job fails with the error itself and the next tries again.
      this.main = undefined;
      answer = err instanceof Error ? err : new Error(String(err));
    }
    this.out--;
    if (!this.inPlace.delete(job)) return;
    if (answer instanceof Error) job.reject(answer);
    else this.settle(job, answer);
    this.pump();
  }

  private failure(failure: Failure): Error {
    return this.options.fail ? this.options.fail(failure) : new ThreadFailure(failure);
  }
}
