// Plans a push: which rows go in which POST /v1/memories, under which backfill declaration. Pure, so the
// grouping rules are tested without a server.
import type { BundleEdge, BundleNode, Manifest } from '../storage/bundle/rows.ts';
import { formatInstant, parseInstant, type Micros } from '../storage/time.ts';

/**
 * `exact`: rows learned without a batch are grouped by space and knowledge instant, so each keeps its
 * known_at (SPEC "Backfill" 4: several real capture times need several requests). `day`: grouped by space
 * and UTC day, declared at the day's latest known_at (SPEC "Backfill" 6); earlier rows of a day then
 * become known at that later instant.
 */
export type Granularity = 'exact' | 'day';

export interface PushGroup {
  space: string;
  declared: Micros;
  reason: string;
}

export interface PushRequest {
  group: PushGroup;
  nodes: Record<string, unknown>[];
  edges: Record<string, unknown>[];
}

export interface PushPlan {
  requests: PushRequest[];
  /** Backfill batches of the plan (a batch split under the limits is still one batch here). */
  batches: number;
  total: number;
  skipped: number;
}

export interface PlanOptions {
  granularity: Granularity;
  maxRows: number;
  maxBytes: number;
  /** What the target already holds; absent: assume nothing. */
  holds?: { node(n: BundleNode): boolean; edge(e: BundleEdge): boolean; nodeId(id: string): boolean } | undefined;
}

interface Group extends PushGroup {
  order: number;
  nodes: BundleNode[];
  edges: BundleEdge[];
}

export function nodeWrite(n: BundleNode): Record<string, unknown> {
  const w: Record<string, unknown> = {
    id: n.id,
    kind: n.kind,
    statement: n.statement,
    category: n.category,
    payload: n.payload,
    asserted_at: n.asserted_at,
    valid_from: n.valid_from,
    valid_to: n.valid_to,
  };
  if (n.fact_key !== null && n.fact_key !== undefined) w.fact_key = n.fact_key;
  if (n.fact_value !== null && n.fact_value !== undefined) w.fact_value = n.fact_value;
  return w;
}

export function edgeWrite(e: BundleEdge): Record<string, unknown> {
  return {
    source_id: e.source_id,
    target_id: e.target_id,
    edge_type: e.edge_type,
    confidence: e.confidence,
    lag: e.lag,
    mechanism: e.mechanism,
    asserted_at: e.asserted_at,
    valid_from: e.valid_from,
    valid_to: e.valid_to,
  };
}

export function planPush(manifest: Manifest, nodes: readonly BundleNode[], edges: readonly BundleEdge[], opts: PlanOptions): PushPlan {
  const groups = new Map<string, Group>();
  let order = 0;
  const origin = `${manifest.source}, tenant ${manifest.namespace.tenant}`;
  const groupOf = (row: BundleNode | BundleEdge): Group => {
    const batch = row.attestation.batch;
    const known = parseInstant(row.known_at);
    let key: string, declared: Micros, reason: string;
    if (batch) {
      key = `b\u001f${batch.id}\u001f${row.space}`;
      declared = parseInstant(batch.declared_captured_at);
      reason = batch.reason;
    } else if (opts.granularity === 'exact') {
      key = `k\u001f${row.space}\u001f${known}`;
      declared = known;
      reason = `sync from ${origin}: rows learned at ${formatInstant(known)}`;
    } else {
      const day = row.known_at.slice(0, 10);
      key = `d\u001f${row.space}\u001f${day}`;
      declared = known;
      reason = `sync from ${origin}: rows learned on ${day}`;
    }
    let g = groups.get(key);
    if (!g) {
      g = { space: row.space, declared, reason, order: order++, nodes: [], edges: [] };
      groups.set(key, g);
    } else if (declared > g.declared) g.declared = declared;
    return g;
  };
  let skipped = 0;
  for (const n of nodes) {
    if (opts.holds?.node(n)) skipped++;
    else groupOf(n).nodes.push(n);
  }
  for (const e of edges) {
    if (opts.holds?.edge(e)) skipped++;
    else groupOf(e).edges.push(e);
  }
  const ordered = [...groups.values()].sort((a, b) => a.declared - b.declared || a.order - b.order);

  // Nodes before edges: an edge goes with its batch once both ends are in the target or sent before it;
  // otherwise after every batch's nodes, in a second request under the same declaration.
  const present = (id: string): boolean => sent.has(id) || (opts.holds?.nodeId(id) ?? false);
  const sent = new Set<string>();
  const requests: PushRequest[] = [];
  const deferred: { group: Group; edges: BundleEdge[] }[] = [];
  for (const g of ordered) {
    for (const n of g.nodes) sent.add(n.id);
    const now: BundleEdge[] = [],
      later: BundleEdge[] = [];
    for (const e of g.edges) (present(e.source_id) && present(e.target_id) ? now : later).push(e);
    chunk(g, g.nodes, now, opts, requests);
    if (later.length > 0) deferred.push({ group: g, edges: later });
  }
  for (const d of deferred) chunk(d.group, [], d.edges, opts, requests);
  return { requests, batches: ordered.length, total: requests.reduce((s, r) => s + r.nodes.length + r.edges.length, 0), skipped };
}

function chunk(g: Group, nodes: readonly BundleNode[], edges: readonly BundleEdge[], opts: PlanOptions, out: PushRequest[]): void {
  const group: PushGroup = { space: g.space, declared: g.declared, reason: g.reason };
  let cur: PushRequest = { group, nodes: [], edges: [] };
  let bytes = 0;
  const add = (list: 'nodes' | 'edges', row: Record<string, unknown>): void => {
    const size = JSON.stringify(row).length + 1;
    if (cur.nodes.length + cur.edges.length > 0 && (cur.nodes.length + cur.edges.length >= opts.maxRows || bytes + size > opts.maxBytes)) {
      out.push(cur);
      cur = { group, nodes: [], edges: [] };
      bytes = 0;
    }
    cur[list].push(row);
    bytes += size;
  };
  for (const n of nodes) add('nodes', nodeWrite(n));
  for (const e of edges) add('edges', edgeWrite(e));
  if (cur.nodes.length + cur.edges.length > 0) out.push(cur);
}
