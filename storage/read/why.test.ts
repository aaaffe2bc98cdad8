import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TenantView } from './tenant-view.ts';
import { OPEN_END } from '../time.ts';
import { EDGE_TYPES, type EdgeRecord, type EdgeType, type NodeVersion } from '../types.ts';
import { evidenceChain, roleOf, WHY_TYPES } from './why.ts';

let seq = 0;
function node(view: TenantView, id: string, over: Partial<NodeVersion> = {}): void {
  const t = over.asserted_at ?? 100;
  view.addNode({
    seq: ++seq,
    tseq: seq,
    tenant: 't',
    id,
    space: 's',
    kind: 'claim',
    statement: id,
    category: null,
    payload: '{}',
    asserted_at: t,
    valid_from: t,
    valid_to: OPEN_END,
    captured_at: 10,
    known_at: 10,
    batch_id: null,
    fact_key: null,
    fact_value: null,
    hash: `n${seq}`,
    ...over,
  });
}
function edge(view: TenantView, source_id: string, edge_type: EdgeType, target_id: string, over: Partial<EdgeRecord> = {}): void {
  view.addEdge({
    seq: ++seq,
    tseq: seq,
    tenant: 't',
    source_id,
    target_id,
    edge_type,
    confidence: null,
    lag: null,
    mechanism: null,
    space: 's',
    asserted_at: 100,
    valid_from: 100,
    valid_to: OPEN_END,
    captured_at: 10,
    known_at: 10,
    batch_id: null,
    hash: `e${seq}`,
    ...over,
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
    expect(chain.map((l) => [l.node.id, l.depth]).sort()).toEqual([
      ['a', 0],
      ['b', 1],
      ['c', 1],
    ]);
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
    // A later version, in force at valid_at but learned after as_of: the block there is not yet known.
    node(view, 'a', { known_at: 70, asserted_at: 200, valid_from: 200 });
    expect(evidenceChain(view, 'a', { asOf: 60, depth: 3, validAt: 250 })).toMatchObject({ chain: [], reason: 'not_yet' });
    expect(evidenceChain(view, 'a', { asOf: 70, depth: 3, validAt: 250 }).chain).toHaveLength(1);
  });
  it('valid_at hides edges and nodes not in force; space confines the walk', () => {
    const view = new TenantView('t');
    node(view, 'a');
    node(view, 'b', { space: 'other' });
    node(view, 'c', { asserted_at: 100, valid_to: 150 });
    edge(view, 'a', 'CAUSES', 'b', { space: 'other' });
    edge(view, 'a', 'CAUSES', 'c');
    expect(
      evidenceChain(view, 'a', { asOf: 10, depth: 3 })
        .chain.map((l) => l.node.id)
        .sort(),
    ).toEqual(['a', 'b', 'c']);
    expect(
      evidenceChain(view, 'a', { asOf: 10, depth: 3, validAt: 160 })
        .chain.map((l) => l.node.id)
        .sort(),
    ).toEqual(['a', 'b']);
    expect(
      evidenceChain(view, 'a', { asOf: 10, depth: 3, space: 's' })
        .chain.map((l) => l.node.id)
        .sort(),
    ).toEqual(['a', 'c']);
  });
});

// ---- property: chains agree with a breadth-first reference over the visible edges ---------------------

interface Timed {
  known: number;
  from: number;
  to: number | null;
  space: 's' | 'u';
}
interface Graph {
  nodes: Timed[];
  edges: (Timed & { s: number; t: number; type: EdgeType })[];
}

const timedArb = {
  known: fc.integer({ min: 0, max: 4 }),
  from: fc.integer({ min: 0, max: 4 }),
  to: fc.option(fc.integer({ min: 1, max: 6 }), { nil: null }),
  space: fc.constantFrom<'s' | 'u'>('s', 's', 'u'),
};

const graphArb: fc.Arbitrary<Graph> = fc.integer({ min: 1, max: 14 }).chain((n) =>
  fc.record({
    nodes: fc.array(fc.record(timedArb), { minLength: n, maxLength: n }),
    edges: fc.array(
      fc.record({
        ...timedArb,
        s: fc.integer({ min: 0, max: n - 1 }),
        t: fc.integer({ min: 0, max: n - 1 }),
        type: fc.constantFrom(...EDGE_TYPES),
      }),
      { maxLength: 30 },
    ),
  }),
);

interface Read {
  asOf: number;
  validAt: number | undefined;
  space: 's' | 'u' | undefined;
}

