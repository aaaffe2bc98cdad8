import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TenantView } from './tenant-view.ts';
import { OPEN_END } from './time.ts';
import { EDGE_TYPES, type EdgeRecord, type EdgeType, type NodeVersion } from './types.ts';
import { evidenceChain, roleOf, WHY_TYPES } from './why.ts';

let seq = 0;
function node(view: TenantView, id: string, over: Partial<NodeVersion> = {}): void {
  const t = over.asserted_at ?? 100;
  view.addNode({
    seq: ++seq, tenant: 't', id, space: 's', kind: 'claim', statement: id, category: null, payload: '{}', asserted_at: t,
    valid_from: t, valid_to: OPEN_END, captured_at: 10, known_at: 10, batch_id: null, fact_key: null, fact_value: null,
    hash: `n${seq}`, ...over,
  });
}
function edge(view: TenantView, source_id: string, edge_type: EdgeType, target_id: string, over: Partial<EdgeRecord> = {}): void {
  view.addEdge({
    seq: ++seq, tenant: 't', source_id, target_id, edge_type, confidence: null, lag: null, mechanism: null, space: 's',
    asserted_at: 100, valid_from: 100, valid_to: OPEN_END, captured_at: 10, known_at: 10, batch_id: null, hash: `e${seq}`, ...over,
  });
}

const ROLE_TABLE: [EdgeType, string, string][] = [
  // type, role of B walked from A (A -type-> B), role of A walked from B
  ['CAUSES', 'effect', 'cause'],
  ['CONTRIBUTING_FACTOR', 'contributed_effect', 'contributing_cause'],
  ['TRIGGERS', 'triggered', 'trigger'],
  ['PREVENTS', 'prevented', 'preventer'],
  ['SUPPORTS', 'supported', 'support'],
  ['CONTRADICTS', 'contradicted', 'contradiction'],
  ['QUALIFIES', 'qualified', 'qualification'],
  ['SUPERSEDES', 'predecessor', 'successor'],
  ['RESTATES', 'restated', 'restatement'],
  ['CONCURRENT_SIGNAL', 'concurrent', 'concurrent'],
];

describe('why: roles by edge type and direction', () => {
  for (const [type, forward, backward] of ROLE_TABLE) {
    it(type, () => {
      const view = new TenantView('t');
      node(view, 'A');
      node(view, 'B');
      edge(view, 'A', type, 'B');
      const fromA = evidenceChain(view, 'A', { asOf: 10, depth: 3 }).chain;
      const fromB = evidenceChain(view, 'B', { asOf: 10, depth: 3 }).chain;
      expect(fromA.find((l) => l.node.id === 'A')?.role).toBe('subject');
      expect(fromA.find((l) => l.node.id === 'B')).toMatchObject({ role: forward, via: type, depth: 1, path: ['A', 'B'] });
      expect(fromB.find((l) => l.node.id === 'A')).toMatchObject({ role: backward, via: type, depth: 1, path: ['B', 'A'] });
    });
  }
  it('general edges are never walked', () => {
    const view = new TenantView('t');
    node(view, 'A');
    for (const type of ['DEPENDS_ON', 'DERIVED_FROM', 'MENTIONS'] as const) {
      node(view, type);
      edge(view, 'A', type, type);
      expect(() => roleOf(type, 'out')).toThrow();
    }
    expect(evidenceChain(view, 'A', { asOf: 10, depth: 3 }).chain.map((l) => l.node.id)).toEqual(['A']);
    expect(WHY_TYPES.size).toBe(EDGE_TYPES.length - 3);
  });
});

describe('why: walk', () => {
  it('a cycle ends; each node appears once at its shortest depth', () => {
    const view = new TenantView('t');
    for (const id of ['a', 'b', 'c']) node(view, id);
    edge(view, 'a', 'CAUSES', 'b');
    edge(view, 'b', 'CAUSES', 'c');
    edge(view, 'c', 'CAUSES', 'a');
    const chain = evidenceChain(view, 'a', { asOf: 10, depth: 10 }).chain;
    expect(chain.map((l) => [l.node.id, l.depth]).sort()).toEqual([['a', 0], ['b', 1], ['c', 1]]);
    expect(chain.find((l) => l.node.id === 'c')?.role).toBe('cause');
  });
  it('orders by asserted_at, ties by depth then id', () => {
    const view = new TenantView('t');
    node(view, 's', { asserted_at: 200 });
    node(view, 'z', { asserted_at: 50 });
    node(view, 'y', { asserted_at: 200 });
    node(view, 'x', { asserted_at: 200 });
    for (const id of ['z', 'y', 'x']) edge(view, id, 'SUPPORTS', 's');
    expect(evidenceChain(view, 's', { asOf: 10, depth: 1 }).chain.map((l) => l.node.id)).toEqual(['z', 's', 'x', 'y']);
  });
  it('depth 0 gives the subject alone; hides later nodes and edges and counts them', () => {
    const view = new TenantView('t');
    node(view, 'a');
    node(view, 'b');
    node(view, 'late', { known_at: 50 });
    edge(view, 'a', 'CAUSES', 'b');
    edge(view, 'b', 'CAUSES', 'late', { known_at: 50 });
    edge(view, 'a', 'TRIGGERS', 'b', { known_at: 60, asserted_at: 101 });
    expect(evidenceChain(view, 'a', { asOf: 10, depth: 0 }).chain).toHaveLength(1);
    const early = evidenceChain(view, 'a', { asOf: 10, depth: 3 });
    expect(early.chain.map((l) => l.node.id)).toEqual(['a', 'b']);
    expect(early.masked).toEqual({ node: 1, edge: 2 });
    expect(evidenceChain(view, 'a', { asOf: 60, depth: 3 }).masked).toEqual({ node: 0, edge: 0 });
    // At depth 1 `late` is out of reach either way; only the later a->b edge was hidden.
    expect(evidenceChain(view, 'a', { asOf: 10, depth: 1 }).masked).toEqual({ node: 0, edge: 1 });
  });
  it('empty chain: not_yet, absent, and absent when known but not in force at valid_at', () => {
    const view = new TenantView('t');
    node(view, 'a', { known_at: 50, asserted_at: 100, valid_to: 200 });
    expect(evidenceChain(view, 'a', { asOf: 10, depth: 3 })).toMatchObject({ chain: [], reason: 'not_yet', masked: { node: 1 } });
    expect(evidenceChain(view, 'nope', { asOf: 10, depth: 3 })).toMatchObject({ chain: [], reason: 'absent' });
    expect(evidenceChain(view, 'a', { asOf: 60, depth: 3, validAt: 250 })).toMatchObject({ chain: [], reason: 'absent' });
    expect(evidenceChain(view, 'a', { asOf: 60, depth: 3, space: 'other' })).toMatchObject({ chain: [], reason: 'absent' });
  });
  it('valid_at hides edges and nodes not in force; space confines the walk', () => {
    const view = new TenantView('t');
    node(view, 'a');
    node(view, 'b', { space: 'other' });
    node(view, 'c', { asserted_at: 100, valid_to: 150 });
    edge(view, 'a', 'CAUSES', 'b', { space: 'other' });
    edge(view, 'a', 'CAUSES', 'c');
    expect(evidenceChain(view, 'a', { asOf: 10, depth: 3 }).chain.map((l) => l.node.id).sort()).toEqual(['a', 'b', 'c']);
    expect(evidenceChain(view, 'a', { asOf: 10, depth: 3, validAt: 160 }).chain.map((l) => l.node.id).sort()).toEqual(['a', 'b']);
    expect(evidenceChain(view, 'a', { asOf: 10, depth: 3, space: 's' }).chain.map((l) => l.node.id).sort()).toEqual(['a', 'c']);
  });
});

