/**
 * The shapes of a batch's statements: rows split into chunks for multi-row statements, and
 * statements and reads run together (one round trip on PostgreSQL, one after the other on SQLite).
 */
import { type Compilable, CompiledQuery, type Kysely, type RawBuilder, sql } from "kysely";
import { type Executor, engineOf } from "./database.ts";
import { ANSWER_UNREAD } from "./postgres-statements.ts";
import type { Database } from "./schema.ts";

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

/**
 * Chunks for multi-row statements on `tx`'s engine. SQLite keeps its prepared statements by text:
 * chunks of a few sizes (powerOfTwoChunks). PostgreSQL prepares each statement anew (the driver's
 * statements are unnamed), so there a chunk is as large as `max` allows: each is a round trip, and
 * a sign's are made under its business's chain lock (7 signs were 3 inserts of each kind, now 1).
 */
export function chunksFor<T>(tx: Pick<Kysely<unknown>, "getExecutor">, rows: readonly T[], max = 64): T[][] {
  if (engineOf(tx) === "sqlite") return powerOfTwoChunks(rows, max);
  const chunks: T[][] = [];
  for (let at = 0; at < rows.length; at += max) chunks.push(rows.slice(at, at + max));
  return chunks;
}

/** PostgreSQL's bound on the parameters of one statement. */
const POSTGRES_PARAMETERS = 65_535;

/**
 * Writes that return nothing, run together: on PostgreSQL as one statement (each a data-modifying
 * WITH clause: one round trip, where a sign batch's writes were one each under its chain lock), on
 * SQLite one after the other (it has no round trips to save). The clauses see the same snapshot
 * and none sees another's rows; foreign keys are checked at the statement's end, so an invoice and
 * its history can go in together. Past PostgreSQL's parameters a statement, they run one by one.
 * In a transaction on PostgreSQL the statement is not waited for: it goes out with the next one,
 * the commit at the latest, whose answer carries its failure (ANSWER_UNREAD). So its failure there
 * is not to be caught and gone past: the transaction fails.
 */
export async function executeTogether(tx: Executor, statements: readonly Statement[]): Promise<void> {
  if (engineOf(tx) === "postgres" && statements.length > 1) {
    // The texts are the query builder's, or insertRows's (compiled by it), whose only `$` is a
    // placeholder's.
    const { numbered, parameters } = joining();
    const clauses = statements.map((statement, i) => `w${i} as (${numbered(compiledOf(tx, statement))})`);
    if (parameters.length <= POSTGRES_PARAMETERS) {
      // Its answer is not read: in a transaction it goes out with the statement after it, at the
      // latest the commit.
      await tx.executeQuery(
        CompiledQuery.raw(`${ANSWER_UNREAD}with ${clauses.join(", ")} select 1`, parameters),
      );
      return;
    }
  }
  for (const statement of statements) await tx.executeQuery(compiledOf(tx, statement));
}

/**
 * Statements joined into one: `numbered` gives a statement's text with its parameters (each
 * statement numbers its own from $1) numbered on from the ones before it, whose values it adds to
 * `parameters`.
 */
function joining() {
  const parameters: unknown[] = [];
  const numbered = ({ sql: text, parameters: values }: CompiledQuery) => {
    const offset = parameters.length;
    for (const value of values) parameters.push(value);
    return numberedFrom(text, offset);
  };
  return { numbered, parameters };
}

/** Texts renumbered by `numberedFrom`: by the text as given, then by the offset. */
const renumbered = new Map<string, Map<number, string>>();

/**
 * `text` with its parameters numbered on from `offset` ($1 becomes $<offset + 1>), kept: a sign
 * batch's texts come compiled once (insertRows, the chains' heads) and meet the same offsets batch
 * after batch, and the renumbering (a callback for each of a 16-invoice insert's 384 placeholders)
 * took more of the event loop than any other step of executeTogether. The same text object is
 * looked up every time, so its hash is computed once. The texts are the statements' shapes, a few
 * dozen; past 512 the kept ones go.
 */
