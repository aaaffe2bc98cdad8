import { describe, expect, it } from 'vitest';
import type { BundleEdge, BundleNode, Manifest } from '../storage/bundle/rows.ts';
import { planPush } from './sync-plan.ts';

const manifest: Manifest = {
  bundle_version: 1,
  namespace: { tenant: 't' },
  category: null,
  source: 'svc/test',
  exported_as_of: '2024-12-31T00:00:00.000000Z',
  declarations: { facts: [], batches: [], embedding: null },
  counts: { nodes: 0, edges: 0, resolutions: 0 },
};
const batch = { id: 'b1', declared_captured_at: '2023-01-01T00:00:00.000000Z', reason: 'import' };

const node = (id: string, space: string, known: string, batched = false): BundleNode => ({
  id,
  kind: 'claim',
  space,
  statement: id,
  category: null,
  payload: {},
  asserted_at: known,
  valid_from: known,
  valid_to: null,
  known_at: batched ? batch.declared_captured_at : known,
  attestation: { captured_at: known, batch: batched ? batch : null },
  fact_key: null,
  fact_value: null,
});
const edge = (s: string, t: string, space: string, known: string): BundleEdge => ({
  source_id: s,
  target_id: t,
  edge_type: 'CAUSES',
  confidence: null,
  lag: null,
  mechanism: null,
  space,
  asserted_at: known,
  valid_from: known,
  valid_to: null,
  known_at: known,
  attestation: { captured_at: known, batch: null },
});

const T1 = '2024-05-01T08:00:00.000000Z',
  T2 = '2024-05-01T17:00:00.000000Z',
  T3 = '2024-05-02T09:00:00.000000Z';

describe('push plan', () => {
  it('exact: one batch per backfill batch and per (space, knowledge instant), in order of the declared instant', () => {
    const plan = planPush(manifest, [node('a', 's', T2), node('b', 's', T1), node('c', 'z', T1), node('old', 's', T3, true)], [], {
      granularity: 'exact',
      maxRows: 100,
      maxBytes: 1e6,
    });
    expect(plan.requests.map((r) => [r.group.space, r.group.declared, r.nodes.map((n) => n.id)])).toEqual([
      ['s', Date.UTC(2023, 0, 1) * 1000, ['old']],
      ['s', Date.UTC(2024, 4, 1, 8) * 1000, ['b']],
      ['z', Date.UTC(2024, 4, 1, 8) * 1000, ['c']],
      ['s', Date.UTC(2024, 4, 1, 17) * 1000, ['a']],
    ]);
    expect(plan.requests[0]?.group.reason).toBe('import');
    expect(plan.batches).toBe(4);
  });

  it('day: one batch per space and UTC day, declared at the latest knowledge instant of that day', () => {
    const plan = planPush(manifest, [node('a', 's', T1), node('b', 's', T2), node('c', 's', T3)], [edge('a', 'b', 's', T1)], {
      granularity: 'day',
      maxRows: 100,
      maxBytes: 1e6,
    });
    expect(plan.requests.map((r) => [r.group.declared, r.nodes.length, r.edges.length])).toEqual([
      [Date.UTC(2024, 4, 1, 17) * 1000, 2, 1],
      [Date.UTC(2024, 4, 2, 9) * 1000, 1, 0],
    ]);
  });

  it('nodes before edges: an edge whose end is sent later waits, under its own declaration', () => {
    const plan = planPush(manifest, [node('late', 's', T3)], [edge('x', 'late', 's', T1), edge('late', 'late', 's', T3)], {
      granularity: 'exact',
      maxRows: 100,
      maxBytes: 1e6,
    });
    expect(plan.requests.map((r) => [r.group.declared, r.nodes.length, r.edges.map((e) => e.source_id)])).toEqual([
      [Date.UTC(2024, 4, 2, 9) * 1000, 1, ['late']],
      [Date.UTC(2024, 4, 1, 8) * 1000, 0, ['x']],
    ]);
  });

  it('skips what the target holds and splits requests by rows and by bytes', () => {
    const nodes = Array.from({ length: 7 }, (_, i) => node(`n${i}`, 's', T1));
    const holds = { node: (n: BundleNode) => n.id === 'n0', edge: () => false, nodeId: (id: string) => id === 'n0' };
    const byRows = planPush(manifest, nodes, [], { granularity: 'exact', maxRows: 3, maxBytes: 1e6, holds });
    expect(byRows.skipped).toBe(1);
    expect(byRows.requests.map((r) => r.nodes.length)).toEqual([3, 3]);
    const byBytes = planPush(manifest, nodes, [], { granularity: 'exact', maxRows: 100, maxBytes: 400 });
    expect(byBytes.requests.length).toBeGreaterThan(1);
    expect(byBytes.requests.every((r) => JSON.stringify(r.nodes).length <= 400)).toBe(true);
    expect(byBytes.total).toBe(7);
  });

  it('writes rows with their times explicit and without server-set fields', () => {
    const plan = planPush(manifest, [{ ...node('a', 's', T1), fact_key: 'k', fact_value: 0 }], [], {
      granularity: 'exact',
      maxRows: 10,
      maxBytes: 1e6,
    });
    const w = plan.requests[0]?.nodes[0];
    expect(w).toEqual({
      id: 'a',
      kind: 'claim',
      statement: 'a',
      category: null,
      payload: {},
      asserted_at: T1,
      valid_from: T1,
      valid_to: null,
      fact_key: 'k',
      fact_value: 0,
    });
  });
});
