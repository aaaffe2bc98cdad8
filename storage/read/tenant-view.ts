// A tenant's rows held in memory, in commit order: the read model the ledger answers from. It is derived
// from the graph store (rebuilt on start-up, appended to after each commit) and never written otherwise.
// Its containers are private: reads go through the accessors below, so an index added for one read (by
// space, by fact key, by SUPERSEDES target) is kept here, in one place, as rows arrive.
import type { Micros } from '../time.ts';
import type { BatchRow, Declaration, EdgeRecord, Invalidation, NodeVersion, Verdict } from '../types.ts';

export const edgeIdentity = (e: Pick<EdgeRecord, 'source_id' | 'target_id' | 'edge_type' | 'asserted_at'>): string =>
  `${e.source_id}\u001f${e.target_id}\u001f${e.edge_type}\u001f${e.asserted_at}`;

const NONE: readonly never[] = Object.freeze([]);

export class TenantView {
  readonly #nodes: NodeVersion[] = [];
  /** The same rows per space, in commit order: a read narrowed to a space scans only its own rows. */
  readonly #nodesBySpace = new Map<string, NodeVersion[]>();
  readonly #versions = new Map<string, NodeVersion[]>();
  readonly #byFactKey = new Map<string, NodeVersion[]>();
  readonly #edges: EdgeRecord[] = [];
  readonly #edgesBySpace = new Map<string, EdgeRecord[]>();
  readonly #edgesOut = new Map<string, EdgeRecord[]>();
  readonly #edgesIn = new Map<string, EdgeRecord[]>();
  /** SUPERSEDES edges by the node they point at (the superseded one), and all of them in commit order. */
  readonly #superseding = new Map<string, EdgeRecord[]>();
  readonly #supersedes: EdgeRecord[] = [];
  readonly #edgesByIdentity = new Map<string, EdgeRecord>();
  readonly #edgeHashes = new Set<string>();
  readonly #batches = new Map<string, BatchRow>();
  readonly #declarations: Declaration[] = [];
  readonly #verdicts: Verdict[] = [];
  readonly #verdictHashes = new Set<string>();
  readonly #invalidations: Invalidation[] = [];
  readonly #invalidationsOf = new Map<string, Invalidation[]>();
  readonly #invalidationsBySpace = new Map<string, Invalidation[]>();

  // Running maxima of known_at. Backfill makes known_at non-monotonic in commit order, so they are kept
  // as rows arrive; a read as of one of them or later hides nothing and can skip its masked counts.
  #latestBlockKnownAt = Number.NEGATIVE_INFINITY;
  #latestVerdictKnownAt = Number.NEGATIVE_INFINITY;
  #latestInvalidationKnownAt = Number.NEGATIVE_INFINITY;

  /** `space`: the view holds one space's rows (and the tenant-wide rows a read of it needs), not the tenant's. */
  constructor(
    readonly tenant: string,
    readonly space?: string,
  ) {}

  /**
   * Whether the view may lack rows of the ids it is asked about (the views of some spaces, read in rounds
   * until they hold every id read): what is derived from it then is not kept past the read.
   */
  partial(): boolean {
    return false;
  }

  /** The view holding the rows of `space` a read of this one sees: this one, unless it joins several. */
  spaceViewOf(_space: string): TenantView | undefined {
    return this;
  }

  /** The rows the names of entities are taken from (every node row; the entity rows suffice). */
  entitySource(): { nodesIn(): readonly NodeVersion[] } {
    return this;
  }

  /** The latest knowledge instant of any node or edge. */
  latestBlockKnownAt(): Micros {
    return this.#latestBlockKnownAt;
  }

