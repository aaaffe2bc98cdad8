// The rows one commit writes, as the ledger hands them to the graph store and to whatever follows its
// commits (the read models, the search index, placement); and the key of a tenant's id or space.
import type { BatchRow, Declaration, EdgeRecord, Invalidation, NodeVersion, SpaceRow, Verdict } from './types.ts';

export const IDENT_SEP = '\u001f';
export const identKey = (tenant: string, id: string): string => `${tenant}${IDENT_SEP}${id}`;

export interface CommitGroup {
  batches: BatchRow[];
  nodes: NodeVersion[];
  edges: EdgeRecord[];
  declarations: Declaration[];
  verdicts: Verdict[];
  invalidations: Invalidation[];
  /** First-writer rows of the spaces this group is the first to write. */
  spaces: SpaceRow[];
  /**
   * The spaces each invalidation is held by besides its own (those holding another version of its node),
   * and older invalidations newly held by a space a version of their node is written to. Node and edge
   * rows are held by their own space, derived here.
   */
  invalidationSpaces: { space: string; row: Invalidation }[];
  /**
   * Seqs of node rows written here whose id no row of the tenant held before their write: nothing stored
   * links to them (an edge needs both ends to exist), so only their own write's edges can. The search index
   * words such a node without reading the store (a hint: absent means unknown, never "linked").
   */
  firstVersions?: Set<number>;
}

/** A tenant's rows as loaded from the store: the same shape as a commit's. */
export type LoadedLedger = CommitGroup;

export const emptyGroup = (): CommitGroup => ({
  batches: [],
  nodes: [],
  edges: [],
  declarations: [],
  verdicts: [],
  invalidations: [],
  spaces: [],
  invalidationSpaces: [],
});

/**
 * Each (tenant, id, space) a group's rows put an id in a space by: every node version's id, and both ends
 * of every edge (the index by id, the ring of recent commits and the ids known here all follow this rule).
 */
export function* idPlacements(
  group: Readonly<Pick<CommitGroup, 'nodes' | 'edges'>>,
): Generator<[tenant: string, id: string, space: string]> {
  for (const n of group.nodes) yield [n.tenant, n.id, n.space];
  for (const e of group.edges) {
    yield [e.tenant, e.source_id, e.space];
    yield [e.tenant, e.target_id, e.space];
  }
}
