// The export bundle's row formats, shared by the writer (ledger rows → JSONL lines) and the reader (JSONL
// lines → the same ledger rows, so the reads run unchanged over a bundle). Instants are six-digit UTC
// strings; JSON values stored as text in the ledger are written as JSON values.
import { formatInstant, formatNullableEnd, OPEN_END, parseInstant, type Micros } from '../time.ts';
import type { BatchRow, Declaration, EdgeRecord, EdgeType, Invalidation, NodeVersion, Policy, Verdict } from '../types.ts';

/** The bundle's own format version; server/version.ts reports the same number (a test holds them equal). */
// 2: invalidations.jsonl (v1.x). A reader of 2 reads 1: a bundle without the file retracted nothing.
export const BUNDLE_FORMAT_VERSION = 2;

export const BUNDLE_FILES = ['manifest.json', 'nodes.jsonl', 'edges.jsonl', 'resolutions.jsonl'] as const;

/** What the row writers need of the batches: a lookup by id (a Map, or the view's accessor). */
export interface BatchLookup {
  get(id: string): BatchRow | undefined;
}

export interface BatchRef {
  id: string;
  declared_captured_at: string;
  reason: string;
}

/** Who vouches for a row's knowledge instant: its real capture, and the declared batch when backfilled. */
export interface Attestation {
  captured_at: string;
  batch: BatchRef | null;
}

export interface BundleNode {
  id: string;
  kind: string;
  space: string;
  statement: string | null;
  category: string | null;
  payload: Record<string, unknown>;
  asserted_at: string;
  valid_from: string;
  valid_to: string | null;
  known_at: string;
  attestation: Attestation;
  fact_key: string | null;
  fact_value: unknown;
}

export interface BundleEdge {
  source_id: string;
  target_id: string;
  edge_type: string;
  confidence: number | null;
  /** ISO 8601 duration. */
  lag: string | null;
  mechanism: string | null;
  space: string;
  asserted_at: string;
  valid_from: string;
  valid_to: string | null;
  known_at: string;
  attestation: Attestation;
}

export interface BundleResolution {
  target_id: string | null;
  value: unknown;
  outcome: string;
  method: string;
  ruleset: unknown;
  resolver: string;
  decided_at: string;
  known_at: string;
  attestation: Attestation;
  fact_key: string;
  space: string | null;
}

/** One line of invalidations.jsonl: a retraction of node `target_id`, with its own knowledge instant. */
export interface BundleInvalidation {
  target_id: string;
  space: string;
  reason: string;
  by: string | null;
  invalidated_at: string;
  known_at: string;
  attestation: Attestation;
}

export interface BundleFact {
  fact_key: string;
  key_fields: string[];
  policy: Policy;
  source_order: string[] | null;
  declared_at: string;
}

export interface BundleBatch extends BatchRef {
  captured_at: string;
}

export interface Manifest {
  bundle_version: number;
  namespace: { tenant: string; space?: string };
  /** Exact-match topic filter the export applied, or null. */
  category: string | null;
  source: string;
  exported_as_of: string;
  declarations: { facts: BundleFact[]; batches: BundleBatch[]; embedding: null };
  counts: { nodes: number; edges: number; resolutions: number; invalidations?: number };
}

/**
 * `formatInstant` for many instants in a row: the calendar date is computed once per UTC day and reused,
 * the time of day by arithmetic. Exporting 100k rows formats half a million instants.
 */
export class InstantFormatter {
  #day = Number.NaN;
  #date = '';

  format(us: Micros): string {
    const day = Math.floor(us / 86_400_000_000);
    if (day !== this.#day) {
      this.#day = day;
      this.#date = formatInstant(day * 86_400_000_000).slice(0, 11); // YYYY-MM-DDT
    }
    let rest = us - day * 86_400_000_000;
    const h = Math.floor(rest / 3_600_000_000);
    rest -= h * 3_600_000_000;
    const m = Math.floor(rest / 60_000_000);
    rest -= m * 60_000_000;
    const sec = Math.floor(rest / 1_000_000);
    const frac = rest - sec * 1_000_000;
    return `${this.#date}${two(h)}:${two(m)}:${two(sec)}.${String(frac).padStart(6, '0')}Z`;
  }

  end(us: Micros): string | null {
    return us >= OPEN_END ? null : this.format(us);
  }
}

const two = (n: number): string => (n < 10 ? `0${n}` : String(n));

const q = (s: string | null): string => (s === null ? 'null' : JSON.stringify(s));

/**
 * The JSONL line of a node, built as text: the payload and fact value are already JSON text in the ledger
 * and are spliced in rather than parsed and re-serialised. Same content as `bundleNode`.
 */
