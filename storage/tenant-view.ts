// A tenant's rows held in memory, in commit order: the read model the ledger answers from. It is derived
// from the graph store (rebuilt on start-up, appended to after each commit) and never written otherwise.
import type { Micros } from './time.ts';
import type { BatchRow, Declaration, EdgeRecord, NodeVersion, Verdict } from './types.ts';

export const edgeIdentity = (e: Pick<EdgeRecord, 'source_id' | 'target_id' | 'edge_type' | 'asserted_at'>): string =>
  `${e.source_id}\u001f${e.target_id}\u001f${e.edge_type}\u001f${e.asserted_at}`;

export class TenantView {
  readonly nodes: NodeVersion[] = [];
  /** The same rows per space, in commit order: a read narrowed to a space scans only its own rows. */
  readonly nodesBySpace = new Map<string, NodeVersion[]>();
  readonly versions = new Map<string, NodeVersion[]>();
  readonly edges: EdgeRecord[] = [];
  readonly edgesBySpace = new Map<string, EdgeRecord[]>();
  readonly edgesOut = new Map<string, EdgeRecord[]>();
  readonly edgesIn = new Map<string, EdgeRecord[]>();
  readonly edgesByIdentity = new Map<string, EdgeRecord>();
  readonly edgeHashes = new Set<string>();
  readonly batches = new Map<string, BatchRow>();
  readonly declarations: Declaration[] = [];
  readonly verdicts: Verdict[] = [];
  readonly verdictHashes = new Set<string>();
  /** Spaces written to, with the first instant each was written (the MCP door opens `svc:` spaces by it). */
  readonly spaces = new Map<string, number>();

  // Running maxima of known_at. Backfill makes known_at non-monotonic in commit order, so they are kept
  // as rows arrive; a read as of one of them or later hides nothing and can skip its masked counts.
  #latestBlockKnownAt = Number.NEGATIVE_INFINITY;
  #latestVerdictKnownAt = Number.NEGATIVE_INFINITY;

  constructor(readonly tenant: string) {}

  /** The latest knowledge instant of any node or edge. */
  latestBlockKnownAt(): Micros {
    return this.#latestBlockKnownAt;
  }

  /** The latest knowledge instant of any row: node, edge or verdict. */
  latestKnownAt(): Micros {
    return Math.max(this.#latestBlockKnownAt, this.#latestVerdictKnownAt);
  }

  addNode(row: NodeVersion): void {
    this.nodes.push(row);
    if (row.known_at > this.#latestBlockKnownAt) this.#latestBlockKnownAt = row.known_at;
    push(this.nodesBySpace, row.space, row);
    push(this.versions, row.id, row);
    if (!this.spaces.has(row.space)) this.spaces.set(row.space, row.captured_at);
  }

  addEdge(row: EdgeRecord): void {
    this.edges.push(row);
    if (row.known_at > this.#latestBlockKnownAt) this.#latestBlockKnownAt = row.known_at;
    push(this.edgesBySpace, row.space, row);
    push(this.edgesOut, row.source_id, row);
    push(this.edgesIn, row.target_id, row);
    this.edgesByIdentity.set(edgeIdentity(row), row);
    this.edgeHashes.add(row.hash);
    if (!this.spaces.has(row.space)) this.spaces.set(row.space, row.captured_at);
  }

  addBatch(row: BatchRow): void {
    this.batches.set(row.id, row);
  }

  addDeclaration(row: Declaration): void {
    this.declarations.push(row);
  }

  addVerdict(row: Verdict): void {
    this.verdicts.push(row);
    if (row.known_at > this.#latestVerdictKnownAt) this.#latestVerdictKnownAt = row.known_at;
    this.verdictHashes.add(row.hash);
  }

  /** Node rows of one space, or of the whole tenant when `space` is undefined. */
  nodesIn(space: string | undefined): readonly NodeVersion[] {
    return space === undefined ? this.nodes : (this.nodesBySpace.get(space) ?? []);
  }

  edgesOfSpace(space: string | undefined): readonly EdgeRecord[] {
    return space === undefined ? this.edges : (this.edgesBySpace.get(space) ?? []);
  }

  versionsOf(id: string): readonly NodeVersion[] {
    return this.versions.get(id) ?? [];
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
