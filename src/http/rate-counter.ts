import { isIPv6 } from "node:net";

/**
 * Hits per key over the last minute, counted in 10-second buckets: the window slides in steps of
 * 10 s, so a client gets its budget back bucket by bucket (never more than a minute after it spent
 * it) and no minute boundary lets it spend twice its budget in a moment. Bucket counts add up, so
 * several processes can pool theirs (see `SharedCounts`) without sharing a clock beyond the wall's.
 *
 * Everything a request touches is in memory: one map lookup and a six-slot loop. What other
 * processes counted arrives in the background.
 */
export const BUCKET_MS = 10_000;
const SLOTS = 6;

/**
 * Far more distinct keys than a deployment sees in a minute (measured: 64 MB of heap when full).
 * Past it the keys seen first are forgotten, a tenth at a time so that the sweep costs little per new
 * key: a client would need 100,000 addresses (or /64 networks) in a minute to wipe its own count.
 */
const MAX_KEYS = 100_000;

/** Keys sent per exchange at most; the rest go in the next ones, so one statement stays small. */
const KEYS_PER_EXCHANGE = 5000;

type Entry = {
  /** The latest bucket counted in. */
  last: number;
  /** The bucket each slot holds (slot = bucket % SLOTS). */
  ids: number[];
  /** Hits this process counted. */
  own: number[];
  /** Of `own`, what has been sent to the shared store. */
  sent: number[];
  /** Hits the other processes counted, as of the last exchange. */
  others: number[];
};

export type Verdict = {
  allowed: boolean;
  /** Requests left in the window after this one. */
  remaining: number;
  /** When refused: seconds until one more request fits (1 to 60). */
  retryAfter: number;
};

/** The deployment-wide tally: this process's new hits in, every process's counts out. */
export type SharedCounts = {
  /** Adds the hits and returns every process's total for these keys in buckets `from` and later. */
  exchange(
    added: readonly { key: string; bucket: number; hits: number }[],
    keys: readonly string[],
    from: number,
  ): Promise<{ key: string; bucket: number; hits: number }[]>;
  /** Forgets buckets before `before`. */
  prune(before: number): Promise<void>;
};