export function nodeLine(v: NodeVersion, batches: BatchLookup, f: InstantFormatter): string {
  return (
    `{"id":${q(v.id)},"kind":${q(v.kind)},"space":${q(v.space)},"statement":${q(v.statement)},"category":${q(v.category)},` +
    `"payload":${v.payload},"asserted_at":"${f.format(v.asserted_at)}","valid_from":"${f.format(v.valid_from)}",` +
    `"valid_to":${q(f.end(v.valid_to))},"known_at":"${f.format(v.known_at)}","attestation":${attestationText(v.captured_at, v.batch_id, batches, f)},` +
    `"fact_key":${q(v.fact_key)},"fact_value":${v.fact_value ?? 'null'}}\n`
  );
}

export function edgeLine(e: EdgeRecord, batches: BatchLookup, f: InstantFormatter): string {
  return (
    `{"source_id":${q(e.source_id)},"target_id":${q(e.target_id)},"edge_type":${q(e.edge_type)},` +
    `"confidence":${e.confidence === null ? 'null' : JSON.stringify(e.confidence)},"lag":${q(e.lag)},"mechanism":${q(e.mechanism)},` +
    `"space":${q(e.space)},"asserted_at":"${f.format(e.asserted_at)}","valid_from":"${f.format(e.valid_from)}",` +
    `"valid_to":${q(f.end(e.valid_to))},"known_at":"${f.format(e.known_at)}","attestation":${attestationText(e.captured_at, e.batch_id, batches, f)}}\n`
  );
}

function attestationText(captured: Micros, batchId: string | null, batches: BatchLookup, f: InstantFormatter): string {
  const b = batchId === null ? undefined : batches.get(batchId);
  const batch = b ? `{"id":${q(b.id)},"declared_captured_at":"${formatInstant(b.declared_captured_at)}","reason":${q(b.reason)}}` : 'null';
  return `{"captured_at":"${f.format(captured)}","batch":${batch}}`;
}

function attestation(captured: Micros, batchId: string | null, batches: BatchLookup): Attestation {
  const b = batchId === null ? undefined : batches.get(batchId);
  return {
    captured_at: formatInstant(captured),
    batch: b ? { id: b.id, declared_captured_at: formatInstant(b.declared_captured_at), reason: b.reason } : null,
  };
}

export function bundleNode(v: NodeVersion, batches: BatchLookup): BundleNode {
  return {
    id: v.id,
    kind: v.kind,
    space: v.space,
    statement: v.statement,
    category: v.category,
    payload: JSON.parse(v.payload) as Record<string, unknown>,
    asserted_at: formatInstant(v.asserted_at),
    valid_from: formatInstant(v.valid_from),
    valid_to: formatNullableEnd(v.valid_to),
    known_at: formatInstant(v.known_at),
    attestation: attestation(v.captured_at, v.batch_id, batches),
    fact_key: v.fact_key,
    fact_value: v.fact_value === null ? null : (JSON.parse(v.fact_value) as unknown),
  };
}

export function bundleEdge(e: EdgeRecord, batches: BatchLookup): BundleEdge {
  return {
    source_id: e.source_id,
    target_id: e.target_id,
    edge_type: e.edge_type,
    confidence: e.confidence,
    lag: e.lag,
    mechanism: e.mechanism,
    space: e.space,
    asserted_at: formatInstant(e.asserted_at),
    valid_from: formatInstant(e.valid_from),
    valid_to: formatNullableEnd(e.valid_to),
    known_at: formatInstant(e.known_at),
    attestation: attestation(e.captured_at, e.batch_id, batches),
  };
}

export function bundleResolution(v: Verdict): BundleResolution {
  return {
    target_id: v.target_id,
    value: v.value === null ? null : (JSON.parse(v.value) as unknown),
    outcome: v.outcome,
    method: v.method,
    ruleset: JSON.parse(v.ruleset) as unknown,
    resolver: v.resolver,
    decided_at: formatInstant(v.decided_at),
    known_at: formatInstant(v.known_at),
    attestation: { captured_at: formatInstant(v.decided_at), batch: null },
    fact_key: v.fact_key,
    space: v.space,
  };
}

export function bundleInvalidation(i: Invalidation, batches: BatchLookup): BundleInvalidation {
  return {
    target_id: i.target_id,
    space: i.space,
    reason: i.reason,
    by: i.by,
    invalidated_at: formatInstant(i.invalidated_at),
    known_at: formatInstant(i.known_at),
    attestation: attestation(i.invalidated_at, i.batch_id, batches),
  };
}

export function bundleFact(d: Declaration): BundleFact {
  return {
    fact_key: d.fact_key,
    key_fields: d.key_fields,
    policy: d.policy,
    source_order: d.source_order,
    declared_at: formatInstant(d.declared_at),
  };
}

export function bundleBatch(b: BatchRow): BundleBatch {
  return {
    id: b.id,
    declared_captured_at: formatInstant(b.declared_captured_at),
    reason: b.reason,
    captured_at: formatInstant(b.captured_at),
  };
}

// ---- back to ledger rows (the reader) -----------------------------------------------------------

