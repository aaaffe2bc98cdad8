// The ledger's rows as the program holds them: instants in microseconds, JSON values as text where they
// are only stored and returned (payload, fact_value), so a row is cheap to keep and to hash.
import type { Micros } from './time.ts';

export interface BatchRow {
  tenant: string;
  id: string;
  declared_captured_at: Micros;
  reason: string;
  captured_at: Micros;
  /** The tseq of the batch's first row (a batch is exported just before it). */
  tseq: number;
}

export interface NodeVersion {
  seq: number;
  /**
   * The row's number within its tenant: equal to seq for a row written here, the source's number for a row
   * imported by a tenant copy (seq is this server's own). Cursors and exports carry it; within one tenant
   * it orders rows as seq does.
   */
  tseq: number;
  tenant: string;
  id: string;
  space: string;
  kind: string;
  statement: string | null;
  category: string | null;
  /** JSON text of an object. */
  payload: string;
  asserted_at: Micros;
  valid_from: Micros;
  /** OPEN_END when open. */
  valid_to: Micros;
  captured_at: Micros;
  known_at: Micros;
  batch_id: string | null;
  fact_key: string | null;
  /** JSON text, or null when the node carries no fact value. */
  fact_value: string | null;
  hash: string;
}

export interface EdgeRecord {
  seq: number;
  /** Within the tenant (see NodeVersion.tseq). */
  tseq: number;
  tenant: string;
  source_id: string;
  target_id: string;
  edge_type: EdgeType;
  confidence: number | null;
  /** Canonical ISO 8601 duration. */
  lag: string | null;
  mechanism: string | null;
  space: string;
  asserted_at: Micros;
  valid_from: Micros;
  valid_to: Micros;
  captured_at: Micros;
  known_at: Micros;
  batch_id: string | null;
  hash: string;
}

export const EDGE_FAMILIES = {
  causal: ['CAUSES', 'CONTRIBUTING_FACTOR', 'TRIGGERS', 'PREVENTS'],
  temporal: ['SUPERSEDES', 'CONCURRENT_SIGNAL', 'RESTATES'],
  argumentative: ['SUPPORTS', 'CONTRADICTS', 'QUALIFIES'],
  general: ['DEPENDS_ON', 'DERIVED_FROM', 'MENTIONS'],
} as const;

export type EdgeFamily = keyof typeof EDGE_FAMILIES;
export type EdgeType = (typeof EDGE_FAMILIES)[EdgeFamily][number];
export const EDGE_TYPES: readonly EdgeType[] = Object.values(EDGE_FAMILIES).flat();

export function isEdgeType(value: string): value is EdgeType {
  return (EDGE_TYPES as readonly string[]).includes(value);
}

export function familyOf(type: EdgeType): EdgeFamily {
  for (const [family, types] of Object.entries(EDGE_FAMILIES) as [EdgeFamily, readonly string[]][]) {
    if (types.includes(type)) return family;
  }
  throw new Error(`unreachable: ${type}`);
}

export type Policy = 'latest_valid' | 'latest_observed' | 'source_priority' | 'strict';
export const POLICIES: readonly Policy[] = ['latest_valid', 'latest_observed', 'source_priority', 'strict'];

export interface Declaration {
  seq: number;
  /** Within the tenant (see NodeVersion.tseq). */
  tseq: number;
  tenant: string;
  fact_key: string;
  key_fields: string[];
  policy: Policy;
  source_order: string[] | null;
  declared_at: Micros;
}

export interface Verdict {
  seq: number;
  /** Within the tenant (see NodeVersion.tseq). */
  tseq: number;
  tenant: string;
  fact_key: string;
  /** The node id the chosen value came from, or null when no value was chosen. */
  target_id: string | null;
  /** JSON text of the chosen value, or null. */
  value: string | null;
  outcome: string;
  method: string;
  /** JSON text of the ruleset applied (the declaration and the instants used). */
  ruleset: string;
  resolver: string;
  decided_at: Micros;
  known_at: Micros;
  space: string | null;
  hash: string;
}

/**
 * A recorded retraction of a node (every version of its id). Append-only like every row: the node's rows
 * stay, and a read with an as_of before `known_at` sees the node as if nothing had happened.
 */
export interface Invalidation {
  seq: number;
  /** Within the tenant (see NodeVersion.tseq). */
  tseq: number;
  tenant: string;
  target_id: string;
  /** The space of the node it retracts (export and confinement scope by it). */
  space: string;
  reason: string;
  by: string | null;
  /** The capture instant of the invalidation. */
  invalidated_at: Micros;
  known_at: Micros;
  batch_id: string | null;
}

/** One space's node and edge rows known at an instant, with the earliest and latest of their known_at. */
export interface SpaceCounts {
  space: string;
  nodes: number;
  edges: number;
  firstKnownAt: Micros;
  lastKnownAt: Micros;
}

/** The first tenant to write a space, and when: the MCP door opens `svc:` spaces by it. */
export interface SpaceRow {
  space: string;
  tenant: string;
  first_captured_at: Micros;
  /** The tseq of the space's first row (exported just before it). */
  tseq: number;
}
