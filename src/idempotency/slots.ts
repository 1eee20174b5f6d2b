/** A key is kept, and its answer replayed, for this long after it was claimed. */
export const KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** A business's kept bytes are counted by slots of this length (see the service's `overQuota`). */
export const USAGE_SLOT_MS = 15 * 60 * 1000;
/** The usage slot a time falls in. */
export const slotOf = (ms: number) => Math.floor(ms / USAGE_SLOT_MS);
