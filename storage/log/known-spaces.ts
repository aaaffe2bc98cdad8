// The spaces holding ids a write looked up or wrote lately, kept exact: every commit passes through the
// ledger, which adds each (id, space) pair it commits to the ids held here, and a dropped tenant's ids
// are forgotten. A write naming an id held here needs no lookup in the store; the search index, asking
// for the ids a write just committed, finds them here too. Least recently used first, at most `max`.
import { identKey, idPlacements, type CommitGroup } from '../commit-group.ts';
import { LruMap } from '../lru-map.ts';

export const KNOWN_IDS = 100_000;

export class KnownSpaces {
  readonly #spaces: LruMap<string, Set<string>>;

  constructor(max = KNOWN_IDS) {
    this.#spaces = new LruMap(max);
  }

  /** The spaces holding the tenant's id, if known here (a copy). */
  get(tenant: string, id: string): Set<string> | undefined {
    const key = identKey(tenant, id);
    const spaces = this.#spaces.get(key);
    return spaces && new Set(spaces);
  }

  /** What a lookup in the store answered, when no commit landed while it ran (so it is current). */
  remember(tenant: string, id: string, spaces: ReadonlySet<string>): void {
    this.#spaces.set(identKey(tenant, id), new Set(spaces));
  }

  /** A committed group's pairs, added to the ids held here. */
  commit(group: Readonly<Pick<CommitGroup, 'nodes' | 'edges'>>): void {
    if (this.#spaces.size === 0) return;
    for (const [tenant, id, space] of idPlacements(group)) this.#spaces.peek(identKey(tenant, id))?.add(space);
  }

  drop(tenant: string): void {
    const prefix = identKey(tenant, '');
    this.#spaces.deleteWhere((key) => key.startsWith(prefix));
  }
}