// Intervals are [from, from + to) when `to` is set, asserted at `from`.
const shows = (x: Timed, r: Read): boolean =>
  x.known <= r.asOf &&
  (r.space === undefined || x.space === r.space) &&
  (r.validAt === undefined || (x.from <= r.validAt && (x.to === null || r.validAt < x.from + x.to)));

/** Plain BFS distances over the undirected graph of visible, followed edges and visible nodes. */
function bfsDepths(g: Graph, start: number, r: Read, maxDepth: number): Map<number, number> {
  const dist = new Map<number, number>();
  const node = (i: number): boolean => {
    const n = g.nodes[i];
    return n !== undefined && shows(n, r);
  };
  if (!node(start)) return dist;
  dist.set(start, 0);
  const queue = [start];
  while (queue.length > 0) {
    const at = queue.shift() as number;
    const d = dist.get(at) as number;
    if (d === maxDepth) continue;
    for (const e of g.edges) {
      if (!shows(e, r) || !WHY_TYPES.has(e.type)) continue;
      const other = e.s === at ? e.t : e.t === at ? e.s : -1;
      if (other < 0 || dist.has(other) || !node(other)) continue;
      dist.set(other, d + 1);
      queue.push(other);
    }
  }
  return dist;
}

/** What as_of hid: the reference's reach over everything minus its reach at as_of, and the later edges within it. */
function maskedReference(g: Graph, start: number, r: Read, depth: number): { node: number; edge: number } {
  const full = bfsDepths(g, start, { ...r, asOf: Infinity }, depth);
  const shown = bfsDepths(g, start, r, depth);
  const edges = g.edges.filter(
    (e) =>
      WHY_TYPES.has(e.type) &&
      shows(e, { ...r, asOf: Infinity }) &&
      e.known > r.asOf &&
      [e.s, e.t].some((i) => (full.get(i) ?? depth) < depth),
  );
  return { node: [...full.keys()].filter((k) => !shown.has(k)).length, edge: edges.length };
}

describe('why: property', () => {
  it('chains and masked counts agree with a BFS reference at several as_of, valid_at and space', () => {
    fc.assert(
      fc.property(graphArb, fc.integer({ min: 0, max: 4 }), (g, depth) => {
        const view = new TenantView('t');
        const valid = (x: Timed) => ({
          asserted_at: x.from,
          valid_from: x.from,
          valid_to: x.to === null ? OPEN_END : x.from + x.to,
          known_at: x.known,
          space: x.space,
        });
        g.nodes.forEach((n, i) => node(view, `n${i}`, valid(n)));
        for (const e of g.edges) edge(view, `n${e.s}`, e.type, `n${e.t}`, valid(e));
        for (const asOf of [0, 2, 4]) {
          for (const validAt of [undefined, 1, 3]) {
            for (const space of [undefined, 's'] as const) {
              const read: Read = { asOf, validAt, space };
              for (let start = 0; start < Math.min(g.nodes.length, 3); start++) {
                const got = evidenceChain(view, `n${start}`, { asOf, validAt, space, depth });
                const want = bfsDepths(g, start, read, depth);
                expect(new Map(got.chain.map((l) => [Number(l.node.id.slice(1)), l.depth]))).toEqual(want);
                expect(got.masked).toEqual(maskedReference(g, start, read, depth));
                // Empty: not_yet when the subject would be shown but for as_of, else absent.
                const subject = g.nodes[start] as Timed;
                if (want.size === 0) expect(got.reason).toBe(shows(subject, { ...read, asOf: Infinity }) ? 'not_yet' : 'absent');
                else expect(got.reason).toBeUndefined();
                for (const l of got.chain) {
                  // The path is a real walk of visible edges, one hop per depth, and the role names its last hop.
                  expect(l.path).toHaveLength(l.depth + 1);
                  expect(l.path[0]).toBe(`n${start}`);
                  if (l.depth === 0) {
                    expect(l.role).toBe('subject');
                    continue;
                  }
                  const prev = l.path[l.depth - 1],
                    self = l.path[l.depth];
                  expect(self).toBe(l.node.id);
                  const hop = g.edges.find(
                    (e) =>
                      shows(e, read) &&
                      e.type === l.via &&
                      ((`n${e.s}` === prev && `n${e.t}` === self && roleOf(e.type, 'out') === l.role) ||
                        (`n${e.t}` === prev && `n${e.s}` === self && roleOf(e.type, 'in') === l.role)),
                  );
                  expect(hop).toBeDefined();
                }
                const times = got.chain.map((l) => l.node.asserted_at);
                expect(times).toEqual([...times].sort((a, b) => a - b));
              }
            }
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});
