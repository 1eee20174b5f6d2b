import type { ApiKeyTable } from "../db/schema.ts";

/** How long a look at the database's change counter vouches for the rows kept. */
export const CHANGES_LOOKED_AT_MS = 50;
/**
 * How long a revocation waits, once committed, before it answers: by then every process that keeps
 * rows has looked at the change counter since the commit, so the revoked key fails from the very
 * next request, whichever process serves it.
 */
export const REVOCATION_SETTLES_MS = 2 * CHANGES_LOOKED_AT_MS;

/**
 * Active credentials kept in memory for authentication, exact under revocation. A kept row is used
 * only while nothing can have revoked it since it was read:
 * - the change counter (`changes`) has not moved since it was last looked at, at most
 *   CHANGES_LOOKED_AT_MS ago. On SQLite it is `data_version`, which any commit by another connection
 *   moves; on PostgreSQL a row that any change to `api_keys` moves, this process's own included. A
 *   revocation by the CLI or another API process moves it, and every kept row goes.
 *   A revocation answers only REVOCATION_SETTLES_MS after its commit (business-service.ts), so a
 *   request sent after that answer meets a look taken after the commit. The counter costs about as
 *   much as the read it saves once Kysely's share is left out (5–9 µs in a busy server): looked at
 *   on every request it took 9% of a validate, looked at every 50 ms nothing;
 * - this process has not revoked it: its own revocations call `forget` before they answer (SQLite's
 *   counter does not count them; PostgreSQL's does, but only at the next look).
 * A row is read after the look that vouches for it. A read that began before a `forget` is not kept.
 * Unknown and revoked keys are never kept: a key created elsewhere works on its first request.
 * On PostgreSQL the counter is a row the triggers on `api_keys` move (migration-0019.ts), read on
 * the pool: the look is a round trip, so a request that finds the last one too old waits for the
 * next, which the requests arriving meanwhile share, and a look vouches from the moment it began
 * (its snapshot is taken after that). Where the counter cannot tell at that moment (inside a
 * transaction that may read an older snapshot, or the database unreachable), the lookup reads the
 * row; after a look that failed, the next waits CHANGES_LOOKED_AT_MS, so a failing counter costs a
 * look every 50 ms, not one a request.
 */
export function activeKeys(deps: {
  find(apiKey: string): Promise<ApiKeyTable | undefined>;
  /**
   * A value that changes whenever a credential may have changed, by a commit of another connection
   * (SQLite: database.ts's `changeCounter`; PostgreSQL: the repository's `credentialsVersion`,
   * asynchronous); it answers undefined when it cannot tell at that moment. Undefined: keep nothing.
   */
  changes: (() => number | undefined | Promise<number | undefined>) | undefined;
  limit?: number;
  /** Milliseconds from some fixed point (tests move it). */
  now?: () => number;
}) {
  const { find, changes } = deps;
  const limit = deps.limit ?? 10_000;
  const now = deps.now ?? (() => performance.now());
  const kept = new Map<string, ApiKeyTable>();
  let keptAt: number | undefined;
  let lookedAt = Number.NEGATIVE_INFINITY;
  /** Moves on every `forget`: a read begun before one is not kept. */
  let forgets = 0;

  /** The look at the counter under way, when it is asynchronous: when it began, and its verdict. */
  let looking: { at: number; vouches: Promise<boolean> } | undefined;

  /** When the last asynchronous look failed. */
  let failedAt = Number.NEGATIVE_INFINITY;

  /** The counter read by a look that began at `at`: the kept rows go when it moved. */
  function looked(at: number, version: number | undefined): boolean {
    if (version === undefined) return false;
    if (at < lookedAt) {
      // A later look has answered already and vouches for whoever waited on this one. This one's
      // snapshot may still be the newer (it may have waited for a connection): if it saw another
      // value, the kept rows go, which is always safe.
      if (version !== keptAt) kept.clear();
      return true;
    }
    if (version !== keptAt) {
      kept.clear();
      keptAt = version;
    }
    lookedAt = at;
    return true;
  }

  /** Whether the kept rows are vouched for now, looking at the counter again if need be. */
  function vouched(): boolean | Promise<boolean> {
    if (!changes) return false;
    const at = now();
    if (at - lookedAt <= CHANGES_LOOKED_AT_MS) return true;
    if (at - failedAt <= CHANGES_LOOKED_AT_MS) return false;
    if (looking && at - looking.at <= CHANGES_LOOKED_AT_MS) return looking.vouches;
    const version = changes();
    if (typeof version !== "object") return looked(at, version);
    const failed = () => {
      failedAt = Math.max(failedAt, at);
      return false;
    };
    const look = {
      at,
      vouches: Promise.resolve(version).then(
        (answered) => (answered === undefined ? failed() : looked(at, answered)),
        failed,
      ),
    };
    looking = look;
    void look.vouches.finally(() => {
      if (looking === look) looking = undefined;
    });
    return look.vouches;
  }

  return {
    async find(apiKey: string): Promise<ApiKeyTable | undefined> {
      // Awaited only when a look is under way: on SQLite, and between looks, it is answered in place.
      const vouches = vouched();
      if (!(typeof vouches === "boolean" ? vouches : await vouches)) return find(apiKey);
      const hit = kept.get(apiKey);
      if (hit) return hit;
      const [began, version] = [forgets, keptAt];
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
