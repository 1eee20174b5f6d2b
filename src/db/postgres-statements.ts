import { createHash } from "node:crypto";
import type { Writable } from "node:stream";
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from "kysely";
import type pg from "pg";

/** A statement whose text is longer than this runs unnamed: its plan would take too much memory. */
export const PREPARED_TEXT_MAX = 16 * 1024;

/**
 * The pool Kysely is given on PostgreSQL: pg's, whose connections keep the statements they run
 * again as named prepared statements. pg's statements are unnamed unless named, so PostgreSQL
 * parses, analyses and plans each one anew; a sign batch's statements are kilobytes of text (the
 * write of 8 invoices, their histories and the chain's head: 237 parameters). Measured apart on an
 * idle server, the server's CPU: that write 1,500-1,833 µs unnamed, 950-1,233 named; the batch's
 * reads with the chain lock 300-375 µs against 100-125. (Arrays unnested instead, one text for every
 * batch size, cost the server more than either.)
 *
 * Bounded: a text is named when it comes back a second time (a statement run once keeps nothing),
 * and a connection names texts of `budgetBytes` in all, each at most PREPARED_TEXT_MAX, then runs
 * the others unnamed as before. The server keeps about 50 bytes of plan for a byte of text (the
 * writes of 1 to 64 signs, 70 texts of 345 kB: 18 MB), so the default 128 KiB of text is about
 * 6.5 MB a connection at most. `budgetBytes` 0 names nothing, for a pooler that hands a
 * transaction another server connection (PgBouncer's transaction mode before 1.21).
 * Names are the texts' hashes, so one name is one statement on every connection.
 *
 * With the pool in pg's pipeline mode, a transaction's `begin` is sent without waiting for its
 * answer: it goes out just ahead of the transaction's first statement, and its answer is awaited
 * with that statement's. A sign batch made four round trips (begin, the reads with the chain lock,
 * the write, commit) one after the other under the chain lock; on a loaded 2-core machine each took
 * about 3 ms, `begin`'s all of it waiting (bench/RESULTS.md, 2026-12-03). A statement whose answer
 * its caller does not read (its text begins with ANSWER_UNREAD) goes the same way inside a
 * transaction: its answer, an error included, is awaited with the next statement's. The batch's
 * write is such a statement, so it goes out with the statement after it, the `commit` when the
 * batch queues no webhook event or delivery: two round trips under the lock instead of three.
 */
export function preparingPool(pool: pg.Pool, budgetBytes: number): PostgresPool {
  // Kysely keeps a connection per client it is given: the same client, the same wrapper.
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const state = { on: budgetBytes > 0 };
  return {
    async connect() {
      const client = await pool.connect();
      let wrapped = clients.get(client);
      if (!wrapped) {
        wrapped = preparing(client, budgetBytes, state);
        clients.set(client, wrapped);
      }
      return wrapped;
    },
    end: () => pool.end(),
  };
}

/**
 * The start of a statement whose caller reads nothing of its answer but whether it failed
 * (executeTogether's writes). In a transaction on a pipelined pool it is sent without waiting, and
 * its answer comes back with the next statement's, at the latest the `commit`'s: the statement's
 * error fails that one, and the transaction's `commit` commits nothing: PostgreSQL ends a failed
 * transaction with a rollback, and a statement pg failed before sending it (a value it cannot
 * serialize) turns the `commit` into a `rollback`. Its caller must not catch its failure and go on:
 * the failure comes later. Outside a transaction it is waited for, as any other.
 */
export const ANSWER_UNREAD = "/* answer unread */ ";

/**
 * A statement's answer once the statements sent ahead of it are answered too. A failed `begin` (the
 * connection lost), or a failed statement whose answer was not awaited, fails the statement that
 * followed it, a `commit` among them, with its own error: the one that says what went wrong, not
 * PostgreSQL's "current transaction is aborted" that the statement after it gets. A rollback
 * (`failAhead` false) ends the transaction whatever failed before it; that failure is its caller's to
 * report.
 */
async function answeredAfter<T>(ahead: Promise<unknown>, run: Promise<T>, failAhead: boolean): Promise<T> {
  const [before, answer] = await Promise.allSettled([ahead, run]);
  if (failAhead && before.status === "rejected") throw before.reason;
  if (answer.status === "rejected") throw answer.reason;
  return answer.value;
}

