// Long work on the event loop cut into short stretches: a loop held longer than this delays every list,
// get and write that arrives meanwhile by as much (issue 26: no stall over ~2 ms).

/** Longest stretch of work before it gives the event loop a turn. */
export const STRETCH_MS = 2;

/** One turn of the event loop: what arrived meanwhile (I/O callbacks, timers) runs before the caller goes on. */
export const loopTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A check to call between steps of long work: it gives the loop a turn only once the work has run
 * `stretchMs` since its last one, so short work (most calls) never waits behind the requests that a turn
 * lets in. Each caller keeps its own clock. One clock shared by all work, set at each turn this module saw,
 * was tried (2026-11-28): the loop's turns through I/O go unseen, so under load nearly every check found it
 * stale and yielded, each turn waited behind the requests queued meanwhile, and an index batch's appends
 * took one turn per space; list p99 was 129–156 ms in the three runs with it at 2,000 users × 150 rows,
 * against 93–116 before (the runs also carried other changes; not separated).
 */
export function loopTurns(stretchMs = STRETCH_MS): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < stretchMs) return;
    await loopTurn();
    since = performance.now();
  };
}
