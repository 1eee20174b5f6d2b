import type { Db, Executor } from "../db/database.ts";
import type { AuthorityHoldTable } from "../db/schema.ts";
import { iso } from "../outbox/attempts.ts";
import { messageOf } from "../outbox/failure.ts";
import { failedWith, type Verdict } from "../outbox/verdict.ts";
import type { Write } from "../outbox/write.ts";
import { DeliveryError } from "./authority/connector.ts";
import type { CredentialProbe } from "./authority/credential-probe.ts";

export type AuthorityHoldRow = Omit<AuthorityHoldTable, "probes"> & { probes: number };

/** SQL only: the `authority_holds` row of one authority. */
export function authorityHoldRepository(db: Db) {
  return {
    async find(authority: string, tx: Executor = db): Promise<AuthorityHoldRow | undefined> {
      return tx
        .selectFrom("authority_holds")
        .selectAll()
        .where("authority", "=", authority)
        .executeTakeFirst();
    },
    /** Starts a hold, or keeps the one there (its start and probe time) with the latest reason. */
    async open(row: Omit<AuthorityHoldRow, "probes">, tx: Executor = db): Promise<void> {
      await tx
        .insertInto("authority_holds")
        .values({ ...row, probes: 0 })
        .onConflict((oc) => oc.column("authority").doUpdateSet({ reason: row.reason }))
        .execute();
    },
    /** Takes the probe if it is due: one claimer in all the processes gets it (a compare-and-set). */
    async takeProbe(authority: string, now: string, next: string, tx: Executor = db): Promise<boolean> {
      const result = await tx
        .updateTable("authority_holds")
        .set((eb) => ({ next_probe_at: next, probes: eb("probes", "+", 1) }))
        .where("authority", "=", authority)
        .where("next_probe_at", "<=", now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async close(authority: string, tx: Executor = db): Promise<number> {
      const result = await tx
        .deleteFrom("authority_holds")
        .where("authority", "=", authority)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

export type AuthorityHoldRepository = ReturnType<typeof authorityHoldRepository>;

/**
 * The pause of every delivery, forward and acknowledgement to an authority that refused this
 * service's credential (the MBS spec, section 7: "configuration hold … do not spend the retry budget
 * per invoice"). It pauses every tenant, so it opens only on evidence that carries no tenant's
 * content: the connector's content-free probe refused (credential-probe.ts judges a tenant's call
 * answered as a refused credential by asking it). From then on no worker claims those jobs; one
 * claimer every `probeMs` asks the probe again, and not a tenant's job: passed, the hold closes and
 * the jobs resume at once; refused, it stands; no answer, it stands. A delivery done meanwhile (its
 * call was on its way when the hold opened) closes it too: the credential passed. The hold is a
 * row, so every process pauses and probes as one; what this process knows of it is a cache
 * refreshed at each claim, used only to skip the close when there is nothing to close. The outbox's
 * claim sees it through its narrow ClaimHold (the kinds it pauses, `current`, `takeProbe`, `probe`).
 */
export function authorityHold(deps: {
  holds: AuthorityHoldRepository;
  authority: string;
  probeMs: number;
  /** The connector's probe; none for an authority without credentials (builtin): nothing to refuse. */
  probe: Pick<CredentialProbe, "fresh"> | undefined;
  /** How the probe's outcome is written, outside any claim's transaction. */
  write: Write;
}) {
  const { holds, authority, probeMs, probe, write } = deps;
  let seen = false;

  /** The authority refused the credential: held, the next probe one interval from now. */
  async function refused(reason: string, at: string, tx: Executor): Promise<void> {
    seen = true;
    await holds.open({ authority, since: at, reason, next_probe_at: iso(Date.parse(at) + probeMs) }, tx);
  }

  /** The credential passed: whatever hold there is, it is over. */
  async function passed(tx: Executor): Promise<void> {
    if (!seen) return;
    await holds.close(authority, tx);
    seen = false;
  }

  return {
    authority,
    probeMs,
    /** The kinds of job that call the authority, and wait while it refuses our credential. */
    kinds: ["delivery", "forward", "acknowledgement", "pull"] as const,
    /** The hold as it stands, if any. */
    async current(tx?: Executor): Promise<AuthorityHoldRow | undefined> {
      const row = await holds.find(authority, tx);
      seen = row !== undefined;
      return row;
    },
    /** Whether this claimer takes the probe now (the hold is due one). */
    takeProbe: (now: number, tx: Executor) => holds.takeProbe(authority, iso(now), iso(now + probeMs), tx),
    /**
     * The probe this claimer took: the content-free call, outside any transaction. True when it
     * passed and the hold is closed (the jobs it paused are due now).
     */
    async probe(): Promise<boolean> {
      const said = probe ? await probe.fresh() : ({ outcome: "passed" } as const);
      if (said.outcome === "passed") {
        await write((tx) => holds.close(authority, tx));
        seen = false;
        return true;
      }
      // Its latest words, for the operator; the hold keeps its start and its next probe.
      if (said.outcome === "refused") await write((tx) => refused(said.message, iso(Date.now()), tx));
      return false;
    },
    passed,
    /**
     * What a failed attempt tells of the hold: a refused credential, as a call without a tenant's
     * content proved it (the probe, credential-probe.ts), opens it, its reason that call's words. No
     * other failure closes it: a refusal of a request's content (MBS checks some requests before the
     * credential [recorded]) or a 5xx says nothing of the credential.
     */
    async failed(err: unknown, at: string, tx: Executor): Promise<void> {
      if (err instanceof DeliveryError && err.credential) await refused(err.message, at, tx);
    },
  };
}

export type AuthorityHold = ReturnType<typeof authorityHold>;

/**
 * The verdict of a failed attempt to the authority: a refused credential waits on the hold (due
 * again as soon as it lifts), another hold (the buyer's, the configuration's) at the slowest pace,
 * neither counted against the budget; anything else is a failed attempt, as the outbox's policy has it.
 */
export function authorityVerdict(err: unknown): Failed {
  const failure = err instanceof DeliveryError ? err : undefined;
  if (failure?.credential) return { outcome: "held", error: messageOf(err), pace: "hold" };
  if (failure?.hold) return { outcome: "held", error: messageOf(err), pace: "slowest" };
  return failedWith(err) as Failed;
}

/** The verdicts of an attempt that did not get through. */
export type Failed = Extract<Verdict, { outcome: "held" | "failed" }>;
