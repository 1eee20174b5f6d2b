import { createHash } from "node:crypto";

/** The fault classes a rate can be given for (`--faults transient=0.1,...`). */
export const RATE_CLASSES = [
  "credential",
  "5xx",
  "transient",
  "try_later",
  "duplicate",
  "not_enabled",
  "partial",
  "no_webhook",
  "drop",
  "slow",
] as const;
export type RateClass = (typeof RATE_CLASSES)[number];
/** `down` comes from windows (or the header), `reject` from an IRN prefix: neither takes a rate. */
export type FaultClass = RateClass | "down" | "reject";

/**
 * Every authenticated endpoint takes these; the others are per endpoint: `try_later` on validate and
 * sign, `duplicate` on sign, `not_enabled`, `partial` and `no_webhook` on transmit.
 */
export const COMMON_CLASSES: readonly RateClass[] = ["credential", "5xx", "transient", "drop", "slow"];

export type Window = { from: number; to: number };
export type FaultSpec = { rates: Partial<Record<RateClass, number>>; down: Window[]; slowMs: number };

export const DEFAULT_SLOW_MS = 2000;
export const NO_FAULTS: FaultSpec = { rates: {}, down: [], slowMs: DEFAULT_SLOW_MS };

export class FaultSpecError extends Error {}

const PROBABILITY = /^(?:0(?:\.\d+)?|1(?:\.0+)?|\.\d+)$/;
const SECONDS = /^\d+(?:\.\d+)?$/;

function parseWindows(value: string, part: string): Window[] {
  return value.split("+").map((range) => {
    const [from, to, extra] = range.split("-");
    if (extra !== undefined || !from || !to || !SECONDS.test(from) || !SECONDS.test(to)) {
      throw new FaultSpecError(
        `invalid --faults part "${part}": a window is A-B in seconds, e.g. down=5-10+30-40`,
      );
    }
    if (Number(from) >= Number(to)) {
      throw new FaultSpecError(`invalid --faults part "${part}": window ${range} ends before it starts`);
    }
    return { from: Number(from), to: Number(to) };
  });
}

/**
 * `name=value` pairs separated by commas: a rate class with a probability in [0,1], `down=A-B[+C-D…]`
 * (downtime windows, in seconds after the spec takes effect) and `slow_ms=N`. Empty means no faults.
 * The error names the part that is wrong.
 */
export function parseFaults(text: string | undefined): FaultSpec {
  const spec: FaultSpec = { rates: {}, down: [], slowMs: DEFAULT_SLOW_MS };
  if (text === undefined || text.trim() === "") return spec;
  const seen = new Set<string>();
  for (const raw of text.split(",")) {
    const part = raw.trim();
    const [name, value, extra] = part.split("=").map((s) => s.trim());
    if (!name || value === undefined || value === "" || extra !== undefined) {
      throw new FaultSpecError(`invalid --faults part "${part}": expected name=value`);
    }
    if (seen.has(name)) throw new FaultSpecError(`invalid --faults part "${part}": ${name} is given twice`);
    seen.add(name);
    if ((RATE_CLASSES as readonly string[]).includes(name)) {
      if (!PROBABILITY.test(value)) {
        throw new FaultSpecError(`invalid --faults part "${part}": a probability is a number in [0,1]`);
      }
      spec.rates[name as RateClass] = Number(value);
    } else if (name === "down") {
      spec.down = parseWindows(value, part);
    } else if (name === "slow_ms") {
      if (!/^\d{1,6}$/.test(value)) {
        throw new FaultSpecError(
          `invalid --faults part "${part}": slow_ms is a whole number of milliseconds`,
        );
      }
      spec.slowMs = Number(value);
    } else {
      throw new FaultSpecError(
        `invalid --faults part "${part}": unknown name ${name} (known: ${RATE_CLASSES.join(", ")}, down, slow_ms)`,
      );
    }
  }
  return spec;
}

/**
 * A number in [0,1) from the seed and what identifies one request: the same requests give the same
 * numbers whatever else runs beside them, so a run of faults can be replayed.
 */
export function fraction(seed: number, ...parts: (string | number)[]): number {
  const digest = createHash("sha256")
    .update([seed, ...parts].join("\u0000"))
    .digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
}

