/**
 * Turns of reads run one after another, as the graph store's reader runs them, which a test can hold:
 * after `hold()`, every turn waits until the release it returned runs.
 */
export function heldTurns(): { turn: (fn: () => Promise<void>) => Promise<void>; hold: () => () => void } {
  let chain: Promise<unknown> = Promise.resolve();
  let gate: Promise<void> = Promise.resolve();
  return {
    turn: (fn) => {
      const run = chain.then(() => gate).then(fn);
      chain = run.catch(() => undefined);
      return run;
    },
    hold: () => {
      let release!: () => void;
      gate = new Promise<void>((r) => (release = r));
      return () => {
        release();
        gate = Promise.resolve();
      };
    },
  };
}
