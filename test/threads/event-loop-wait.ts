/** The longest the event loop waited for an `intervalMs` timer while `work` ran. */
export async function worstWait(work: () => Promise<unknown>, intervalMs: number): Promise<number> {
  let worst = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, intervalMs);
  await work();
  clearInterval(timer);
  // The gap still open when the work ends counts too: work that never let the timer run is one gap.
  return Math.max(worst, performance.now() - last);
}

/**
 * The least of three runs' worst waits: a moment when the machine is busy elsewhere stretches one
 * run's waits, while work that holds the event loop stretches every run's.
 */
export async function leastWait(work: () => Promise<unknown>, intervalMs: number): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 3; run++) best = Math.min(best, await worstWait(work, intervalMs));
  return best;
}

/**
 * Up to three runs of `measure`, ending at the first whose figure `passes`, for a measure that
 * takes long or says more than a wait (the same reasoning as leastWait's: a moment when the machine
 * is busy elsewhere spoils one run, what the code under test does spoils every run). Answers each
 * run's figure in order: the last one passed unless none did.
 */
export async function untilOnePasses(
  measure: () => Promise<number>,
  passes: (figure: number) => boolean,
): Promise<number[]> {
  const figures: number[] = [];
  while (figures.length < 3) {
    const figure = await measure();
    figures.push(figure);
    if (passes(figure)) break;
  }
  return figures;
}