export type RateCounter = ReturnType<typeof rateCounter>;

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a factory: its closures are the counter's operations, each short
export function rateCounter(
  options: {
    shared?: SharedCounts;
    /** How often counts are exchanged with the shared store. */
    syncMs?: number;
    onSyncError?: (err: unknown) => void;
    now?: () => number;
  } = {},
) {
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();

  /** Keys counted since the last exchange with the shared store. */
  const dirty = new Set<string>();
  let lastSweep = 0;

  const entryOf = (key: string, at: number, create: boolean): Entry | undefined => {
    let entry = entries.get(key);
    if (!entry) {
      if (!create) return undefined;
      // Keys idle for a minute are dropped once a minute, so memory follows the traffic.
      if (at - lastSweep >= SLOTS * BUCKET_MS || entries.size >= MAX_KEYS) {
        lastSweep = at;
        forget(Math.floor(at / BUCKET_MS));
      }
      entry = {
        last: -1,
        // Literals of SLOTS elements: several times faster to make than filled arrays.
        ids: [-1, -1, -1, -1, -1, -1],
        own: [0, 0, 0, 0, 0, 0],
        sent: [0, 0, 0, 0, 0, 0],
        others: [0, 0, 0, 0, 0, 0],
      };
      entries.set(key, entry);
    }
    return entry;
  };

  const forget = (bucket: number) => {
    for (const [key, entry] of entries) {
      if (entry.last <= bucket - SLOTS) entries.delete(key);
    }
    if (entries.size < MAX_KEYS) return;
    // Still full: the keys seen first go (a map iterates in insertion order).
    let excess = entries.size - MAX_KEYS * 0.9;
    for (const key of entries.keys()) {
      if (excess-- <= 0) break;
      entries.delete(key);
    }
  };

  const slotFor = (entry: Entry, bucket: number) => {
    const slot = bucket % SLOTS;
    if (entry.ids[slot] !== bucket) {
      entry.ids[slot] = bucket;
      entry.last = Math.max(entry.last, bucket);
      entry.own[slot] = 0;
      entry.sent[slot] = 0;
      entry.others[slot] = 0;
    }
    return slot;
  };

  const verdict = (
    key: string,
    entry: Entry | undefined,
    max: number,
    at: number,
    counting: boolean,
  ): Verdict => {
    const bucket = Math.floor(at / BUCKET_MS);
    let total = 0;
    if (entry) {
      for (let s = 0; s < SLOTS; s++) {
        if ((entry.ids[s] as number) > bucket - SLOTS)
          total += (entry.own[s] as number) + (entry.others[s] as number);
      }
    }
    if (total < max) {
      if (counting && entry) {
        const slot = slotFor(entry, bucket);
        entry.own[slot] = (entry.own[slot] as number) + 1;
        if (options.shared) dirty.add(key);
      }
      return { allowed: true, remaining: Math.max(0, max - total - (counting ? 1 : 0)), retryAfter: 0 };
    }
    // Refused hits are not counted: a client that keeps trying still gets its budget each minute.
    // The oldest buckets leave the window first; wait until enough of them have.
    let left = total;
    let until = (bucket + 1) * BUCKET_MS;
    for (let b = bucket - SLOTS + 1; b <= bucket && left >= max; b++) {
      const s = b % SLOTS;
      if (entry && entry.ids[s] === b) left -= (entry.own[s] as number) + (entry.others[s] as number);
      until = (b + SLOTS) * BUCKET_MS;
    }
    return { allowed: false, remaining: 0, retryAfter: Math.max(1, Math.ceil((until - at) / 1000)) };
  };

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let lastPrune = 0;

  /** Sends this process's new hits and takes back every process's counts for the keys they touch. */
  const sync = async (shared: SharedCounts) => {
    const at = now();
    const bucket = Math.floor(at / BUCKET_MS);
    const from = bucket - SLOTS + 1;
    const added: { key: string; bucket: number; hits: number }[] = [];
    const keys: string[] = [];
    for (const key of dirty) {
      if (keys.length >= KEYS_PER_EXCHANGE) break;
      dirty.delete(key);
      const entry = entries.get(key);
      if (!entry) continue;
      let touched = false;
      for (let s = 0; s < SLOTS; s++) {
        const id = entry.ids[s] as number;
        const fresh = (entry.own[s] as number) - (entry.sent[s] as number);
        if (id >= from && fresh > 0) {
          added.push({ key, bucket: id, hits: fresh });
          entry.sent[s] = entry.own[s] as number;
          touched = true;
        }
      }
      if (touched) keys.push(key);
    }
    if (keys.length > 0) {
      let totals: Awaited<ReturnType<SharedCounts["exchange"]>>;
      try {
        totals = await shared.exchange(added, keys, from);
      } catch (err) {
        // Not sent after all: the next exchange sends them again.
        for (const hit of added) {
          const entry = entries.get(hit.key);
          const s = hit.bucket % SLOTS;
          if (entry && entry.ids[s] === hit.bucket) entry.sent[s] = (entry.sent[s] as number) - hit.hits;
          dirty.add(hit.key);
        }
        throw err;
      }
      for (const total of totals) {
        const entry = entries.get(total.key);
        const s = total.bucket % SLOTS;
        if (entry && entry.ids[s] === total.bucket) {
          entry.others[s] = Math.max(0, total.hits - (entry.sent[s] as number));
        } else if (entry && total.bucket > (entry.ids[s] as number) && total.bucket > bucket - SLOTS) {
          // A bucket only the other processes have counted in.
          entry.ids[s] = total.bucket;
          entry.last = Math.max(entry.last, total.bucket);
          entry.own[s] = 0;
          entry.sent[s] = 0;
          entry.others[s] = total.hits;
        }
      }
    }
    if (at - lastPrune >= SLOTS * BUCKET_MS) {
      lastPrune = at;
      await shared.prune(from - 1);
    }
  };

  return {
    /** Counts one request against `max` per minute, unless the key has none left. */
    hit(key: string, max: number): Verdict {
      const at = now();
      return verdict(key, entryOf(key, at, true), max, at, true);
    },
    /** Whether one more request would fit, without counting it. */
    peek(key: string, max: number): Verdict {
      const at = now();
      return verdict(key, entryOf(key, at, false), max, at, false);
    },
    /** Starts the background exchange with the shared store, if there is one. */
    start() {
      const { shared } = options;
      if (!shared || timer) return;
      timer = setInterval(() => {
        if (running) return;
        running = sync(shared)
          .catch((err: unknown) => options.onSyncError?.(err))
          .finally(() => {
            running = undefined;
          });
      }, options.syncMs ?? 1000);
      // The exchange never keeps a process alive on its own.
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await running;
    },
    /** Keys counted, for tests and bounds. */
    get size() {
      return entries.size;
    },
  };
}

/**
 * The address a per-address limit counts: IPv4 as is, IPv6 by its /64 network, since one
 * subscriber commonly holds a whole /64 and could otherwise take a fresh address per request.
 */
export function addressKey(ip: string): string {
  // Every IPv6 address is written with colons: an IPv4 one (most requests) skips isIPv6's pattern,
  // about 3 µs an authenticated request in a profile of the sign.
  if (!ip.includes(":") || !isIPv6(ip)) return ip;
  const bare = ip.split("%")[0] as string;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return mapped[1] as string;
  const [head = "", tail] = bare.split("::");
  const front = head === "" ? [] : head.split(":");
  const back = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups =
    tail === undefined
      ? front
      : [...front, ...new Array(Math.max(0, 8 - front.length - back.length)).fill("0"), ...back];
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(":")}::/64`;
}
