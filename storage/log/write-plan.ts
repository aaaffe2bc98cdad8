// The row rules of a write, in one place: idempotency by content, same id only with a non-overlapping
// validity, edge endpoints that exist, parseable lags, known edge types, no caller-set captured_at.
// A plan is made inside the writer queue against the committed view plus what earlier requests of the
// same commit group staged (the overlay), so two requests in one group see each other.
import { parseLag } from '../duration.ts';
import { recordHasher } from '../hash.ts';
import { OPEN_END, type Micros } from '../time.ts';
import { edgeIdentity, push } from '../read/tenant-view.ts';
import type { PlanView } from '../read/union-view.ts';
import { EDGE_TYPES, isEdgeType, type BatchRow, type EdgeRecord, type Invalidation, type NodeVersion } from '../types.ts';
import { overlaps } from '../visibility.ts';

export interface NodeInput {
  id?: string | undefined;
  kind: string;
  statement?: string | null | undefined;
  category?: string | null | undefined;
  payload?: Record<string, unknown> | undefined;
  asserted_at?: Micros | undefined;
  valid_from?: Micros | undefined;
  valid_to?: Micros | null | undefined;
  fact_key?: string | null | undefined;
  fact_value?: unknown;
  /** The caller sent `captured_at`, which only the server sets. */
  sets_captured_at?: boolean | undefined;
}

export interface EdgeInput {
  source_id: string;
  target_id: string;
  edge_type: string;
  confidence?: number | null | undefined;
  lag?: string | null | undefined;
  mechanism?: string | null | undefined;
  asserted_at?: Micros | undefined;
  valid_from?: Micros | undefined;
  valid_to?: Micros | null | undefined;
  sets_captured_at?: boolean | undefined;
}

export interface WriteInput {
  space: string;
  backfill?: { declared_captured_at: Micros; reason: string } | undefined;
  nodes: NodeInput[];
  edges: EdgeInput[];
  /** When set, edge endpoints must be nodes of this space (an app-scoped agent cannot reach past it). */
  endpointSpace?: string | undefined;
}

export type RefusalReason = 'missing_endpoint' | 'captured_at_not_allowed' | 'invalid_lag' | 'id_conflict' | 'unknown_edge_type';

/** A refused row, with what would fix it where that can be said (the allowed types, the expected form). */
export interface Refusal {
  id: string;
  kind: 'node' | 'edge';
  reason: RefusalReason;
  allowed?: string[];
  expected?: string;
}

export const LAG_FORMS = "ISO 8601 duration (P3D, PT36H) or '<n> <unit>' (3 days)";

export interface WriteOutcome {
  accepted: number;
  refused: Refusal[];
  warnings: { id: string; kind: 'node' | 'edge'; warning: 'already_remembered' }[];
  ids: string[];
  batch: BatchRow | null;
  captured_at: Micros;
}

/** What a commit group has staged so far for one tenant: every plan of the group sees it. */
export class StagedRows {
  readonly versions = new Map<string, NodeVersion[]>();
  readonly edgesByIdentity = new Map<string, EdgeRecord>();
  readonly edgeHashes = new Set<string>();
  readonly invalidations = new Map<string, Invalidation[]>();
  /** Staged edges by each of their endpoints. */
  readonly edgesAt = new Map<string, EdgeRecord[]>();
}

/**
 * What a commit group has staged so far, layered over the committed rows a plan reads: the tenant's view,
 * or the union of the views of the spaces holding the ids a request names (storage/read/union-view.ts).
 */
export class Overlay {
  readonly versions: Map<string, NodeVersion[]>;
  readonly edgesByIdentity: Map<string, EdgeRecord>;
  readonly edgeHashes: Set<string>;
  readonly invalidations: Map<string, Invalidation[]>;
  readonly edgesAt: Map<string, EdgeRecord[]>;

  constructor(
    readonly view: PlanView,
    staged: StagedRows = new StagedRows(),
  ) {
    this.versions = staged.versions;
    this.edgesByIdentity = staged.edgesByIdentity;
    this.edgeHashes = staged.edgeHashes;
    this.invalidations = staged.invalidations;
    this.edgesAt = staged.edgesAt;
  }

  /**
   * The spaces holding the invalidations of `id` (storage layout 4): those holding a version of it or an
   * edge touching it. A read of one space sees its edges' ends as the tenant does: a SUPERSEDES edge
   * whose source is invalidated supersedes nothing, whether or not the source has a version there.
   */
  spacesHolding(id: string): Set<string> {
    const spaces = new Set(this.versionsOf(id).map((v) => v.space));
    for (const e of this.view.edgesFrom(id)) spaces.add(e.space);
    for (const e of this.view.edgesTo(id)) spaces.add(e.space);
    for (const e of this.edgesAt.get(id) ?? []) spaces.add(e.space);
    return spaces;
  }

