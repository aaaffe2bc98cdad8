// Work waiting for the copy files' thread, in order per key, with searches served first. A search needs
// only its own file's earlier writes, so it is done as soon as they are, ahead of other files' appends.
// Without this a search waited behind every append asked before it: the index hands its rows over in
// batches (up to ~180 spaces' appends at once at 2,000 users × 150 rows).

interface Waiting<T> {
  item: T;
  urgent: boolean;
}

export class KeyedQueue<T extends { key: string }> {
  /** Each key's items, in the order they were pushed. */
  readonly #byKey = new Map<string, Waiting<T>[]>();
  /** The key of each urgent item waiting, in the order they were pushed. */
  readonly #urgent: string[] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  push(item: T, urgent = false): void {
    const list = this.#byKey.get(item.key);
    if (list) list.push({ item, urgent });
    else this.#byKey.set(item.key, [{ item, urgent }]);
    if (urgent) this.#urgent.push(item.key);
    this.#size++;
  }

  /**
   * The next item to do: while an urgent one waits, the items of its key up to it; else the oldest key's
   * next item (keys in the order their items began waiting).
   */
  next(): T | undefined {
    const key = this.#urgent[0] ?? this.#byKey.keys().next().value;
    if (key === undefined) return undefined;
    const list = this.#byKey.get(key)!;
    const first = list.shift()!;
    if (list.length === 0) this.#byKey.delete(key);
    if (first.urgent) this.#urgent.shift();
    this.#size--;
    return first.item;
  }

  /** Whether an urgent item waits. */
  get urgent(): boolean {
    return this.#urgent.length > 0;
  }
}
