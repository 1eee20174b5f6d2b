/** A turn of the event loop for everything else waiting: timers, I/O, other requests. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Paces a long loop on the event loop: `await pace()` between items gives other requests a turn
 * once the loop has held the event loop for `ms`, however the work is spread over its items.
 */
export function pacer(ms: number): () => Promise<void> {
  let turnStarted = performance.now();
  return async () => {
    if (performance.now() - turnStarted < ms) return;
    await nextTurn();
    turnStarted = performance.now();
  };
}