  /** The invalidations of `id` that `space` is to hold once a row there names the id, unless it holds them already. */
  invalidationLinks(space: string, id: string): { space: string; row: Invalidation }[] {
    const invalidations = this.invalidationsOf(id).filter((row) => row.space !== space);
    if (invalidations.length === 0 || this.spacesHolding(id).has(space)) return [];
    return invalidations.map((row) => ({ space, row }));
  }

  invalidationsOf(id: string): Invalidation[] {
    return [...this.view.invalidationsOf(id), ...(this.invalidations.get(id) ?? [])];
  }

  stageInvalidation(row: Invalidation): void {
    push(this.invalidations, row.target_id, row);
  }

  versionsOf(id: string): readonly NodeVersion[] {
    // Without a copy when one side is empty (nearly always): a 1,000-row import asks this ~1,200 times.
    const committed = this.view.versionsOf(id);
    const staged = this.versions.get(id);
    if (!staged) return committed;
    return committed.length === 0 ? staged : [...committed, ...staged];
  }

  stageNode(row: NodeVersion): void {
    push(this.versions, row.id, row);
  }

  stageEdge(row: EdgeRecord): void {
    push(this.edgesAt, row.source_id, row);
    if (row.target_id !== row.source_id) push(this.edgesAt, row.target_id, row);
    this.edgesByIdentity.set(edgeIdentity(row), row);
    this.edgeHashes.add(row.hash);
  }

  edgeByIdentity(key: string): EdgeRecord | undefined {
    return this.view.edgeByIdentity(key) ?? this.edgesByIdentity.get(key);
  }

  hasEdgeHash(hash: string): boolean {
    return this.view.hasEdgeHash(hash) || this.edgeHashes.has(hash);
  }
}

const nodeHash = recordHasher([
  'space',
  'kind',
  'statement',
  'category',
  'payload',
  'asserted_at',
  'valid_from',
  'valid_to',
  'fact_key',
  'fact_value',
]);
const edgeHash = recordHasher([
  'space',
  'source_id',
  'target_id',
  'edge_type',
  'confidence',
  'lag',
  'mechanism',
  'asserted_at',
  'valid_from',
  'valid_to',
]);

export function nodeContentHash(space: string, n: NodeInput): string {
  return nodeHash({
    space,
    kind: n.kind,
    statement: n.statement ?? null,
    category: n.category ?? null,
    payload: n.payload ?? {},
    asserted_at: n.asserted_at ?? null,
    valid_from: n.valid_from ?? null,
    valid_to: n.valid_to ?? null,
    fact_key: n.fact_key ?? null,
    fact_value: n.fact_value === undefined ? null : n.fact_value,
  });
}

const latestAssertion = (versions: readonly NodeVersion[]): Micros =>
  versions.reduce((m, v) => Math.max(m, v.asserted_at), Number.NEGATIVE_INFINITY);

/** The id a node gets when the caller gives none: derived from its content, so a re-send is idempotent. */
export function derivedNodeId(hash: string): string {
  return `n-${hash.slice(0, 24)}`;
}

export interface Sequencer {
  nextSeq(): number;
}

export interface PlannedWrite {
  outcome: WriteOutcome;
  nodes: NodeVersion[];
  edges: EdgeRecord[];
  newIdents: string[];
  /** Invalidations of written ids newly held by the write's space (their node had no version there yet). */
  invalidationSpaces: { space: string; row: Invalidation }[];
}

