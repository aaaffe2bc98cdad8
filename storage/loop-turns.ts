// Long work on the event loop cut into short stretches: a loop held longer than this delays every list,
// get and write that arrives meanwhile by as much (issue 26: no stall over ~2 ms).

/** Longest stretch of work before it gives the event loop a turn. */
export const STRETCH_MS = 2;

/** One turn of the event loop: what arrived meanwhile (I/O callbacks, timers) runs before the caller goes on. */
export const loopTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A check to call between steps of long work: it gives the loop a turn only once the work has run
 * `stretchMs` since its last one, so short work (most calls) never waits behind the requests that a turn
 * lets in.
 */
export function loopTurns(stretchMs = STRETCH_MS): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < stretchMs) return;
    await loopTurn();
    since = performance.now();
  };
}
