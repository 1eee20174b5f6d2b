import type { Executor } from "../db/database.ts";
import type { JobKind, OutboxJob } from "../db/schema.ts";
import { iso } from "./attempts.ts";
import type { Lease, OutboxRepository } from "./outbox-repository.ts";

/** A pause of the jobs that go to one receiver, as it stands (the authority hold's row). */
export type HoldRow = {
  authority: string;
  since: string;
  reason: string;
  next_probe_at: string;
  probes: number;
};

/**
 * What the claim needs of a pause of some kinds of job (the authority hold, while the authority
 * refuses this service's credential): which kinds it pauses, whether it stands, and the probe.
 */
export type ClaimHold = {
  kinds: readonly JobKind[];
  current(tx?: Executor): Promise<HoldRow | undefined>;
  /** Whether this claimer takes the probe now: one in all the processes gets each. */
  takeProbe(now: number, tx: Executor): Promise<boolean>;
  /**
   * The probe taken, made outside the claim's transaction: a call of the pause's own that carries
   * no job (no tenant's content). True when it lifted the pause.
   */
  probe(): Promise<boolean>;
};

/** A lease from now, for `ms`. */
export function lease(owner: string, ms: number): Lease {
  const now = Date.now();
  return { owner, now: iso(now), until: iso(now + ms) };
}

/**
 * Due jobs, up to `limit`. While the hold stands, the kinds it pauses (deliveries, forwards,
 * acknowledgements) are left alone, and no job of theirs is ever the probe: once per interval among
 * all workers, one claimer takes the probe (`probe`: the hold's own call, for the caller to make
 * once this transaction is over). The other kinds (webhooks) go on.
 */
export async function claimAroundHold(
  deps: {
    outbox: Pick<OutboxRepository, "claimDue">;
    hold: Pick<ClaimHold, "kinds" | "current" | "takeProbe">;
  },
  claim: Lease,
  limit: number,
  tx: Executor,
  /** Kinds a claimer runs one at a time, and those of them it runs now (none is claimed then). */
  single: { kinds: readonly JobKind[]; running: ReadonlySet<JobKind> } = { kinds: [], running: new Set() },
): Promise<{ jobs: OutboxJob[]; probe: boolean }> {
  const { outbox, hold } = deps;
  const held = (await hold.current(tx)) !== undefined;
  const paused: readonly JobKind[] = held ? hold.kinds : [];
  const jobs: OutboxJob[] = [];
  // One of each single kind first, when its turn is free: a backlog of the other kinds never starves it.
  for (const kind of single.kinds) {
    if (jobs.length >= limit || single.running.has(kind) || paused.includes(kind)) continue;
    jobs.push(...(await outbox.claimDue(claim, 1, tx, { only: [kind] })));
  }
  const except = [...new Set([...paused, ...single.kinds])];
  if (jobs.length < limit)
    jobs.push(
      ...(await outbox.claimDue(claim, limit - jobs.length, tx, except.length > 0 ? { except } : {})),
    );
  return { jobs, probe: held ? await hold.takeProbe(Date.now(), tx) : false };
}

/**
 * A job not tried now because the authority refuses our credential, as the bounded wait reports
 * it: why, and when the probe will tell more. Undefined when nothing is paused.
 */
export async function pausedJob(
  deps: { outbox: Pick<OutboxRepository, "find">; hold: Pick<ClaimHold, "current"> },
  jobId: number,
): Promise<{ job: OutboxJob | undefined } | undefined> {
  const paused = await deps.hold.current();
  if (!paused) return undefined;
  const job = await deps.outbox.find(jobId);
  return {
    job: job && {
      ...job,
      last_error: `deliveries to the authority are paused since ${paused.since}: it refused this service's credentials (${paused.reason}); the operator must fix them`,
      next_attempt_at: paused.next_probe_at,
    },
  };
}
