// Which spaces the latest commits brought each id into. A write whose tenant is not resident looks up the
// spaces holding the ids it names (outside the writer queue), then is planned against their views inside
// it; a commit landing in between may have put one of those ids in another space. The plan asks here
// whether any commit after its lookup did, and is looked up again if so (StaleLookup). The ring is bounded
// by the pairs it holds: a lookup older than what it still reaches counts as stale. A resolve without a
// space asks the same of the spaces holding a fact key's rows (a node version carrying it).
import type { CommitGroup } from '../commit-group.ts';
import { identKey, idPlacements } from '../commit-group.ts';

/** Thrown by a plan whose lookup of spaces is outdated: the caller looks them up again. */
export class StaleLookup extends Error {
  constructor() {
    super('the spaces holding the ids of this write changed since they were looked up');
  }
}

/** (id, space) pairs kept across the latest commits before the oldest commit is forgotten. */
export const RECENT_PAIRS = 100_000;

interface Entry {
  n: number;
  /** identKey(tenant, id) to the spaces the commit wrote it in; `dropped` for a tenant deleted whole. */
  held: Map<string, Set<string>>;
  /** identKey(tenant, fact key) to the spaces the commit wrote a node version carrying it in. */
  facts: Map<string, Set<string>>;
  dropped: string | null;
  pairs: number;
}

export class RecentHolds {
  #count = 0;
  #pairs = 0;
  readonly #ring: Entry[] = [];

  constructor(private readonly maxPairs = RECENT_PAIRS) {}

  /** The number of the latest commit recorded: a lookup started after it sees that commit's rows. */
  get count(): number {
    return this.#count;
  }

  /** Records a committed group's (id, space) pairs: every node's id, every edge's two ends. */
  commit(group: Readonly<Pick<CommitGroup, 'nodes' | 'edges'>>): void {
    const held = new Map<string, Set<string>>();
    const facts = new Map<string, Set<string>>();
    let pairs = 0;
    const add = (map: Map<string, Set<string>>, key: string, space: string): void => {
      let set = map.get(key);
      if (!set) map.set(key, (set = new Set()));
      if (!set.has(space)) pairs++;
      set.add(space);
    };
    for (const [tenant, id, space] of idPlacements(group)) add(held, identKey(tenant, id), space);
    for (const n of group.nodes) if (n.fact_key !== null) add(facts, identKey(n.tenant, n.fact_key), n.space);
    this.#push({ n: ++this.#count, held, facts, dropped: null, pairs });
  }

  /** Every lookup of the tenant made before now is stale (its rows were deleted). */
  drop(tenant: string): void {
    this.#push({ n: ++this.#count, held: new Map(), facts: new Map(), dropped: tenant, pairs: 0 });
  }

  #push(entry: Entry): void {
    this.#ring.push(entry);
    this.#pairs += entry.pairs;
    // The newest entry is kept whatever its size.
    while (this.#ring.length > 1 && this.#pairs > this.maxPairs) this.#pairs -= this.#ring.shift()!.pairs;
  }

  /**
   * The spaces commits after number `since` put any of the tenant's `ids` in, or null when that cannot be
   * told: the tenant was deleted since, or the ring no longer reaches back to `since`.
   */
  spacesSince(since: number, tenant: string, ids: readonly string[]): Set<string> | null {
    return this.#since(since, tenant, ids, 'held');
  }

  /** The same for the spaces commits after `since` wrote a node version carrying one of `factKeys` in. */
  factSpacesSince(since: number, tenant: string, factKeys: readonly string[]): Set<string> | null {
    return this.#since(since, tenant, factKeys, 'facts');
  }

  #since(since: number, tenant: string, keys: readonly string[], map: 'held' | 'facts'): Set<string> | null {
    const out = new Set<string>();
    if (since === this.#count) return out;
    const oldest = this.#ring[0];
    if (!oldest || oldest.n > since + 1) return null;
    for (let i = this.#ring.length - 1; i >= 0 && this.#ring[i]!.n > since; i--) {
      const entry = this.#ring[i]!;
      if (entry.dropped === tenant) return null;
      for (const key of keys) for (const space of entry[map].get(identKey(tenant, key)) ?? []) out.add(space);
    }
    return out;
  }
}