/**
 * A `commit`'s answer, which PostgreSQL gives as a rollback when a statement of the transaction had
 * failed: a caller that went on past that failure (a caught error, without a savepoint) would
 * otherwise take the transaction for committed.
 */
function committed(result: PostgresQueryResult<unknown>): PostgresQueryResult<unknown> {
  if ((result as { command?: unknown }).command === "ROLLBACK")
    throw Object.assign(new Error("the transaction had failed, and its commit rolled it back"), {
      code: "25P02",
    });
  return result;
}

/** A text's name as a prepared statement: its hash, so one name is one statement everywhere. */
export function preparedName(text: string, generation: number): string {
  return `einvoice_${generation}_${createHash("sha256").update(text).digest("base64url").slice(0, 40)}`;
}

/**
 * The start of a statement that is never named, so that PostgreSQL plans it for the values of each
 * run: one that joins a table that grows fast by rows it looks up by key. A named statement's
 * generic plan is made once, after its fifth run, from what the table looked like then, and kept
 * until the table is next analyzed. A table a new database starts empty is estimated at a few
 * hundred rows until autovacuum first analyzes it (a minute or more), and for so few a hash join
 * over a scan of the whole table is the cheapest plan: the plan kept then scanned every row of the
 * table on every run (the answers of Idempotency-Keys: 3.9 ms a batch with 20,000 keys, where the
 * primary key finds a batch's rows in 0.06 ms). A statement planned afresh sees the table's size as
 * it is, for about 0.13 ms more of the server's time a run than a kept plan (the same statement,
 * `EXPLAIN (ANALYZE, SUMMARY)`): for statements run once a batch, not once a row.
 */
export const PLANNED_EACH_TIME = "/* planned each time */ ";

/** A text no connection names: too long to keep a plan of, or to be planned for each run's values. */
const neverNamed = (text: string) => text.length > PREPARED_TEXT_MAX || text.startsWith(PLANNED_EACH_TIME);

/** How many texts seen once a connection remembers, waiting for their second run. */
const SEEN_ONCE = 256;

/**
 * A prepared statement missing where this connection made it (26000), or there already under the
 * name (42P05): a pooler between this process and the server gave the transaction another server
 * connection. The names are the texts' hashes, so a name found on another server connection is the
 * same statement and none runs in place of another; the statement fails, and the process prepares
 * nothing more.
 */
const POOLED = new Set(["26000", "42P05"]);

/**
 * The connection's socket, held (corked) from a statement sent ahead to the statement after it, so
 * that both go out in one write: each write to the server is a system call, and on loopback one
 * that runs the server side's receiving too (pg's `writev` was 8-10% of the event loop's samples
 * of a sign on PostgreSQL). `client.connection.stream` is pg's own socket, which pg's
 * `Query.submit` corks the same way around a statement's messages.
 */
function socketHold(client: pg.PoolClient): { hold(): void; letGo(): void } {
  const socket = (client as unknown as { connection?: { stream?: Partial<Writable> } }).connection?.stream;
  let held = false;
  function hold(): void {
    if (held || !socket?.cork || !socket.uncork) return;
    held = true;
    socket.cork();
    // The statement after it comes a few microtasks later; should none come, what is held goes out
    // at the latest in this turn of the event loop.
    setImmediate(letGo);
  }
  function letGo(): void {
    if (!held) return;
    held = false;
    socket?.uncork?.();
  }
  return { hold, letGo };
}