/** An invoice whose number starts with `word` gets `fault` on its first `calls` calls of the endpoint. */
export type PrefixRule = { word: string; fault: FaultClass; calls: number };

export const SIGN_PREFIXES: readonly PrefixRule[] = [
  { word: "TRANSIENT", fault: "transient", calls: 1 },
  { word: "SERVERERROR", fault: "5xx", calls: 1 },
  { word: "DROP", fault: "drop", calls: 1 },
  { word: "SLOW", fault: "slow", calls: 1 },
  { word: "DUPLICATE", fault: "duplicate", calls: 1 },
  { word: "TRYLATER", fault: "try_later", calls: 1 },
];
export const TRANSMIT_PREFIXES: readonly PrefixRule[] = [
  { word: "PARTIAL", fault: "partial", calls: 1 },
  // Two, so a client that retries once at once still meets it and must learn to wait on the buyer
  // (or on its operator, for the webhook).
  { word: "NOTENABLED", fault: "not_enabled", calls: 2 },
  { word: "NOWEBHOOK", fault: "no_webhook", calls: 2 },
];

/**
 * The receiver's acknowledgement (`PATCH transmit/{IRN}`) of an invoice whose number starts with one
 * of these: a client that cannot send the fault header (the service's own connector, end to end)
 * meets a fault on its first acknowledgement. ACKDROP records the acknowledgement and loses the
 * answer, so the client's retry is a repeat.
 */
export const ACK_PREFIXES: readonly PrefixRule[] = [
  { word: "ACKTRANSIENT", fault: "transient", calls: 1 },
  { word: "ACKSERVERERROR", fault: "5xx", calls: 1 },
  { word: "ACKDROP", fault: "drop", calls: 1 },
  { word: "ACKSLOW", fault: "slow", calls: 1 },
];

/** What one request asks of the planner. */
export type FaultQuery = {
  /** "POST /api/v1/invoice/sign": the route pattern, not the URL. */
  route: string;
  /** What the request is about (its IRN, a transaction id, …); counts of calls are per route and key. */
  key: string;
  irn?: string;
  /** The classes this endpoint takes, in the order they are tried. */
  classes: readonly RateClass[];
  prefixes: readonly PrefixRule[];
  /** A class forced by the request's header, already checked against `classes`. */
  forced?: FaultClass;
};

/** `variant` picks among a class's answers (which 5xx, which transient status), deterministically too. */
export type Decision = { fault: FaultClass; variant: number };

/** The fault decisions and their counts; holds the spec in force and how often each key was seen. */
export function createFaultPlanner(seed: number, initial: FaultSpec, now = Date.now()) {
  let spec = initial;
  let since = now;
  const seen = new Map<string, number>();
  const counts = new Map<string, number>();

  const decide = (query: FaultQuery): Decision | undefined => {
    const counter = `${query.route}\u0000${query.key}`;
    const n = (seen.get(counter) ?? 0) + 1;
    seen.set(counter, n);
    const variant = fraction(seed, "variant", query.route, query.key, n);
    if (query.forced) return { fault: query.forced, variant };
    const number = query.irn?.split("-")[0] ?? "";
    const rule = query.prefixes.find((p) => number.startsWith(p.word));
    if (rule) return n <= rule.calls ? { fault: rule.fault, variant } : undefined;
    // The first class whose draw falls under its rate wins; each class draws on its own, so a class's
    // decisions do not change when another's rate does.
    for (const cls of query.classes) {
      const rate = spec.rates[cls] ?? 0;
      if (rate > 0 && fraction(seed, cls, query.route, query.key, n) < rate) return { fault: cls, variant };
    }
    return undefined;
  };

  return {
    decide,
    count: (fault: FaultClass) => counts.set(fault, (counts.get(fault) ?? 0) + 1),
    counts: (): Record<string, number> => Object.fromEntries(counts),
    inDowntime: (at = Date.now()) => {
      const seconds = (at - since) / 1000;
      return spec.down.some((w) => seconds >= w.from && seconds < w.to);
    },
    slowMs: () => spec.slowMs,
    /** Downtime windows count from the moment a spec takes effect. */
    setSpec: (next: FaultSpec, at = Date.now()) => {
      spec = next;
      since = at;
    },
  };
}

export type FaultPlanner = ReturnType<typeof createFaultPlanner>;
