import type { Business } from "../db/schema.ts";
import type { BusinessRepository } from "./business-repository.ts";

/** What of a business never changes once it is created: everything but the head of its chain. */
export type BusinessProfile = Omit<Business, "chain_head" | "chain_length">;

/**
 * Business profiles by id, kept in memory for the per-request checks. Nothing changes a profile once
 * written (only the chain columns move, and those are read under the chain lock, never from here),
 * so a kept profile cannot be stale. Unknown ids are not kept: a business another process adds is
 * found on its first request.
 */
export function businessProfiles(repository: Pick<BusinessRepository, "findById">, limit = 10_000) {
  const kept = new Map<string, BusinessProfile>();
  return {
    async find(id: string): Promise<BusinessProfile | undefined> {
      const hit = kept.get(id);
      if (hit) return hit;
      const row = await repository.findById(id);
      if (!row) return undefined;
      const { chain_head: _head, chain_length: _length, ...profile } = row;
      if (kept.size >= limit) kept.delete(kept.keys().next().value as string);
      kept.set(id, profile);
      return profile;
    },
  };
}

export type BusinessProfiles = ReturnType<typeof businessProfiles>;
