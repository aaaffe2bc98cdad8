// What was dropped for room and is loaded again soon after: the sign that what is in use does not fit a
// memory budget. The read models (SVC_MEMORY_MB) and the search copies (SVC_SEARCH_SPACES_MB) watch theirs
// with it, and each says so at most once a window.

/** A load within this long of the same key's eviction counts as a reload. */
export const RELOAD_WINDOW_MS = 60_000;

export class ReloadWatch {
  /** When each key was last evicted, for as long as a load soon after would count as a reload. */
  readonly #evictedAt = new Map<string, number>();
  #saidAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly clock: () => number) {}

  evicted(key: string): void {
    this.#evictedAt.set(key, this.clock());
  }

  /**
   * A load of `key`: null when it is no reload; else how long after its eviction it came, and whether it is
   * the first reload of its window (the one to say).
   */
  loaded(key: string): { afterMs: number; say: boolean } | null {
    const now = this.clock();
    for (const [k, at] of this.#evictedAt) if (now - at > RELOAD_WINDOW_MS) this.#evictedAt.delete(k);
    const evicted = this.#evictedAt.get(key);
    if (evicted === undefined) return null;
    this.#evictedAt.delete(key);
    const say = now - this.#saidAt >= RELOAD_WINDOW_MS;
    if (say) this.#saidAt = now;
    return { afterMs: now - evicted, say };
  }
}
