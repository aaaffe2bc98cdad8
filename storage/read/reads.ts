// Reads over a tenant's view: which rows a list or a get shows at (as_of, valid_at), and what as_of hid.
import type { TenantView } from './tenant-view.ts';
import type { Micros } from '../time.ts';
import type { EdgeRecord, NodeVersion, Verdict } from '../types.ts';
import { inForceAt, knownAt } from '../visibility.ts';

export interface ListQuery {
  asOf: Micros;
  validAt?: Micros | undefined;
  space?: string | undefined;
  kind?: string | undefined;
  category?: string | undefined;
  limit: number;
  /** Rows after this per-tenant sequence number (tseq: the cursor, valid on any server holding the tenant). */
  afterSeq?: number | undefined;
  /** Why a node the other filters admit is left out (invalidated, or not current), or null to keep it. */
  leaveOut?: ((id: string) => LeftOut | null) | undefined;
}

/** Why a read leaves a node out besides its filters; `invalidated` rows are counted in the certificate. */
export type LeftOut = 'invalidated' | 'superseded';

export interface ListResult {
  items: NodeVersion[];
  nextSeq: number | null;
  masked: { node: number; edge: number; verdict: number };
  /** Versions left out because their node was invalidated as of the read. */
  invalidated: number;
}

/** Index of the first row with a tseq above `seq` (rows are in commit order, which within a tenant is tseq order). */
function firstAfter(rows: readonly NodeVersion[], seq: number): number {
  let lo = 0,
    hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((rows[mid]?.tseq ?? 0) <= seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function listNodes(view: TenantView, q: ListQuery): ListResult {
  const items: NodeVersion[] = [];
  let maskedNodes = 0;
  let invalidated = 0;
  let nextSeq: number | null = null;
  const after = q.afterSeq ?? 0;
  // A read as of the latest knowledge instant or later hides nothing: it skips the masked counts and
  // stops at the end of its page instead of scanning every row.
  const hidesNothing = q.asOf >= view.latestKnownAt();
  const rows = view.nodesIn(q.space);
  for (let i = hidesNothing ? firstAfter(rows, after) : 0; i < rows.length; i++) {
    const n = rows[i];
    if (n === undefined) break;
    if (q.space !== undefined && n.space !== q.space) continue;
    if (q.kind !== undefined && n.kind !== q.kind) continue;
    if (q.category !== undefined && n.category !== q.category) continue;
    if (!inForceAt(n, q.validAt)) continue;
    if (!knownAt(n, q.asOf)) {
      maskedNodes++;
      continue;
    }
    const out = q.leaveOut?.(n.id) ?? null;
    if (out !== null) {
      if (out === 'invalidated') invalidated++;
      continue;
    }
    if (n.tseq <= after || nextSeq !== null) continue;
    if (items.length === q.limit) {
      nextSeq = items[items.length - 1]?.tseq ?? null;
      if (hidesNothing) break;
      continue;
    }
    items.push(n);
  }
  const masked = hidesNothing
    ? { node: 0, edge: 0, verdict: 0 }
    : { node: maskedNodes, edge: maskedEdges(view, q), verdict: maskedVerdicts(view, q) };
  return { items, nextSeq, masked, invalidated };
}

function maskedEdges(view: TenantView, q: ListQuery): number {
  let n = 0;
  for (const e of view.edgesOfSpace(q.space)) {
    if (!inForceAt(e, q.validAt)) continue;
    if (!knownAt(e, q.asOf)) n++;
  }
  return n;
}

/**
 * A verdict is "on" a space when the node whose value it chose has a version there, or, when it chose
 * none, when it was asked in that space. The export scopes resolutions by the same rule.
 */
export function verdictOnSpace(view: TenantView, v: Verdict, space: string): boolean {
  if (v.target_id !== null) return view.versionsOf(v.target_id).some((x) => x.space === space);
  return v.space === space;
}

function maskedVerdicts(view: TenantView, q: ListQuery): number {
  let n = 0;
  for (const v of view.verdicts()) {
    if (v.known_at <= q.asOf) continue;
    if (q.space === undefined || verdictOnSpace(view, v, q.space)) n++;
  }
  return n;
}

export interface GetQuery {
  asOf: Micros;
  validAt?: Micros | undefined;
  space?: string | undefined;
}

export interface GetResult {
  item: NodeVersion | null;
  versions: NodeVersion[];
  edgesIn: EdgeRecord[];
  edgesOut: EdgeRecord[];
  reason?: 'not_yet' | 'absent' | 'invalidated';
  masked: { node: number; edge: number };
}

/** Edges touching `id` that a read at (asOf, validAt, space) shows, and the count as_of hid. */
export function visibleEdges(
  list: readonly EdgeRecord[] | undefined,
  q: GetQuery,
  otherEnd: (e: EdgeRecord) => string,
  view: TenantView,
): { shown: EdgeRecord[]; masked: number } {
  const shown: EdgeRecord[] = [];
  let masked = 0;
  for (const e of list ?? []) {
    if (q.space !== undefined && (e.space !== q.space || !view.versionsOf(otherEnd(e)).some((v) => v.space === q.space))) continue;
    if (!inForceAt(e, q.validAt)) continue;
    if (knownAt(e, q.asOf)) shown.push(e);
    else masked++;
  }
  return { shown, masked };
}

export function getNode(view: TenantView, id: string, q: GetQuery): GetResult {
  const all = view.versionsOf(id).filter((v) => q.space === undefined || v.space === q.space);
  const known = all.filter((v) => knownAt(v, q.asOf));
  const masked = { node: all.length - known.length, edge: 0 };
  if (known.length === 0) {
    return { item: null, versions: [], edgesIn: [], edgesOut: [], reason: all.length > 0 ? 'not_yet' : 'absent', masked };
  }
  const inForce = known.filter((v) => inForceAt(v, q.validAt));
  // Without valid_at the item is the version with the latest validity start; with it, the one in force.
  const item = inForce.reduce<NodeVersion | null>((best, v) => (best === null || v.valid_from > best.valid_from ? v : best), null);
  const outs = visibleEdges(view.edgesFrom(id), q, (e) => e.target_id, view);
  const ins = visibleEdges(view.edgesTo(id), q, (e) => e.source_id, view);
  masked.edge = outs.masked + ins.masked;
  return { item, versions: known, edgesIn: ins.shown, edgesOut: outs.shown, masked };
}