// ---- property: chains agree with a breadth-first reference over the visible edges ---------------------

interface Graph { nodes: { known: number }[]; edges: { s: number; t: number; type: EdgeType; known: number }[] }

const graphArb: fc.Arbitrary<Graph> = fc.integer({ min: 1, max: 14 }).chain((n) => fc.record({
  nodes: fc.array(fc.record({ known: fc.integer({ min: 0, max: 4 }) }), { minLength: n, maxLength: n }),
  edges: fc.array(fc.record({
    s: fc.integer({ min: 0, max: n - 1 }), t: fc.integer({ min: 0, max: n - 1 }),
    type: fc.constantFrom(...EDGE_TYPES), known: fc.integer({ min: 0, max: 4 }),
  }), { maxLength: 30 }),
}));

/** Plain BFS distances over the undirected graph of visible, followed edges. */
function bfsDepths(g: Graph, start: number, asOf: number, maxDepth: number): Map<number, number> {
  const dist = new Map<number, number>();
  if ((g.nodes[start]?.known ?? Infinity) > asOf) return dist;
  dist.set(start, 0);
  const queue = [start];
  while (queue.length > 0) {
    const at = queue.shift() as number;
    const d = dist.get(at) as number;
    if (d === maxDepth) continue;
    for (const e of g.edges) {
      if (e.known > asOf || !WHY_TYPES.has(e.type)) continue;
      const other = e.s === at ? e.t : e.t === at ? e.s : -1;
      if (other < 0 || dist.has(other) || (g.nodes[other]?.known ?? Infinity) > asOf) continue;
      dist.set(other, d + 1);
      queue.push(other);
    }
  }
  return dist;
}

describe('why: property', () => {
  it('chains agree with a BFS reference at several as_of instants', () => {
    fc.assert(fc.property(graphArb, fc.integer({ min: 0, max: 4 }), (g, depth) => {
      const view = new TenantView('t');
      g.nodes.forEach((n, i) => node(view, `n${i}`, { known_at: n.known, asserted_at: 100 + (i % 3) }));
      for (const e of g.edges) edge(view, `n${e.s}`, e.type, `n${e.t}`, { known_at: e.known });
      for (const asOf of [0, 1, 2, 3, 4]) {
        for (let start = 0; start < Math.min(g.nodes.length, 4); start++) {
          const got = evidenceChain(view, `n${start}`, { asOf, depth });
          const want = bfsDepths(g, start, asOf, depth);
          expect(new Map(got.chain.map((l) => [Number(l.node.id.slice(1)), l.depth]))).toEqual(want);
          expect(got.reason).toBe(want.size === 0 ? 'not_yet' : undefined);
          for (const l of got.chain) {
            // The path is a real walk of visible edges, one hop per depth, and the role names its last hop.
            expect(l.path).toHaveLength(l.depth + 1);
            expect(l.path[0]).toBe(`n${start}`);
            if (l.depth === 0) { expect(l.role).toBe('subject'); continue; }
            const prev = l.path[l.depth - 1], self = l.path[l.depth];
            expect(self).toBe(l.node.id);
            const hop = g.edges.find((e) => e.known <= asOf && e.type === l.via && (
              (`n${e.s}` === prev && `n${e.t}` === self && roleOf(e.type, 'out') === l.role) ||
              (`n${e.t}` === prev && `n${e.s}` === self && roleOf(e.type, 'in') === l.role)));
            expect(hop).toBeDefined();
          }
          const times = got.chain.map((l) => l.node.asserted_at);
          expect(times).toEqual([...times].sort((a, b) => a - b));
        }
      }
    }), { numRuns: 300 });
  });
});