export function planWrite(tenant: string, input: WriteInput, overlay: Overlay, capturedAt: Micros, seqs: Sequencer): PlannedWrite {
  const outcome: WriteOutcome = { accepted: 0, refused: [], warnings: [], ids: [], batch: null, captured_at: capturedAt };
  const batchId = input.backfill ? `batch-${capturedAt}` : null;
  const knownAt = input.backfill ? input.backfill.declared_captured_at : capturedAt;
  const nodes: NodeVersion[] = [];
  const edges: EdgeRecord[] = [];
  const newIdents: string[] = [];
  const invalidationSpaces: PlannedWrite['invalidationSpaces'] = [];

  for (const n of input.nodes) {
    const hash = nodeContentHash(input.space, n);
    const id = n.id ?? derivedNodeId(hash);
    if (n.sets_captured_at) {
      outcome.refused.push({ id, kind: 'node', reason: 'captured_at_not_allowed' });
      continue;
    }
    const existing = overlay.versionsOf(id);
    if (existing.some((v) => v.hash === hash)) {
      outcome.warnings.push({ id, kind: 'node', warning: 'already_remembered' });
      continue;
    }
    const asserted = n.asserted_at ?? capturedAt;
    const from = n.valid_from ?? asserted;
    const to = n.valid_to ?? OPEN_END;
    if (existing.some((v) => overlaps(v.valid_from, v.valid_to, from, to))) {
      outcome.refused.push({ id, kind: 'node', reason: 'id_conflict' });
      continue;
    }
    const seq = seqs.nextSeq();
    const row: NodeVersion = {
      seq,
      tseq: seq,
      tenant,
      id,
      space: input.space,
      kind: n.kind,
      statement: n.statement ?? null,
      category: n.category ?? null,
      payload: JSON.stringify(n.payload ?? {}),
      asserted_at: asserted,
      valid_from: from,
      valid_to: to,
      captured_at: capturedAt,
      known_at: knownAt,
      batch_id: batchId,
      fact_key: n.fact_key ?? null,
      fact_value: n.fact_value === undefined ? null : JSON.stringify(n.fact_value),
      hash,
    };
    if (existing.length === 0) newIdents.push(id);
    // An invalidation retracts every version of its id: a space the id enters holds its invalidations too.
    for (const link of overlay.invalidationLinks(input.space, id)) invalidationSpaces.push(link);
    overlay.stageNode(row);
    nodes.push(row);
    outcome.ids.push(row.id);
  }

  for (const e of input.edges) {
    const label = `${e.source_id}->${e.target_id}`;
    if (e.sets_captured_at) {
      outcome.refused.push({ id: label, kind: 'edge', reason: 'captured_at_not_allowed' });
      continue;
    }
    if (!isEdgeType(e.edge_type)) {
      outcome.refused.push({ id: label, kind: 'edge', reason: 'unknown_edge_type', allowed: [...EDGE_TYPES] });
      continue;
    }
    const lag = e.lag === undefined || e.lag === null ? null : parseLag(e.lag);
    if (e.lag !== undefined && e.lag !== null && lag === null) {
      outcome.refused.push({ id: label, kind: 'edge', reason: 'invalid_lag', expected: LAG_FORMS });
      continue;
    }
    const reachable = (id: string): boolean => {
      const versions = overlay.versionsOf(id);
      return input.endpointSpace === undefined ? versions.length > 0 : versions.some((v) => v.space === input.endpointSpace);
    };
    if (!reachable(e.source_id) || !reachable(e.target_id)) {
      outcome.refused.push({ id: label, kind: 'edge', reason: 'missing_endpoint' });
      continue;
    }
    const hash = edgeHash({
      space: input.space,
      source_id: e.source_id,
      target_id: e.target_id,
      edge_type: e.edge_type,
      confidence: e.confidence ?? null,
      lag,
      mechanism: e.mechanism ?? null,
      asserted_at: e.asserted_at ?? null,
      valid_from: e.valid_from ?? null,
      valid_to: e.valid_to ?? null,
    });
    if (overlay.hasEdgeHash(hash)) {
      outcome.warnings.push({ id: label, kind: 'edge', warning: 'already_remembered' });
      continue;
    }
    // A link stated without its own time is as old as the later of the statements it links, so a read at
    // the content's time keeps it (asserting it at the capture instant would hide it from such reads).
    const asserted =
      e.asserted_at ?? Math.max(latestAssertion(overlay.versionsOf(e.source_id)), latestAssertion(overlay.versionsOf(e.target_id)));
    const seq = seqs.nextSeq();
    const row: EdgeRecord = {
      seq,
      tseq: seq,
      tenant,
      source_id: e.source_id,
      target_id: e.target_id,
      edge_type: e.edge_type,
      confidence: e.confidence ?? null,
      lag,
      mechanism: e.mechanism ?? null,
      space: input.space,
      asserted_at: asserted,
      valid_from: e.valid_from ?? asserted,
      valid_to: e.valid_to ?? OPEN_END,
      captured_at: capturedAt,
      known_at: knownAt,
      batch_id: batchId,
      hash,
    };
    if (overlay.edgeByIdentity(edgeIdentity(row))) {
      outcome.refused.push({ id: label, kind: 'edge', reason: 'id_conflict' });
      continue;
    }
    // So does a space an edge brings the id into (see Overlay.spacesHolding).
    for (const end of new Set([row.source_id, row.target_id]))
      for (const link of overlay.invalidationLinks(input.space, end)) invalidationSpaces.push(link);
    overlay.stageEdge(row);
    edges.push(row);
  }

  outcome.accepted = nodes.length + edges.length;
  if (input.backfill && batchId && outcome.accepted > 0) {
    outcome.batch = {
      tenant,
      id: batchId,
      declared_captured_at: input.backfill.declared_captured_at,
      reason: input.backfill.reason,
      captured_at: capturedAt,
      // Exported just before its first row (ties on tseq put batches first).
      tseq: Math.min(...nodes.map((r) => r.tseq), ...edges.map((r) => r.tseq)),
    };
  }
  return { outcome, nodes, edges, newIdents, invalidationSpaces };
}
