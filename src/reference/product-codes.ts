import type { CatalogRepository } from "./catalog-repository.ts";

/**
 * The product catalog's codes, kept in memory for the check of every invoice line: a read of the
 * catalog on each validate and sign was about a tenth of their cost. An import in this process
 * refreshes them at once; one by another process (the CLI) is seen within `maxAgeMs` (on SQLite
 * the codes are read again only when another connection has committed since). A stale set can only
 * change a warning (an unknown product code is not an error).
 */
export function productCodes(
  catalog: Pick<CatalogRepository, "productCodes">,
  maxAgeMs = 5_000,
  /**
   * A number that changes when another connection commits (SQLite's, database.ts `changeCounter`),
   * undefined when it cannot tell: while it holds, the kept codes are current without a read.
   */
  changes?: () => number | undefined,
) {
  let kept: { codes: Set<string> | undefined; at: number; version: number | undefined } | undefined;
  let loading: Promise<Set<string> | undefined> | undefined;

  async function load(): Promise<Set<string> | undefined> {
    // Read before the codes: a commit between the two changes it again, and the next look reloads.
    const version = changes?.();
    const codes = await catalog.productCodes();
    const previous = kept?.codes;
    // The same codes keep the same set: a thread that checks against it was sent it once, and is
    // sent it again only when it changes (catalogSync), not after every reload.
    const unchanged =
      previous !== undefined && codes.length === previous.size && codes.every((code) => previous.has(code));
    kept = {
      codes: unchanged ? previous : codes.length > 0 ? new Set(codes) : undefined,
      at: Date.now(),
      version,
    };
    return kept.codes;
  }

  return {
    /** Every code of the catalog; undefined when no catalog has been imported. */
    async current(): Promise<ReadonlySet<string> | undefined> {
      if (kept && Date.now() - kept.at < maxAgeMs) return kept.codes;
      // No other connection has committed since the codes were read, and this process's own
      // imports forget them: they are the same. A server alone on its SQLite file so skips reading
      // its 5,613 codes every 5 s (about 3 ms of its event loop each time).
      if (kept?.version !== undefined && changes?.() === kept.version) {
        kept.at = Date.now();
        return kept.codes;
      }
      loading ??= load().finally(() => {
        loading = undefined;
      });
      return loading;
    },
    forget(): void {
      kept = undefined;
    },
  };
}

export type ProductCodes = ReturnType<typeof productCodes>;
