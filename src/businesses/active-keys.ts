import type { ApiKeyTable } from "../db/schema.ts";

/**
 * Active credentials kept in memory for authentication, exact under revocation. A kept row is used
 * only while nothing can have revoked it since it was read:
 * - no other connection has committed anything to the database (`changes`, SQLite's
 *   `data_version`: about 1 µs, where the read it saves is 10–25 µs through Kysely). Any commit
 *   elsewhere, a revocation by the CLI or another API process among them, discards every kept row;
 * - this process has not revoked it: its own revocations (which `changes` does not count) call
 *   `forget`, before they answer.
 * The version is read before the row, so a revocation committed between the two is a change the
 * next lookup sees. A read that began before a `forget` is not kept. Unknown and revoked keys are
 * never kept: a key created elsewhere works on its first request. Where the engine has no such
 * counter (PostgreSQL), or cannot tell at that moment (inside a transaction that may read an older
 * snapshot), the lookup reads the row.
 */
export function activeKeys(deps: {
  find(apiKey: string): Promise<ApiKeyTable | undefined>;
  /**
   * A value that changes whenever another connection commits (database.ts's `changeCounter`); it
   * answers undefined when it cannot tell at that moment. Undefined: keep nothing.
   */
  changes: (() => number | undefined) | undefined;
  limit?: number;
}) {
  const { find, changes } = deps;
  const limit = deps.limit ?? 10_000;
  const kept = new Map<string, ApiKeyTable>();
  let keptAt: number | undefined;
  /** Moves on every `forget`: a read begun before one is not kept. */
  let forgets = 0;

  return {
    async find(apiKey: string): Promise<ApiKeyTable | undefined> {
      const version = changes?.();
      if (version === undefined) return find(apiKey);
      if (version !== keptAt) {
        kept.clear();
        keptAt = version;
      }
      const hit = kept.get(apiKey);
      if (hit) return hit;
      const began = forgets;
      const row = await find(apiKey);
      if (row && began === forgets && keptAt === version) {
        if (kept.size >= limit) kept.delete(kept.keys().next().value as string);
        kept.set(apiKey, row);
      }
      return row;
    },
    /** This process revoked `apiKey` (or is about to answer that it did). */
    forget(apiKey: string): void {
      forgets++;
      kept.delete(apiKey);
    },
  };
}

export type ActiveKeys = ReturnType<typeof activeKeys>;
