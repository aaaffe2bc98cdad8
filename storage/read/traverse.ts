// Breadth-first walks over the edges known at as_of, in both directions. `why` walks from one subject;
// search expansion walks from its direct hits. Each node is reached once, at its shortest depth, through
// the first edge (in commit order) that reaches it there; cycles end because a node is never re-entered.
import type { TenantView } from './tenant-view.ts';
import type { Micros } from '../time.ts';
import type { EdgeRecord, EdgeType, NodeVersion } from '../types.ts';
import { inForceAt, knownAt } from '../visibility.ts';

export interface WalkOptions {
  asOf: Micros;
  validAt?: Micros | undefined;
  /** Hops from the start nodes. */
  depth: number;
  /** Edge types followed. */
  types: ReadonlySet<EdgeType>;
  /** Confines the walk to nodes and edges of this space. */
  space?: string | undefined;
  /** Nodes the walk never enters or passes through (invalidated as of the read). */
  blocked?: ((id: string) => boolean) | undefined;
}

export interface Reached {
  id: string;
  depth: number;
  /** Node ids from the start node to this one, both included. */
  path: string[];
  /** The edge that reached the node; null for a start node. */
  edge: EdgeRecord | null;
  /** `out`: the edge points from the previous node to this one; `in`: from this one to the previous. */
  direction: 'out' | 'in' | null;
}

/** The version of `id` a read at (asOf, validAt, space) shows, or null when none is visible. */
export function visibleVersion(view: TenantView, id: string, asOf: Micros, validAt?: Micros, space?: string): NodeVersion | null {
  let best: NodeVersion | null = null;
  for (const v of view.versionsOf(id)) {
    if (space !== undefined && v.space !== space) continue;
    if (!knownAt(v, asOf) || !inForceAt(v, validAt)) continue;
    if (best === null || v.valid_from > best.valid_from) best = v;
  }
  return best;
}

export function edgeVisible(e: EdgeRecord, opts: Pick<WalkOptions, 'asOf' | 'validAt' | 'space' | 'types'>): boolean {
  if (!opts.types.has(e.edge_type)) return false;
  if (opts.space !== undefined && e.space !== opts.space) return false;
  return knownAt(e, opts.asOf) && inForceAt(e, opts.validAt);
}

/**
 * Walks from `starts` (which are returned first, at depth 0, when visible). Start nodes that are not
 * visible are skipped: a walk never passes through a block the read could not show.
 */
export function walk(view: TenantView, starts: readonly string[], opts: WalkOptions): Reached[] {
  const reached = new Map<string, Reached>();
  let frontier: Reached[] = [];
  for (const id of starts) {
    if (reached.has(id) || opts.blocked?.(id) || !visibleVersion(view, id, opts.asOf, opts.validAt, opts.space)) continue;
    const r: Reached = { id, depth: 0, path: [id], edge: null, direction: null };
    reached.set(id, r);
    frontier.push(r);
  }
  for (let depth = 1; depth <= opts.depth && frontier.length > 0; depth++) {
    const next: Reached[] = [];
    for (const from of frontier) {
      const steps: [EdgeRecord, 'out' | 'in', string][] = [];
      for (const e of view.edgesFrom(from.id)) steps.push([e, 'out', e.target_id]);
      for (const e of view.edgesTo(from.id)) steps.push([e, 'in', e.source_id]);
      steps.sort((a, b) => a[0].seq - b[0].seq);
      for (const [edge, direction, to] of steps) {
        if (reached.has(to) || !edgeVisible(edge, opts) || opts.blocked?.(to)) continue;
        if (!visibleVersion(view, to, opts.asOf, opts.validAt, opts.space)) continue;
        const r: Reached = { id: to, depth, path: [...from.path, to], edge, direction };
        reached.set(to, r);
        next.push(r);
      }
    }
    frontier = next;
  }
  return [...reached.values()];
}