/** A bundle row that cannot become a ledger row; the reader refuses it and `verify` reports it. */
export class BundleRowError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    message: string,
  ) {
    super(`${file}:${line}: ${message}`);
    this.name = 'BundleRowError';
  }
}

const CANONICAL = /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):([0-5]\d):([0-5]\d)\.(\d{6})Z$/;
let lastDate = '';
let lastMidnight = 0;

/**
 * `parseInstant` with a fast path for the bundle's own form (`YYYY-MM-DDTHH:MM:SS.ffffffZ`): the date is
 * parsed once per day and the time of day by arithmetic. Anything else goes through `parseInstant`.
 */
export function bundleInstant(text: string): Micros {
  const m = typeof text === 'string' ? CANONICAL.exec(text) : null;
  if (!m) return parseInstant(text);
  const [, date = '', h, mi, sec, frac] = m;
  if (date !== lastDate) {
    lastMidnight = parseInstant(`${date}T00:00:00Z`);
    lastDate = date;
  }
  return lastMidnight + ((Number(h) * 60 + Number(mi)) * 60 + Number(sec)) * 1_000_000 + Number(frac);
}

const end = (text: string | null): Micros => (text === null ? OPEN_END : bundleInstant(text));

/** `seq` orders rows as the file does (the writer keeps commit order). */
export function nodeVersionOf(r: BundleNode, tenant: string, seq: number): NodeVersion {
  return {
    seq,
    tseq: seq,
    tenant,
    id: r.id,
    space: r.space,
    kind: r.kind,
    statement: r.statement ?? null,
    category: r.category ?? null,
    payload: JSON.stringify(r.payload ?? {}),
    asserted_at: bundleInstant(r.asserted_at),
    valid_from: bundleInstant(r.valid_from),
    valid_to: end(r.valid_to ?? null),
    captured_at: bundleInstant(r.attestation.captured_at),
    known_at: bundleInstant(r.known_at),
    batch_id: r.attestation.batch?.id ?? null,
    fact_key: r.fact_key ?? null,
    fact_value: r.fact_value === undefined || r.fact_value === null ? null : JSON.stringify(r.fact_value),
    hash: '',
  };
}

export function edgeRecordOf(r: BundleEdge, tenant: string, seq: number): EdgeRecord {
  return {
    seq,
    tseq: seq,
    tenant,
    source_id: r.source_id,
    target_id: r.target_id,
    edge_type: r.edge_type as EdgeType,
    confidence: r.confidence ?? null,
    lag: r.lag ?? null,
    mechanism: r.mechanism ?? null,
    space: r.space,
    asserted_at: bundleInstant(r.asserted_at),
    valid_from: bundleInstant(r.valid_from),
    valid_to: end(r.valid_to ?? null),
    captured_at: bundleInstant(r.attestation.captured_at),
    known_at: bundleInstant(r.known_at),
    batch_id: r.attestation.batch?.id ?? null,
    hash: '',
  };
}

export function verdictOf(r: BundleResolution, tenant: string, seq: number): Verdict {
  return {
    seq,
    tseq: seq,
    tenant,
    fact_key: r.fact_key,
    target_id: r.target_id ?? null,
    value: r.value === undefined || r.value === null ? null : JSON.stringify(r.value),
    outcome: r.outcome,
    method: r.method,
    ruleset: JSON.stringify(r.ruleset ?? null),
    resolver: r.resolver,
    decided_at: bundleInstant(r.decided_at),
    known_at: bundleInstant(r.known_at),
    space: r.space ?? null,
    hash: '',
  };
}

export function invalidationOf(r: BundleInvalidation, tenant: string, seq: number): Invalidation {
  if (typeof r.target_id !== 'string' || typeof r.reason !== 'string') throw new TypeError('an invalidation needs target_id and reason');
  return {
    seq,
    tseq: seq,
    tenant,
    target_id: r.target_id,
    space: r.space,
    reason: r.reason,
    by: r.by ?? null,
    invalidated_at: bundleInstant(r.invalidated_at),
    known_at: bundleInstant(r.known_at),
    batch_id: r.attestation?.batch?.id ?? null,
  };
}

export function declarationOf(f: BundleFact, tenant: string, seq: number): Declaration {
  return {
    seq,
    tseq: seq,
    tenant,
    fact_key: f.fact_key,
    key_fields: f.key_fields ?? [],
    policy: f.policy,
    source_order: f.source_order ?? null,
    declared_at: bundleInstant(f.declared_at),
  };
}

export function batchRowOf(b: BundleBatch, tenant: string): BatchRow {
  return {
    tenant,
    id: b.id,
    declared_captured_at: bundleInstant(b.declared_captured_at),
    reason: b.reason,
    captured_at: bundleInstant(b.captured_at),
    // A bundle is read, never stored: its batches are looked up by id, never paged.
    tseq: 0,
  };
}
