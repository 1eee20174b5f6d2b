import { type Db, type Executor, engineOf, writeTransaction } from "../db/database.ts";

/**
 * How the outbox writes outside a caller's transaction, whether one statement (a claim, a settle)
 * or several that must commit together (a settle and the report of its outcome). On SQLite every
 * write goes through writeTransaction, which waits for another process's write lock without
 * blocking the event loop; on PostgreSQL one statement needs no transaction of its own (the server
 * waits on the lock anyway), several do.
 */
export type Write = <T>(work: (tx: Executor) => Promise<T>, statements?: "one" | "several") => Promise<T>;

export function outboxWrite(db: Db): Write {
  return (work, statements = "one") =>
    engineOf(db) === "postgres" && statements === "one" ? work(db) : writeTransaction(db, work);
}
