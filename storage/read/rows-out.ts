// Rows as the API shows them: instants as six-digit UTC strings, JSON text parsed back into values.
import { formatInstant, formatNullableEnd, type Micros } from '../time.ts';
import type { Certificate, MaskedCounts } from './certificate.ts';
import type { EdgeRecord, Invalidation, NodeVersion } from '../types.ts';

export interface NodeRow {
  id: string;
  kind: string;
  tenant: string;
  space: string;
  statement: string | null;
  category: string | null;
  payload: Record<string, unknown>;
  asserted_at: string;
  captured_at: string;
  known_at: string;
  valid: { from: string; to: string | null };
  fact_key?: string;
  fact_value?: unknown;
  /** Ids of the nodes whose SUPERSEDES edge, visible to the read, points at this one; sorted. */
  superseded_by: string[];
  /** Present only on reads with include_invalidated, for a node invalidated as of the read. */
  invalidated?: InvalidationInfo;
}

export interface InvalidationInfo {
  reason: string;
  by: string | null;
  invalidated_at: string;
  known_at: string;
}

export interface InvalidationRow extends InvalidationInfo {
  target_id: string;
}

export interface EdgeRow {
  source_id: string;
  target_id: string;
  edge_type: string;
  confidence: number | null;
  lag: string | null;
  mechanism: string | null;
  space: string;
  tenant: string;
  asserted_at: string;
  valid: { from: string; to: string | null };
  captured_at: string;
  known_at: string;
}

type Formatted = Pick<NodeRow, 'asserted_at' | 'captured_at' | 'known_at'> & { from: string; to: string | null };

// Rows never change and reads show the same rows again and again (a why chain, a list page): their
// instants are formatted once per row. Each answer still gets its own objects and freshly parsed JSON.
const formatted = new WeakMap<NodeVersion, Formatted>();

/** A node row as the API shows it; `supersededBy` and `invalidation` depend on the read, so the caller gives them. */
export function nodeRow(v: NodeVersion, supersededBy: string[] = [], invalidation?: Invalidation): NodeRow {
  let f = formatted.get(v);
  if (!f) {
    // Most rows carry one instant four times (asserted, captured, known, valid from): formatted once and
    // shared, since this cache lives as long as the read model's versions.
    const asserted = formatInstant(v.asserted_at);
    const as = (us: Micros): string => (us === v.asserted_at ? asserted : formatInstant(us));
    f = {
      asserted_at: asserted,
      captured_at: as(v.captured_at),
      known_at: as(v.known_at),
      from: as(v.valid_from),
      to: formatNullableEnd(v.valid_to),
    };
    formatted.set(v, f);
  }
  const row: NodeRow = {
    id: v.id,
    kind: v.kind,
    tenant: v.tenant,
    space: v.space,
    statement: v.statement,
    category: v.category,
    payload: JSON.parse(v.payload) as Record<string, unknown>,
    asserted_at: f.asserted_at,
    captured_at: f.captured_at,
    known_at: f.known_at,
    valid: { from: f.from, to: f.to },
    superseded_by: supersededBy,
  };
  if (v.fact_key !== null) row.fact_key = v.fact_key;
  if (v.fact_value !== null) row.fact_value = JSON.parse(v.fact_value) as unknown;
  if (invalidation) row.invalidated = invalidationInfo(invalidation);
  return row;
}

export function invalidationInfo(i: Invalidation): InvalidationInfo {
  return { reason: i.reason, by: i.by, invalidated_at: formatInstant(i.invalidated_at), known_at: formatInstant(i.known_at) };
}

export function invalidationRow(i: Invalidation): InvalidationRow {
  return { target_id: i.target_id, ...invalidationInfo(i) };
}

export function edgeRow(e: EdgeRecord): EdgeRow {
  return {
    source_id: e.source_id,
    target_id: e.target_id,
    edge_type: e.edge_type,
    confidence: e.confidence,
    lag: e.lag,
    mechanism: e.mechanism,
    space: e.space,
    tenant: e.tenant,
    asserted_at: formatInstant(e.asserted_at),
    valid: { from: formatInstant(e.valid_from), to: formatNullableEnd(e.valid_to) },
    captured_at: formatInstant(e.captured_at),
    known_at: formatInstant(e.known_at),
  };
}

/** A page of `GET /v1/memories`; the offline bundle reader answers with the same shape. */
export interface NodePage {
  items: NodeRow[];
  masked: MaskedCounts | null;
  next_cursor: string | null;
  certificate: Certificate;
}
