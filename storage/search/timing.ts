// Where a search's time goes, for diagnosis only: with SVC_SEARCH_TIMING=1 the server prints one line per
// search to stderr, `search-timing {"wait":…,"text":…,…}` (milliseconds per phase), which eval:locomo
// collects from the server's log. Off by default, and then every call here is a no-op.
const ON = process.env.SVC_SEARCH_TIMING === '1';

export const timingOn = (): boolean => ON;

/** Phases of one search, each measured from its own start; phases run concurrently overlap. */
export class SearchTiming {
  readonly #t0 = performance.now();
  readonly #phases: Record<string, number> = {};

  /** Times `work` as phase `name` (adds when a phase repeats). */
  async time<T>(name: string, work: Promise<T> | (() => Promise<T>)): Promise<T> {
    if (!ON) return typeof work === 'function' ? work() : work;
    const t = performance.now();
    try {
      return await (typeof work === 'function' ? work() : work);
    } finally {
      this.add(name, performance.now() - t);
    }
  }

  /** Records `ms` for phase `name`. */
  add(name: string, ms: number): void {
    if (ON) this.#phases[name] = (this.#phases[name] ?? 0) + ms;
  }

  /** Milliseconds since this timing began. */
  since(): number {
    return performance.now() - this.#t0;
  }

  /** Prints the line, with `total` the time since this timing began. */
  report(extra: Record<string, number> = {}): void {
    if (!ON) return;
    const line = { ...this.#phases, ...extra, total: this.since() };
    const rounded = Object.fromEntries(Object.entries(line).map(([k, v]) => [k, Number(v.toFixed(2))]));
    // Written once the answer is on its way: stderr into a pipe is a synchronous write on Linux (~0.8 ms
    // a line measured on a loaded machine), which the search would otherwise wait for.
    setImmediate(() => process.stderr.write(`search-timing ${JSON.stringify(rounded)}\n`));
  }
}

/**
 * The catch-up wait of the search about to run: the handler waits for the index before the search
 * begins, so the wait is handed over here. Exact when searches run one at a time (as in eval:locomo).
 */
let lastWait = 0;
export function noteWait(ms: number): void {
  if (ON) lastWait = ms;
}
export function takeWait(): number {
  const w = lastWait;
  lastWait = 0;
  return w;
}