function preparing(client: pg.PoolClient, budgetBytes: number, state: { on: boolean }): PostgresPoolClient {
  const names = new Map<string, string>();
  const seenOnce = new Set<string>();
  let left = budgetBytes;
  /** Bumped when PostgreSQL refuses a plan it kept: the text is prepared again under a new name. */
  let generation = 0;
  /**
   * A `begin`, and the statements after it whose answers are not read, sent and not yet answered:
   * their answers are awaited with the next statement's.
   */
  let pending: Promise<unknown> | undefined;
  /** Between a `begin` and its `commit` or `rollback`: where a statement may go unawaited. */
  let inTransaction = false;
  /**
   * The first failure of a statement sent ahead in this transaction. pg fails some before the server
   * sees them (a value it cannot serialize: the server's transaction is then still whole, and a
   * `commit` would keep what came before); the transaction's `commit` rolls back instead.
   */
  let failedAhead: { error: unknown } | undefined;

  const { hold, letGo } = socketHold(client);

  /** The statement sent, its answer left to the next statement's. */
  function sendAhead(send: () => Promise<unknown>, command: string): Promise<PostgresQueryResult<unknown>> {
    hold();
    const sent = send();
    sent.catch((error: unknown) => {
      failedAhead ??= { error };
    });
    const ahead = pending === undefined ? sent : Promise.all([pending, sent]);
    ahead.catch(() => {});
    pending = ahead;
    // A result Kysely accepts for the statement; its caller reads none of it.
    return Promise.resolve({ command, rowCount: null, rows: [] } as unknown as PostgresQueryResult<unknown>);
  }

  /** The statement's name on this connection, or undefined to run it unnamed. */
  function nameOf(text: string): string | undefined {
    if (!state.on) return undefined;
    const name = names.get(text);
    if (name !== undefined || neverNamed(text) || text.length > left) return name;
    if (!seenOnce.has(text)) {
      if (seenOnce.size >= SEEN_ONCE) seenOnce.clear();
      seenOnce.add(text);
      return undefined;
    }
    seenOnce.delete(text);
    left -= text.length;
    const fresh = preparedName(text, generation);
    names.set(text, fresh);
    return fresh;
  }

  function query(
    statement: string | PostgresCursor<unknown>,
    parameters?: ReadonlyArray<unknown>,
  ): Promise<PostgresQueryResult<unknown>> | PostgresCursor<unknown> {
    if (typeof statement !== "string") return client.query(statement as never);
    const values = [...(parameters ?? [])];
    if (client.pipeline) {
      if (statement === "begin" && values.length === 0) {
        // Sent without waiting for its answer: the transaction's first statement follows it on the
        // wire, and the answer to `begin` comes back with the statement's.
        inTransaction = true;
        failedAhead = undefined;
        return sendAhead(() => client.query(statement), "BEGIN");
      }
      // A write whose answer is not read: it goes out with the statement after it (the outbox's
      // insert, or else the commit), whose answer carries its failure.
      if (inTransaction && statement.startsWith(ANSWER_UNREAD))
        return sendAhead(() => send(statement, values), "SELECT");
    }
    const ends = statement === "commit" || statement === "rollback";
    if (ends) inTransaction = false;
    const failed = ends ? failedAhead : undefined;
    if (ends) failedAhead = undefined;
    // A statement sent ahead failed: whatever its caller did with that, nothing of the transaction
    // is kept.
    const run = failed && statement === "commit" ? rolledBack(failed.error) : send(statement, values);
    letGo();
    const before = pending;
    pending = undefined;
    const answered = before === undefined ? run : answeredAfter(before, run, statement !== "rollback");
    return statement === "commit" ? answered.then(committed) : answered;
  }

  /** A `rollback` sent where a `commit` was asked for: it fails with the error that made it one. */
  async function rolledBack(error: unknown): Promise<PostgresQueryResult<unknown>> {
    await send("rollback", []);
    throw error;
  }

  function send(statement: string, values: unknown[]): Promise<PostgresQueryResult<unknown>> {
    // A statement without parameters (begin, commit, DDL) goes as a simple query, as before.
    const name = values.length > 0 ? nameOf(statement) : undefined;
    const run = (
      name === undefined ? client.query(statement, values) : client.query({ name, text: statement, values })
    ) as Promise<PostgresQueryResult<unknown>>;
    if (name === undefined) return run;
    return run.catch((error: unknown) => {
      const code = (error as { code?: unknown }).code;
      // A table changed under a prepared `select *` (a migration adding a column while this
      // process runs): PostgreSQL refuses the plan from then on ("cached plan must not change
      // result type"). This run fails; the next prepares the text again, under a new name.
      if (
        code === "0A000" &&
        /cached plan must not change result type/.test(String((error as Error).message))
      ) {
        names.delete(statement);
        generation += 1;
      }
      if (typeof code === "string" && POOLED.has(code)) state.on = false;
      throw error;
    });
  }

  return {
    query: query as PostgresPoolClient["query"],
    release: () => {
      letGo();
      pending = undefined;
      failedAhead = undefined;
      inTransaction = false;
      client.release();
    },
  };
}
