// A map bounded to `max` entries that forgets the least recently used first. The ledger keeps several
// lookups (ids' spaces, spaces' first writers, fact keys' spaces, tenants' lists) this way: one place for
// the eviction rule, so a read that refreshes an entry and a write that adds one agree on what goes.
export class LruMap<K, V> {
  readonly #entries = new Map<K, V>();

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`LruMap: max must be a positive integer, got ${max}`);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The value, marked as used now. */
  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  /** The value without marking it used (for updates that should not keep an entry alive). */
  peek(key: K): V | undefined {
    return this.#entries.get(key);
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  /** Adds or replaces the value as the most recently used, forgetting the least recently used past `max`. */
  set(key: K, value: V): this {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.max) this.#entries.delete(this.#entries.keys().next().value as K);
    return this;
  }

  delete(key: K): boolean {
    return this.#entries.delete(key);
  }

  /** Forgets every entry the predicate picks (e.g. a dropped tenant's). */
  deleteWhere(pick: (key: K, value: V) => boolean): void {
    for (const [key, value] of this.#entries) if (pick(key, value)) this.#entries.delete(key);
  }

  values(): IterableIterator<V> {
    return this.#entries.values();
  }
}
