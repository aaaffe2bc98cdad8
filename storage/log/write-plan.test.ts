import { describe, expect, it } from 'vitest';
import { TenantView } from '../read/tenant-view.ts';
import { OPEN_END, parseInstant } from '../time.ts';
import { Overlay, planWrite, type EdgeInput, type NodeInput, type WriteInput } from './write-plan.ts';

const T = parseInstant('2024-03-01T00:00:00Z');
const DAY = 86_400_000_000;

/** A tenant's view with a writer that commits each plan into it, as the ledger does after a commit. */
function fixture() {
  const view = new TenantView('t1');
  let seq = 0;
  let clock = T;
  const seqs = { nextSeq: () => ++seq };
  const write = (input: Partial<WriteInput>, overlay = new Overlay(view)) => {
    const planned = planWrite('t1', { space: 's', nodes: [], edges: [], ...input }, overlay, ++clock, seqs);
    for (const n of planned.nodes) view.addNode(n);
    for (const e of planned.edges) view.addEdge(e);
    if (planned.outcome.batch) view.addBatch(planned.outcome.batch);
    return planned;
  };
  return { view, write, now: () => clock };
}

const node = (id: string, extra: Partial<NodeInput> = {}): NodeInput => ({ id, kind: 'claim', statement: `about ${id}`, ...extra });
const edge = (source_id: string, target_id: string, extra: Partial<EdgeInput> = {}): EdgeInput => ({
  source_id,
  target_id,
  edge_type: 'CAUSES',
  ...extra,
});

describe('write plan: nodes', () => {
  it('writes a node and stamps capture, assertion and validity defaults', () => {
    const f = fixture();
    const p = f.write({ nodes: [node('a')] });
    expect(p.outcome.accepted).toBe(1);
    expect(p.outcome.ids).toEqual(['a']);
    const row = p.nodes[0]!;
    expect(row.captured_at).toBe(f.now());
    expect(row.known_at).toBe(row.captured_at);
    expect(row.asserted_at).toBe(row.captured_at);
    expect(row.valid_from).toBe(row.asserted_at);
    expect(row.valid_to).toBe(OPEN_END);
    expect(p.newIdents).toEqual(['a']);
  });
  it('is idempotent by content: a re-send writes nothing and warns already_remembered', () => {
    const f = fixture();
    f.write({ nodes: [node('a', { asserted_at: T - DAY })] });
    const again = f.write({ nodes: [node('a', { asserted_at: T - DAY })] });
    expect(again.outcome.accepted).toBe(0);
    expect(again.outcome.warnings).toEqual([{ id: 'a', kind: 'node', warning: 'already_remembered' }]);
    expect(f.view.versionsOf('a')).toHaveLength(1);
  });
  it('derives the same id from the same content when none is given', () => {
    const f = fixture();
    const one = f.write({ nodes: [{ kind: 'claim', statement: 'x', asserted_at: T }] });
    const two = f.write({ nodes: [{ kind: 'claim', statement: 'x', asserted_at: T }] });
    expect(one.outcome.ids).toHaveLength(1);
    expect(two.outcome.warnings[0]?.id).toBe(one.outcome.ids[0]);
    const other = f.write({ nodes: [{ kind: 'claim', statement: 'y', asserted_at: T }] });
    expect(other.outcome.ids[0]).not.toBe(one.outcome.ids[0]);
  });
  it('refuses the same id with different content and overlapping validity (id_conflict)', () => {
    const f = fixture();
    f.write({ nodes: [node('a', { valid_from: T, valid_to: T + DAY })] });
    const p = f.write({ nodes: [node('a', { statement: 'changed', valid_from: T + DAY - 1, valid_to: T + 2 * DAY })] });
    expect(p.outcome.refused).toEqual([{ id: 'a', kind: 'node', reason: 'id_conflict' }]);
    const open = f.write({ nodes: [node('a', { statement: 'open', valid_from: T - DAY })] });
    expect(open.outcome.refused[0]?.reason).toBe('id_conflict');
  });
  it('accepts the same id with an adjacent interval, and an earlier one', () => {
    const f = fixture();
    f.write({ nodes: [node('a', { valid_from: T, valid_to: T + DAY })] });
    const next = f.write({ nodes: [node('a', { statement: 'next', valid_from: T + DAY, valid_to: T + 2 * DAY })] });
    const before = f.write({ nodes: [node('a', { statement: 'before', valid_from: T - DAY, valid_to: T })] });
    expect(next.outcome.accepted).toBe(1);
    expect(before.outcome.accepted).toBe(1);
    expect(next.newIdents).toEqual([]);
    expect(f.view.versionsOf('a')).toHaveLength(3);
  });
  it('sees rows staged earlier in the same request and the same commit group', () => {
    const f = fixture();
    const overlay = new Overlay(f.view);
    const p = planWrite('t1', { space: 's', nodes: [node('a'), node('a', { statement: 'other' })], edges: [] }, overlay, T, {
      nextSeq: () => 1,
    });
    expect(p.outcome.accepted).toBe(1);
    expect(p.outcome.refused[0]?.reason).toBe('id_conflict');
    const second = planWrite('t1', { space: 's', nodes: [node('a')], edges: [] }, overlay, T + 1, { nextSeq: () => 2 });
    expect(second.outcome.warnings[0]?.warning).toBe('already_remembered');
  });
  it('refuses a row that sets captured_at and writes the rest', () => {
    const f = fixture();
    const p = f.write({ nodes: [node('a', { sets_captured_at: true }), node('b')] });
    expect(p.outcome.refused).toEqual([{ id: 'a', kind: 'node', reason: 'captured_at_not_allowed' }]);
    expect(p.outcome.ids).toEqual(['b']);
  });
});

