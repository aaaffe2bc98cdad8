// The evidence chain of one block: the shared walk over causal, argumentative and temporal edges (never
// general ones) in both directions, with each reached node named by the role its edge gives it.
import type { TenantView } from './tenant-view.ts';
import type { Micros } from '../time.ts';
import { EDGE_FAMILIES, type EdgeRecord, type EdgeType, type NodeVersion } from '../types.ts';
import { inForceAt, knownAt } from '../visibility.ts';
import { visibleVersion, walk, type Reached, type WalkOptions } from './traverse.ts';

export type Role =
  | 'subject'
  | 'cause'
  | 'effect'
  | 'contributing_cause'
  | 'contributed_effect'
  | 'trigger'
  | 'triggered'
  | 'preventer'
  | 'prevented'
  | 'support'
  | 'supported'
  | 'contradiction'
  | 'contradicted'
  | 'qualification'
  | 'qualified'
  | 'successor'
  | 'predecessor'
  | 'restatement'
  | 'restated'
  | 'concurrent';

export const WHY_TYPES: ReadonlySet<EdgeType> = new Set<EdgeType>([
  ...EDGE_FAMILIES.causal,
  ...EDGE_FAMILIES.argumentative,
  ...EDGE_FAMILIES.temporal,
]);

/**
 * Role of the node reached over an edge of this type: `[out, in]`. `out` means the edge points from the
 * node walked from to the reached one (A -CAUSES-> B walked from A: B is an effect); `in` means it points
 * from the reached node back (walked from B: A is a cause). SUPERSEDES points new -> old, RESTATES from
 * the restatement to what it restates.
 */
const ROLES: Record<Exclude<EdgeType, 'DEPENDS_ON' | 'DERIVED_FROM' | 'MENTIONS'>, readonly [Role, Role]> = {
  CAUSES: ['effect', 'cause'],
  CONTRIBUTING_FACTOR: ['contributed_effect', 'contributing_cause'],
  TRIGGERS: ['triggered', 'trigger'],
  PREVENTS: ['prevented', 'preventer'],
  SUPPORTS: ['supported', 'support'],
  CONTRADICTS: ['contradicted', 'contradiction'],
  QUALIFIES: ['qualified', 'qualification'],
  SUPERSEDES: ['predecessor', 'successor'],
  RESTATES: ['restated', 'restatement'],
  CONCURRENT_SIGNAL: ['concurrent', 'concurrent'],
};

export function roleOf(type: EdgeType, direction: 'out' | 'in'): Role {
  const pair = (ROLES as Partial<Record<EdgeType, readonly [Role, Role]>>)[type];
  if (!pair) throw new Error(`edge type ${type} is not walked by why`);
  return direction === 'out' ? pair[0] : pair[1];
}

export interface ChainLink {
  node: NodeVersion;
  depth: number;
  path: string[];
  via: EdgeType | null;
  role: Role;
  /** The edge that reached the node (null for the subject). */
  edge: EdgeRecord | null;
}

export interface WhyQuery {
  asOf: Micros;
  validAt?: Micros | undefined;
  depth: number;
  space?: string | undefined;
  /** Nodes invalidated as of the read: never walked, and an invalidated subject has no chain. */
  blocked?: ((id: string) => boolean) | undefined;
}

export interface WhyResult {
  chain: ChainLink[];
  reason?: 'not_yet' | 'absent' | 'invalidated';
  masked: { node: number; edge: number };
}

const options = (q: WhyQuery, asOf: Micros): WalkOptions => ({
  asOf,
  validAt: q.validAt,
  depth: q.depth,
  types: WHY_TYPES,
  space: q.space,
  blocked: q.blocked,
});

export function evidenceChain(view: TenantView, id: string, q: WhyQuery): WhyResult {
  const reached = walk(view, [id], options(q, q.asOf));
  const chain: ChainLink[] = [];
  for (const r of reached) {
    const node = visibleVersion(view, r.id, q.asOf, q.validAt, q.space);
    if (!node) continue; // the walk only enters visible nodes; kept for the type checker
    chain.push({
      node,
      depth: r.depth,
      path: r.path,
      edge: r.edge,
      via: r.edge?.edge_type ?? null,
      role: r.edge && r.direction ? roleOf(r.edge.edge_type, r.direction) : 'subject',
    });
  }
  // By assertion time; equal times by depth then id, so the order depends on the data, not on the walk.
  chain.sort(
    (a, b) => a.node.asserted_at - b.node.asserted_at || a.depth - b.depth || (a.node.id < b.node.id ? -1 : a.node.id > b.node.id ? 1 : 0),
  );
  const masked = maskedInReach(view, id, q, reached);
  const result: WhyResult = { chain, masked };
  if (chain.length === 0) result.reason = q.blocked?.(id) ? 'invalidated' : emptyReason(view, id, q);
  return result;
}

/**
 * An empty chain: `not_yet` when a version of the block that the read would show (in scope, in force at
 * valid_at) exists but was learned after as_of; `absent` when there is none (no such block, or none in
 * force at that content instant).
 */
function emptyReason(view: TenantView, id: string, q: WhyQuery): 'not_yet' | 'absent' {
  const wanted = view.versionsOf(id).filter((v) => (q.space === undefined || v.space === q.space) && inForceAt(v, q.validAt));
  return wanted.length > 0 ? 'not_yet' : 'absent';
}

/**
 * What as_of hid from this chain: the nodes the same walk over everything committed would show that this
 * one does not, and the followed edges within that reach (incident to a node short of the depth limit)
 * that were learned after as_of.
 */
function maskedInReach(view: TenantView, id: string, q: WhyQuery, shown: readonly Reached[]): { node: number; edge: number } {
  if (q.asOf >= view.latestBlockKnownAt()) return { node: 0, edge: 0 }; // nothing in the tenant is hidden: no second walk
  const full = walk(view, [id], options(q, Number.POSITIVE_INFINITY));
  const shownIds = new Set(shown.map((r) => r.id));
  let node = 0;
  for (const r of full) if (!shownIds.has(r.id)) node++;
  const hidden = new Set<EdgeRecord>();
  for (const r of full) {
    if (r.depth >= q.depth) continue;
    for (const list of [view.edgesFrom(r.id), view.edgesTo(r.id)]) {
      for (const e of list) {
        if (!WHY_TYPES.has(e.edge_type) || (q.space !== undefined && e.space !== q.space)) continue;
        if (inForceAt(e, q.validAt) && !knownAt(e, q.asOf)) hidden.add(e);
      }
    }
  }
  return { node, edge: hidden.size };
}
