import fs from "node:fs";

/*
 * How long something took of a process's own time, when the process shares a busy machine: Linux
 * counts what each thread ran and how long it waited, runnable, for a CPU (/proc/…/schedstat).
 */

type Schedule = { pid: number; at: number; on: number; waited: number; othersWaited: number };

/**
 * What Linux counts of a process's threads (schedstat), in milliseconds; zeros without /proc. By
 * default this process; a server the test started is another.
 */
export function schedule(pid = process.pid): Schedule {
  const read = (tid: string) => {
    try {
      const [on, waited] = fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ");
      return [Number(on) / 1e6, Number(waited) / 1e6];
    } catch {
      return [0, 0]; // No /proc, or the thread ended meanwhile.
    }
  };
  const [on = 0, waited = 0] = read(String(pid));
  let othersWaited = 0;
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`))
      if (tid !== String(pid)) othersWaited += read(tid)[1] ?? 0;
  } catch {
    // No /proc: nothing is taken off.
  }
  return { pid, at: performance.now(), on, waited, othersWaited };
}

/**
 * The milliseconds from `from` (by default when `since` was taken) to now that were this process's
 * own. Taken off: the time the main thread waited for a CPU, and of the time it was blocked, as much
 * as the other threads waited for one (the collector's helpers, which it waits for: the service and
 * its clients share this process). What the main thread ran is always counted. On an idle machine
 * nothing is taken off.
 */
export function ownMs(since: Schedule, from = since.at): number {
  const now = schedule(since.pid);
  const wall = now.at - from;
  const waited = now.waited - since.waited;
  const blocked = Math.max(0, wall - (now.on - since.on) - waited);
  return wall - waited - Math.min(blocked, now.othersWaited - since.othersWaited);
}

export type Wait = { ms: number; wall: number; during: string };

/**
 * Asks `url`/healthz one request at a time, 10 ms apart, until `stop` (and until at least as many as
 * it is given have answered: on a loaded machine a probe can take 40 ms): how long each waited from
 * when it was due (so that an event loop held up before a probe's timer could fire counts too), of
 * this process's own time (the server under test runs in it) and on the clock. `during` names what
 * each wait is put down to, when the test sends several things in turn.
 */
export function probeHealthz(url: string, during: () => string = () => "") {
  let probing = true;
  let atLeast = 0;
  const waits: Wait[] = [];
  const probing$ = (async () => {
    while (probing || waits.length < atLeast) {
      const [due, since] = [performance.now() + 10, schedule()];
      await new Promise((resolve) => setTimeout(resolve, 10));
      const res = await fetch(`${url}/healthz`);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
      waits.push({ ms: ownMs(since, due), wall: performance.now() - due, during: during() });
    }
  })();
  return {
    waits,
    async stop(minimum = 0): Promise<Wait[]> {
      atLeast = minimum;
      probing = false;
      await probing$;
      return waits;
    },
  };
}
