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
