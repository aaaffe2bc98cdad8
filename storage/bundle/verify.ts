// Checks a bundle folder against the five invariants of an export and lists every violation with its row:
// three clocks (every instant parses, validity is a non-empty interval, nothing known after the export's
// as_of), attested knowledge time (known_at is the capture instant, or the declared instant of a batch the
// manifest declares), append-only (no id with overlapping validity, no duplicated edge or verdict
// identity), typed edges (known types, parseable lags, both ends exported) and declared facts (every
// resolution that applied a policy names a fact the manifest declares). A node may carry a fact_key that
// was never declared: the service accepts it and resolving it answers `undeclared_fact`, so such a node is
// not a violation (SPEC: a bundle exported from the service satisfies the five invariants). Since bundle
// version 2 a sixth: every invalidation names a node of the bundle (`invalidations_name_nodes`), with its
// clocks and attestation checked like any row's.
import { join } from 'node:path';
import { parseLag } from '../duration.ts';
import { edgeIdentity } from '../read/tenant-view.ts';
import { OPEN_END, parseInstant, type Micros } from '../time.ts';
import { isEdgeType } from '../types.ts';
import { overlaps } from '../visibility.ts';
import { readJsonl, readManifest } from './reader.ts';
import type { Attestation, Manifest } from './rows.ts';

export type Invariant =
  'format' | 'three_clocks' | 'attested_knowledge_time' | 'append_only' | 'typed_edges' | 'declared_facts' | 'invalidations_name_nodes';

export interface Violation {
  invariant: Invariant;
  file: string;
  line: number;
  problem: string;
  row: unknown;
}

export interface VerifyReport {
  ok: boolean;
  exported_as_of: string;
  counts: { nodes: number; edges: number; resolutions: number; invalidations: number };
  violations: Violation[];
}

type Row = Record<string, unknown>;

const isRow = (v: unknown): v is Row => typeof v === 'object' && v !== null && !Array.isArray(v);

function instantOf(value: unknown): Micros | null {
  if (typeof value !== 'string') return null;
  try {
    return parseInstant(value);
  } catch {
    return null;
  }
}

class Checker {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly row: unknown,
    readonly sink: Violation[],
  ) {}
  fail(invariant: Invariant, problem: string): void {
    this.sink.push({ invariant, file: this.file, line: this.line, problem, row: this.row });
  }
  /** The instant in `field`, reporting a three-clocks violation when it is missing or malformed. */
  instant(row: Row, field: string): Micros | null {
    const t = instantOf(row[field]);
    if (t === null) this.fail('three_clocks', `${field} is not an ISO 8601 instant with an offset: ${JSON.stringify(row[field])}`);
    return t;
  }
}

interface Context {
  asOf: Micros;
  batches: Map<string, Micros>;
  facts: Set<string>;
}

/** Clocks and attestation of a node or edge row. */
function checkTimes(c: Checker, row: Row, ctx: Context): void {
  c.instant(row, 'asserted_at');
  const from = c.instant(row, 'valid_from');
  const to = row.valid_to === null ? OPEN_END : c.instant(row, 'valid_to');
  if (from !== null && to !== null && to <= from) c.fail('three_clocks', 'valid_to is not later than valid_from');
  checkAttestation(c, row, ctx, c.instant(row, 'known_at'));
}

/** known_at within the export, and attested by the capture instant or a declared batch. */
function checkAttestation(c: Checker, row: Row, ctx: Context, known: Micros | null): void {
  if (known !== null && known > ctx.asOf) c.fail('three_clocks', "known_at is later than the bundle's exported_as_of");
  const att = row.attestation as Attestation | undefined;
  if (!isRow(att)) {
    c.fail('attested_knowledge_time', 'no attestation');
    return;
  }
  const captured = instantOf(att.captured_at);
  if (captured === null) {
    c.fail('attested_knowledge_time', 'attestation.captured_at is not an instant');
    return;
  }
  if (known === null) return;
  if (att.batch === null || att.batch === undefined) {
    if (known !== captured) c.fail('attested_knowledge_time', 'known_at differs from captured_at and no backfill batch attests it');
    return;
  }
  const declared = ctx.batches.get(String(att.batch.id));
  if (declared === undefined) {
    c.fail('attested_knowledge_time', `batch ${JSON.stringify(att.batch.id)} is not declared in the manifest`);
    return;
  }
  if (instantOf(att.batch.declared_captured_at) !== declared)
    c.fail('attested_knowledge_time', "the row's batch declaration differs from the manifest's");
  if (known !== declared)
    c.fail('attested_knowledge_time', `known_at ${known < declared ? 'precedes' : 'follows'} its batch's declared instant`);
  if (declared > captured) c.fail('attested_knowledge_time', "the batch declares an instant later than the row's capture");
}