describe('write plan: edges', () => {
  it('accepts endpoints written in the same request', () => {
    const f = fixture();
    const p = f.write({ nodes: [node('a'), node('b')], edges: [edge('a', 'b')] });
    expect(p.outcome.accepted).toBe(3);
    expect(p.edges).toHaveLength(1);
  });
  it('refuses missing endpoints by name', () => {
    const f = fixture();
    f.write({ nodes: [node('a')] });
    const p = f.write({ edges: [edge('a', 'ghost'), edge('ghost', 'a')] });
    expect(p.outcome.refused).toEqual([
      { id: 'a->ghost', kind: 'edge', reason: 'missing_endpoint' },
      { id: 'ghost->a', kind: 'edge', reason: 'missing_endpoint' },
    ]);
  });
  it('keeps endpoints inside a confined space', () => {
    const f = fixture();
    f.write({ nodes: [node('a'), node('b')], space: 'other' });
    f.write({ nodes: [node('c')], space: 'mine' });
    const p = f.write({ space: 'mine', edges: [edge('c', 'a')], endpointSpace: 'mine' });
    expect(p.outcome.refused[0]?.reason).toBe('missing_endpoint');
  });
  it('refuses unknown edge types and unparseable lags', () => {
    const f = fixture();
    f.write({ nodes: [node('a'), node('b')] });
    const p = f.write({
      edges: [edge('a', 'b', { edge_type: 'CAUSED_BY' }), edge('a', 'b', { lag: 'a while' }), edge('a', 'b', { edge_type: 'causes' })],
    });
    expect(p.outcome.refused.map((r) => r.reason)).toEqual(['unknown_edge_type', 'invalid_lag', 'unknown_edge_type']);
  });
  it('stores lags as canonical ISO 8601 durations', () => {
    const f = fixture();
    f.write({ nodes: [node('a'), node('b')] });
    const p = f.write({ edges: [edge('a', 'b', { lag: '36 hours' })] });
    expect(p.edges[0]?.lag).toBe('P1DT12H');
  });
  it('is idempotent by content and refuses the same identity with other content', () => {
    const f = fixture();
    f.write({ nodes: [node('a'), node('b')] });
    f.write({ edges: [edge('a', 'b', { asserted_at: T, confidence: 0.5 })] });
    const again = f.write({ edges: [edge('a', 'b', { asserted_at: T, confidence: 0.5 })] });
    expect(again.outcome.warnings).toEqual([{ id: 'a->b', kind: 'edge', warning: 'already_remembered' }]);
    const changed = f.write({ edges: [edge('a', 'b', { asserted_at: T, confidence: 0.9 })] });
    expect(changed.outcome.refused[0]?.reason).toBe('id_conflict');
    const later = f.write({ edges: [edge('a', 'b', { asserted_at: T + 1, confidence: 0.9 })] });
    expect(later.outcome.accepted).toBe(1);
  });
  it('refuses an edge that sets captured_at', () => {
    const f = fixture();
    f.write({ nodes: [node('a'), node('b')] });
    const p = f.write({ edges: [edge('a', 'b', { sets_captured_at: true })] });
    expect(p.outcome.refused[0]?.reason).toBe('captured_at_not_allowed');
  });
});

describe('write plan: backfill', () => {
  it('stamps the declared instant as known_at and keeps the real capture', () => {
    const f = fixture();
    const declared = T - 30 * DAY;
    const p = f.write({
      backfill: { declared_captured_at: declared, reason: 'import' },
      nodes: [node('a'), node('b')],
      edges: [edge('a', 'b')],
    });
    expect(p.outcome.batch).toMatchObject({ declared_captured_at: declared, reason: 'import', captured_at: f.now() });
    for (const r of [...p.nodes, ...p.edges]) {
      expect(r.known_at).toBe(declared);
      expect(r.captured_at).toBe(f.now());
      expect(r.batch_id).toBe(p.outcome.batch?.id);
    }
  });
  it('records no batch when nothing of the request was written', () => {
    const f = fixture();
    f.write({ nodes: [node('a')] });
    const p = f.write({ backfill: { declared_captured_at: T - DAY, reason: 'x' }, nodes: [node('a')] });
    expect(p.outcome.batch).toBeNull();
  });
});
