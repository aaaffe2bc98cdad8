// Rows as the API shows them: instants as six-digit UTC strings, JSON text parsed back into values.
import { formatInstant, formatNullableEnd } from './time.ts';
import type { Certificate, MaskedCounts } from './certificate.ts';
import type { EdgeRecord, NodeVersion } from './types.ts';

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

export function nodeRow(v: NodeVersion): NodeRow {
  const row: NodeRow = {
    id: v.id, kind: v.kind, tenant: v.tenant, space: v.space, statement: v.statement, category: v.category,
    payload: JSON.parse(v.payload) as Record<string, unknown>, asserted_at: formatInstant(v.asserted_at),
    captured_at: formatInstant(v.captured_at), known_at: formatInstant(v.known_at),
    valid: { from: formatInstant(v.valid_from), to: formatNullableEnd(v.valid_to) },
  };
  if (v.fact_key !== null) row.fact_key = v.fact_key;
  if (v.fact_value !== null) row.fact_value = JSON.parse(v.fact_value) as unknown;
  return row;
}

export function edgeRow(e: EdgeRecord): EdgeRow {
  return {
    source_id: e.source_id, target_id: e.target_id, edge_type: e.edge_type, confidence: e.confidence, lag: e.lag,
    mechanism: e.mechanism, space: e.space, tenant: e.tenant, asserted_at: formatInstant(e.asserted_at),
    valid: { from: formatInstant(e.valid_from), to: formatNullableEnd(e.valid_to) },
    captured_at: formatInstant(e.captured_at), known_at: formatInstant(e.known_at),
  };
}

/** A page of `GET /v1/memories`; the offline bundle reader answers with the same shape. */
export interface NodePage {
  items: NodeRow[];
  masked: MaskedCounts | null;
  next_cursor: string | null;
  certificate: Certificate;
}