export async function verifyBundleFolder(folder: string): Promise<VerifyReport> {
  const manifest: Manifest = await readManifest(folder);
  const violations: Violation[] = [];
  const asOf = instantOf(manifest.exported_as_of) ?? Number.POSITIVE_INFINITY;
  if (asOf === Number.POSITIVE_INFINITY)
    violations.push({
      invariant: 'three_clocks',
      file: 'manifest.json',
      line: 0,
      problem: 'exported_as_of is not an instant',
      row: manifest.exported_as_of,
    });
  const batches = new Map<string, Micros>();
  for (const b of manifest.declarations?.batches ?? []) {
    const t = instantOf(b.declared_captured_at);
    if (t === null)
      violations.push({
        invariant: 'three_clocks',
        file: 'manifest.json',
        line: 0,
        problem: "a batch's declared_captured_at is not an instant",
        row: b,
      });
    else batches.set(b.id, t);
  }
  const ctx: Context = { asOf, batches, facts: new Set((manifest.declarations?.facts ?? []).map((f) => f.fact_key)) };
  const counts = { nodes: 0, edges: 0, resolutions: 0, invalidations: 0 };

  const validity = new Map<string, [Micros, Micros][]>();
  for await (const l of readJsonl(join(folder, 'nodes.jsonl'))) {
    counts.nodes++;
    const c = new Checker('nodes.jsonl', l.line, l.value ?? l.error, violations);
    if (!isRow(l.value)) {
      c.fail('format', l.error ? `not JSON: ${l.error}` : 'not an object');
      continue;
    }
    const row = l.value;
    if (typeof row.id !== 'string' || typeof row.kind !== 'string' || typeof row.space !== 'string') {
      c.fail('format', 'id, kind and space must be strings');
      continue;
    }
    checkTimes(c, row, ctx);
    const from = instantOf(row.valid_from);
    const to = row.valid_to === null ? OPEN_END : instantOf(row.valid_to);
    if (from !== null && to !== null) {
      const seen = validity.get(row.id) ?? [];
      if (seen.some(([a, b]) => overlaps(a, b, from, to))) c.fail('append_only', `id ${row.id} appears again with an overlapping validity`);
      seen.push([from, to]);
      validity.set(row.id, seen);
    }
  }

  const edgeKeys = new Set<string>();
  for await (const l of readJsonl(join(folder, 'edges.jsonl'))) {
    counts.edges++;
    const c = new Checker('edges.jsonl', l.line, l.value ?? l.error, violations);
    if (!isRow(l.value)) {
      c.fail('format', l.error ? `not JSON: ${l.error}` : 'not an object');
      continue;
    }
    const row = l.value;
    const source = String(row.source_id),
      target = String(row.target_id),
      type = String(row.edge_type);
    if (!isEdgeType(type)) c.fail('typed_edges', `unknown edge type ${JSON.stringify(row.edge_type)}`);
    if (!validity.has(source)) c.fail('typed_edges', `source ${source} is not a node of the bundle`);
    if (!validity.has(target)) c.fail('typed_edges', `target ${target} is not a node of the bundle`);
    if (
      row.lag !== null &&
      row.lag !== undefined &&
      (typeof row.lag !== 'string' || !row.lag.startsWith('P') || parseLag(row.lag) === null)
    ) {
      c.fail('typed_edges', `lag ${JSON.stringify(row.lag)} is not an ISO 8601 duration`);
    }
    checkTimes(c, row, ctx);
    const asserted = instantOf(row.asserted_at);
    if (asserted !== null) {
      const key = edgeIdentity({ source_id: source, target_id: target, edge_type: type as never, asserted_at: asserted });
      if (edgeKeys.has(key)) c.fail('append_only', 'an edge with the same source, target, type and asserted_at appears twice');
      edgeKeys.add(key);
    }
  }

  const verdictKeys = new Set<string>();
  for await (const l of readJsonl(join(folder, 'resolutions.jsonl'))) {
    counts.resolutions++;
    const c = new Checker('resolutions.jsonl', l.line, l.value ?? l.error, violations);
    if (!isRow(l.value)) {
      c.fail('format', l.error ? `not JSON: ${l.error}` : 'not an object');
      continue;
    }
    const row = l.value;
    const decided = c.instant(row, 'decided_at');
    const known = c.instant(row, 'known_at');
    if (known !== null && known > asOf) c.fail('three_clocks', "known_at is later than the bundle's exported_as_of");
    if (!isRow(row.attestation)) c.fail('attested_knowledge_time', 'no attestation');
    if (row.method !== 'none' && !ctx.facts.has(String(row.fact_key))) {
      c.fail(
        'declared_facts',
        `a verdict applied policy ${JSON.stringify(row.method)} to fact ${JSON.stringify(row.fact_key)}, which the manifest does not declare`,
      );
    }
    if (decided !== null) {
      const key = `${String(row.target_id)}\u001f${decided}`;
      if (verdictKeys.has(key)) c.fail('append_only', 'a verdict with the same target and decided_at appears twice');
      verdictKeys.add(key);
    }
  }

  for await (const l of readJsonl(join(folder, 'invalidations.jsonl'))) {
    counts.invalidations++;
    const c = new Checker('invalidations.jsonl', l.line, l.value ?? l.error, violations);
    if (!isRow(l.value)) {
      c.fail('format', l.error ? `not JSON: ${l.error}` : 'not an object');
      continue;
    }
    const row = l.value;
    if (typeof row.reason !== 'string' || row.reason === '') c.fail('format', 'reason must be a non-empty string');
    if (!validity.has(String(row.target_id)))
      c.fail('invalidations_name_nodes', `target ${String(row.target_id)} is not a node of the bundle`);
    c.instant(row, 'invalidated_at');
    checkAttestation(c, row, ctx, c.instant(row, 'known_at'));
  }

  return { ok: violations.length === 0, exported_as_of: manifest.exported_as_of, counts, violations };
}
