// What a search without a space reads of the whole tenant besides the rows of its hits: every
// invalidation (the ids left out, and each id's own), every SUPERSEDES edge (the superseded ids left out
// by current_only, and each block's successors), the entity versions (the names a query may mention) and
// the latest knowledge instant of a block. Read from the store once per tenant (a scan of the columns,
// a small share of the rows decoded) and kept exact by every commit, as a view is, so a search across
// spaces never loads the tenant's view for them.
import type { CommitGroup } from '../commit-group.ts';
import type { EdgeRecord, Invalidation, NodeVersion } from '../types.ts';
import { push } from './tenant-view.ts';

/** What the store gives to start a tenant's lists: its rows of each kind in commit order. */
export interface TenantListRows {
  entities: NodeVersion[];
  supersedes: EdgeRecord[];
  invalidations: Invalidation[];
  latestBlockKnownAt: number;
}

const NONE: readonly never[] = Object.freeze([]);

export class TenantLists {
  readonly #entities: NodeVersion[] = [];
  readonly #supersedes: EdgeRecord[] = [];
  readonly #superseding = new Map<string, EdgeRecord[]>();
  readonly #invalidations: Invalidation[] = [];
  readonly #invalidationsOf = new Map<string, Invalidation[]>();
  #latestBlockKnownAt: number;
  /** The entity versions read as a view's node list, for the per-view name index of entity-reach.ts. */
  readonly entityRows = { nodesIn: (): readonly NodeVersion[] => this.#entities };

  constructor(
    readonly tenant: string,
    rows: TenantListRows,
  ) {
    this.#latestBlockKnownAt = rows.latestBlockKnownAt;
    for (const n of rows.entities) this.#entities.push(n);
    for (const e of rows.supersedes) this.#addSupersedes(e);
    for (const i of rows.invalidations) this.#addInvalidation(i);
  }

  /** A committed group's rows of this tenant, in the order the tenant's view takes them (ResidentViews.apply). */
  apply(group: Readonly<CommitGroup>): void {
    for (const n of group.nodes) {
      if (n.tenant !== this.tenant) continue;
      if (n.known_at > this.#latestBlockKnownAt) this.#latestBlockKnownAt = n.known_at;
      if (n.kind === 'entity') this.#entities.push(n);
    }
    for (const e of group.edges) {
      if (e.tenant !== this.tenant) continue;
      if (e.known_at > this.#latestBlockKnownAt) this.#latestBlockKnownAt = e.known_at;
      if (e.edge_type === 'SUPERSEDES') this.#addSupersedes(e);
    }
    for (const i of group.invalidations) if (i.tenant === this.tenant) this.#addInvalidation(i);
  }

  #addSupersedes(e: EdgeRecord): void {
    this.#supersedes.push(e);
    push(this.#superseding, e.target_id, e);
  }

  #addInvalidation(i: Invalidation): void {
    this.#invalidations.push(i);
    push(this.#invalidationsOf, i.target_id, i);
  }

  latestBlockKnownAt(): number {
    return this.#latestBlockKnownAt;
  }

  invalidations(): readonly Invalidation[] {
    return this.#invalidations;
  }

  invalidationsOf(id: string): readonly Invalidation[] {
    return this.#invalidationsOf.get(id) ?? NONE;
  }

  supersedesEdges(): readonly EdgeRecord[] {
    return this.#supersedes;
  }

  supersedingEdges(id: string): readonly EdgeRecord[] {
    return this.#superseding.get(id) ?? NONE;
  }

  /** Rows held, to weigh the lists against the read models' budget. */
  size(): number {
    return this.#entities.length + this.#supersedes.length + this.#invalidations.length;
  }
}