  /** The latest knowledge instant of any row: node, edge, verdict or invalidation. */
  latestKnownAt(): Micros {
    return Math.max(this.#latestBlockKnownAt, this.#latestVerdictKnownAt, this.#latestInvalidationKnownAt);
  }

  /** The latest knowledge instant of an invalidation: a read before it sees none. */
  latestInvalidationKnownAt(): Micros {
    return this.#latestInvalidationKnownAt;
  }

  addNode(row: NodeVersion): void {
    this.#nodes.push(row);
    if (row.known_at > this.#latestBlockKnownAt) this.#latestBlockKnownAt = row.known_at;
    push(this.#nodesBySpace, row.space, row);
    push(this.#versions, row.id, row);
    if (row.fact_key !== null) push(this.#byFactKey, row.fact_key, row);
  }

  addEdge(row: EdgeRecord): void {
    this.#edges.push(row);
    if (row.known_at > this.#latestBlockKnownAt) this.#latestBlockKnownAt = row.known_at;
    push(this.#edgesBySpace, row.space, row);
    push(this.#edgesOut, row.source_id, row);
    push(this.#edgesIn, row.target_id, row);
    if (row.edge_type === 'SUPERSEDES') {
      push(this.#superseding, row.target_id, row);
      this.#supersedes.push(row);
    }
    this.#edgesByIdentity.set(edgeIdentity(row), row);
    this.#edgeHashes.add(row.hash);
  }

  addBatch(row: BatchRow): void {
    this.#batches.set(row.id, row);
  }

  addDeclaration(row: Declaration): void {
    this.#declarations.push(row);
  }

  addVerdict(row: Verdict): void {
    this.#verdicts.push(row);
    if (row.known_at > this.#latestVerdictKnownAt) this.#latestVerdictKnownAt = row.known_at;
    this.#verdictHashes.add(row.hash);
  }

  addInvalidation(row: Invalidation): void {
    this.#invalidations.push(row);
    if (row.known_at > this.#latestInvalidationKnownAt) this.#latestInvalidationKnownAt = row.known_at;
    push(this.#invalidationsOf, row.target_id, row);
    push(this.#invalidationsBySpace, row.space, row);
  }

  /** Node rows of one space, or of the whole tenant when `space` is undefined, in commit order. */
  nodesIn(space?: string): readonly NodeVersion[] {
    return space === undefined ? this.#nodes : (this.#nodesBySpace.get(space) ?? NONE);
  }

  edgesOfSpace(space?: string): readonly EdgeRecord[] {
    return space === undefined ? this.#edges : (this.#edgesBySpace.get(space) ?? NONE);
  }

  versionsOf(id: string): readonly NodeVersion[] {
    return this.#versions.get(id) ?? NONE;
  }

  /** Edges whose source is `id`, in commit order. */
  edgesFrom(id: string): readonly EdgeRecord[] {
    return this.#edgesOut.get(id) ?? NONE;
  }

  /** Edges whose target is `id`, in commit order. */
  edgesTo(id: string): readonly EdgeRecord[] {
    return this.#edgesIn.get(id) ?? NONE;
  }

  /** SUPERSEDES edges pointing at `id` (from the nodes that replace it), whenever learned. */
  supersedingEdges(id: string): readonly EdgeRecord[] {
    return this.#superseding.get(id) ?? NONE;
  }

  /** Every SUPERSEDES edge, whenever learned, in commit order. */
  supersedesEdges(): readonly EdgeRecord[] {
    return this.#supersedes;
  }

  edgeByIdentity(key: string): EdgeRecord | undefined {
    return this.#edgesByIdentity.get(key);
  }

  hasEdgeHash(hash: string): boolean {
    return this.#edgeHashes.has(hash);
  }

  /** Every node version carrying `factKey`, whenever learned, in commit order. */
  factRows(factKey: string): readonly NodeVersion[] {
    return this.#byFactKey.get(factKey) ?? NONE;
  }

  batch(id: string): BatchRow | undefined {
    return this.#batches.get(id);
  }

  declarations(): readonly Declaration[] {
    return this.#declarations;
  }

  verdicts(): readonly Verdict[] {
    return this.#verdicts;
  }

  hasVerdictHash(hash: string): boolean {
    return this.#verdictHashes.has(hash);
  }

  invalidations(): readonly Invalidation[] {
    return this.#invalidations;
  }

  /** Invalidations of node `id`, whenever learned, in commit order. */
  invalidationsOf(id: string): readonly Invalidation[] {
    return this.#invalidationsOf.get(id) ?? NONE;
  }

  /**
   * What the view of one space holds of this tenant's rows, cut from them without reading the store: the
   * space's nodes and edges, and the invalidations it holds, which are those recorded in it and those of
   * every id its rows name (the rule `Overlay.spacesHolding` applies when they are written), in commit
   * order.
   */
  rowsOfSpace(space: string): { nodes: NodeVersion[]; edges: EdgeRecord[]; invalidations: Invalidation[] } {
    const nodes = [...this.nodesIn(space)];
    const edges = [...this.edgesOfSpace(space)];
    const held = new Set<Invalidation>(this.#invalidationsBySpace.get(space) ?? NONE);
    const named = new Set<string>();
    for (const n of nodes) named.add(n.id);
    for (const e of edges) named.add(e.source_id).add(e.target_id);
    for (const id of named) for (const i of this.invalidationsOf(id)) held.add(i);
    return { nodes, edges, invalidations: [...held].sort((a, b) => a.seq - b.seq) };
  }

  /** Spaces holding any node or edge row. */
  spaceNames(): string[] {
    return [...new Set([...this.#nodesBySpace.keys(), ...this.#edgesBySpace.keys()])];
  }

  /** Rows held, for check_install and benchmarks. */
  size(): { nodes: number; edges: number; verdicts: number; invalidations: number } {
    return {
      nodes: this.#nodes.length,
      edges: this.#edges.length,
      verdicts: this.#verdicts.length,
      invalidations: this.#invalidations.length,
    };
  }
}

/** Appends `value` to the list `map` holds under `key`, starting the list when there is none. */
export function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