function numberedFrom(text: string, offset: number): string {
  if (offset === 0) return text;
  let byOffset = renumbered.get(text);
  if (byOffset === undefined) {
    if (renumbered.size >= 512) renumbered.clear();
    byOffset = new Map();
    renumbered.set(text, byOffset);
  }
  let numbered = byOffset.get(offset);
  if (numbered === undefined) {
    if (byOffset.size >= 64) byOffset.clear();
    numbered = text.replace(/\$(\d+)/g, (_, n) => `$${Number(n) + offset}`);
    byOffset.set(offset, numbered);
  }
  return numbered;
}

/** A statement built and not run: a query builder's, raw SQL, or compiled (insertRows). */
export type Statement = Compilable | RawBuilder<unknown> | CompiledQuery;

function compiledOf(tx: Executor, statement: Statement): CompiledQuery {
  if ("isRawBuilder" in statement) return statement.compile(tx);
  if ("compile" in statement) return statement.compile();
  return statement;
}

/** Statement texts compiled once, by what they were compiled for (see `compiledOnce`). */
const texts = new Map<string, string>();

/**
 * The text `key` names, compiled by `compile` the first time it is asked for: statements built with
 * the query builder for every run make a node and a frozen object for every value and compile them
 * again, on hot paths (a sign's inserts, a keyed sign's answer). The key names the engine and the
 * statement's shape (table, columns, row count); the values go with the text in its placeholders'
 * order.
 */
export function compiledOnce(key: string, compile: () => string): string {
  let text = texts.get(key);
  if (text === undefined) {
    text = compile();
    texts.set(key, text);
  }
  return text;
}

/**
 * The statements that insert `rows` into `table` (one a chunk, as chunksFor splits them), each
 * compiled by the query builder once for its engine, table, columns and row count and then run
 * with the rows' values in column order. Built with the builder every time, a sign batch's inserts
 * (24 columns an invoice) made a node and a frozen object for every value and compiled them again:
 * about 12 µs of the event loop a sign in the server's profile, on every sign.
 */
export function insertRows<T extends keyof Database & string, C extends keyof Database[T] & string>(
  tx: Executor,
  table: T,
  columns: readonly C[],
  rows: ReadonlyArray<Record<C, unknown>>,
): CompiledQuery[] {
  return chunksFor(tx, rows).map((chunk) => {
    const key = `${engineOf(tx)}\u0000insert\u0000${table}\u0000${columns.join(",")}\u0000${chunk.length}`;
    const text = compiledOnce(key, () => {
      const row = Object.fromEntries(columns.map((column) => [column, null]));
      const values = Array.from({ length: chunk.length }, () => row);
      return tx
        .insertInto(table)
        .values(values as never)
        .compile().sql;
    });
    const parameters: unknown[] = [];
    for (const each of chunk)
      for (const column of columns) {
        const value = each[column];
        // The builder leaves an undefined value's column out (its default); here every row has
        // every column, so one is a mistake to hear of, not a default to guess.
        if (value === undefined) throw new Error(`insertRows: ${table}.${column} is undefined`);
        parameters.push(value);
      }
    return CompiledQuery.raw(text, parameters);
  });
}

/**
 * A read built and not run: its query, and what its rows answer. The query selects text, numbers
 * and nulls only: run together on PostgreSQL its rows come back as JSON (readTogether).
 */
export type Read<T> = {
  query: Compilable | CompiledQuery;
  answer(rows: readonly Record<string, unknown>[]): T;
};

/** Runs a read on its own. */
export async function read<T>(tx: Executor, query: Read<T>): Promise<T> {
  const { rows } = await tx.executeQuery(compiledOf(tx, query.query));
  return query.answer(rows as Record<string, unknown>[]);
}

/**
 * A query whose text depends on `tx`'s engine, `shape` and the number of its `values` only (an IN
 * list, say), compiled by the query builder once (compiledOnce) and then run with `values`, which
 * must be the built query's parameters in their order. A sign batch's reads (its chains' lock, the
 * IRNs taken, the webhooks, the sealing key) were built and compiled for every batch, and the
 * statement joining them compiled again: on PostgreSQL, where a batch holds a few signs, that was
 * more of the event loop than its inserts' building ever was.
 */
