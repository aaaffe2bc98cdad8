// Long work on the event loop cut into short stretches: a loop held longer than this delays every list,
// get and write that arrives meanwhile by as much (issue 26: no stall over ~2 ms).

/** Longest stretch of work before it gives the event loop a turn. */
export const STRETCH_MS = 2;

/**
 * When the loop last had a turn that this module saw. One clock for all work, not one per caller: searches
 * resumed by promise reactions run one after another without the loop in between, each under its own
 * stretch, and a profile under load showed such chains holding the loop 48–80 ms. A turn the loop took
 * through I/O is not seen, so work may yield once more than it needs to: one check-phase wait.
 */
let lastTurn = performance.now();

/** One turn of the event loop: what arrived meanwhile (I/O callbacks, timers) runs before the caller goes on. */
export const loopTurn = (): Promise<void> =>
  new Promise((resolve) =>
    setImmediate(() => {
      lastTurn = performance.now();
      resolve();
    }),
  );

/**
 * A check to call between steps of long work: it gives the loop a turn only once the loop has been held
 * `stretchMs` since its last turn, so short work between turns never waits behind the requests that a
 * turn lets in.
 */
export function loopTurns(stretchMs = STRETCH_MS): () => Promise<void> {
  return async () => {
    if (performance.now() - lastTurn < stretchMs) return;
    await loopTurn();
  };
}