export function compiledByCount(
  tx: Executor,
  shape: string,
  values: readonly unknown[],
  build: () => Compilable,
): CompiledQuery {
  const text = compiledOnce(
    `${engineOf(tx)}\u0000${shape}\u0000${values.length}`,
    () => build().compile().sql,
  );
  return CompiledQuery.raw(text, [...values]);
}

/**
 * A statement that writes and reads, to run before a batch's reads (`readLed`): on PostgreSQL the
 * WITH clauses (`clauses`, data-modifying among them) and a query over them (`query`), in the
 * reads' one statement; elsewhere `runFirst`, run before the reads.
 */
export type Lead<T> = {
  clauses: RawBuilder<unknown>;
  query: RawBuilder<unknown>;
  answer(rows: readonly Record<string, unknown>[]): T;
  runFirst(tx: Executor): Promise<T>;
};

/**
 * Reads run together: on PostgreSQL as one statement, each read a subquery whose rows come back as
 * one JSON array (one round trip, where a sign batch made one a read before its chain lock, each
 * one that every sign of the batch waited for); on SQLite one after the other, in order. The
 * subqueries see one snapshot, taken when the statement begins; the row locks they ask for
 * (`for update`, `for share`) are the statement's, held to the end of the caller's transaction.
 */
export async function readTogether<T extends readonly unknown[]>(
  tx: Executor,
  reads: { readonly [K in keyof T]: Read<T[K]> | (undefined extends T[K] ? undefined : never) },
): Promise<T> {
  return (await readLed<undefined, T>(tx, undefined, reads)).reads;
}

/**
 * `readTogether`, with a statement that writes (`lead`) run first: on PostgreSQL in the same
 * statement, its query the first column of the row, so that its writes are done, and any wait for
 * another transaction's rows is over, before a later column's subquery takes a row lock (a sign
 * batch's claims of Idempotency-Keys, before its chains' locks: two batches never hold a chain and
 * wait on a key in opposite orders). That order is not SQL's promise (PostgreSQL documents the
 * order of data-modifying WITH clauses as unpredictable): it rests on PostgreSQL computing a row's
 * columns in turn, each scalar subquery when its column is, and the lead's WITH clause when its
 * query first reads it. `test/idempotency/claim-with-work.test.ts` fails when the order is not so
 * (a deadlock PostgreSQL breaks after a second).
 */
export async function readLed<L, T extends readonly unknown[]>(
  tx: Executor,
  lead: Lead<L> | undefined,
  reads: { readonly [K in keyof T]: Read<T[K]> | (undefined extends T[K] ? undefined : never) },
): Promise<{ led: L | undefined; reads: T }> {
  // A read left out (undefined) answers undefined.
  const list = reads as readonly (Read<unknown> | undefined)[];
  const given = list.filter((each) => each !== undefined);
  let answers: unknown[];
  let led: L | undefined;
  if (engineOf(tx) !== "postgres" || given.length + (lead ? 1 : 0) < 2) {
    if (lead) led = await lead.runFirst(tx);
    answers = [];
    for (const each of given) answers.push(await read(tx, each));
  } else {
    // The statement is joined from its parts' compiled texts (joining): only the lead, a keyed
    // sign's claims, is built for each batch.
    const { numbered, parameters } = joining();
    const aggregated = (query: CompiledQuery, name: string) =>
      `(select coalesce(json_agg(q), '[]'::json) from (${numbered(query)}) as q) as "${name}"`;
    const head = lead ? `${numbered(sql`with ${lead.clauses} select`.compile(tx))} ` : "select ";
    const columns = [
      ...(lead ? [aggregated(lead.query.compile(tx), "lead")] : []),
      ...given.map((each, i) => aggregated(compiledOf(tx, each.query), `r${i}`)),
    ];
    const { rows } = await tx.executeQuery<Record<string, Record<string, unknown>[]>>(
      CompiledQuery.raw(`${head}${columns.join(", ")}`, parameters),
    );
    const [row] = rows;
    if (!row) throw new Error("a statement of reads answered no row");
    if (lead) led = lead.answer(row.lead ?? []);
    answers = given.map((each, i) => each.answer(row[`r${i}`] ?? []));
  }
  let next = 0;
  return {
    led,
    reads: list.map((each) => (each === undefined ? undefined : answers[next++])) as unknown as T,
  };
}
