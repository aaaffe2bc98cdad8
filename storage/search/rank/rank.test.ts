import { describe, expect, it } from 'vitest';
import { EDGE_TYPES } from '../../types.ts';
import { EDGE_WEIGHT, expansionScore, fuse, withNeighbours } from './rank.ts';

const hits = (...ids: string[]) => ids.map((id, i) => ({ id, seq: i + 1, score: 10 - i }));

describe('reciprocal rank fusion', () => {
  it('ranks an id found by both lists above ids found by one', () => {
    const f = fuse([
      { hits: hits('a', 'b', 'c'), weight: 1 },
      { hits: hits('d', 'c', 'e'), weight: 1 },
    ]);
    expect(f[0]?.id).toBe('c');
    expect(new Set(f.map((x) => x.id))).toEqual(new Set(['a', 'b', 'c', 'd', 'e']));
  });

  it('counts an id once per list (its best row: several versions of one node)', () => {
    const f = fuse([{ hits: [...hits('a', 'b'), { id: 'a', seq: 9, score: 1 }], weight: 1 }]);
    expect(f.map((x) => x.id)).toEqual(['a', 'b']);
    expect(f[0]?.score).toBeCloseTo(1, 9);
  });

  it('weights lists: a heavier list decides ties of rank', () => {
    const f = fuse([
      { hits: hits('a'), weight: 1 },
      { hits: hits('b'), weight: 0.3 },
    ]);
    expect(f.map((x) => x.id)).toEqual(['a', 'b']);
    expect(fuse([])).toEqual([]);
  });
});

describe('neighbour lift', () => {
  const links: Record<string, string[]> = { b: ['c'], c: ['b'], a: ['x'] };
  const visit = (id: string, v: (to: string) => void) => {
    for (const to of links[id] ?? []) v(to);
  };

  it('lifts candidates whose linked blocks also match above an isolated better hit', () => {
    const fused = [
      { id: 'a', score: 1 },
      { id: 'b', score: 0.8 },
      { id: 'c', score: 0.7 },
    ];
    const r = withNeighbours(fused, visit, [0.5, 0]);
    expect(r.map((x) => x.id)).toEqual(['b', 'c', 'a']);
    expect(r[0]?.score).toBeCloseTo(0.8 + 0.5 * 0.7, 9);
    // A neighbour outside the candidates (x) adds nothing; weight 0 keeps the fused order.
    expect(r.find((x) => x.id === 'a')?.score).toBe(1);
    expect(withNeighbours(fused, visit, [0, 0]).map((x) => x.id)).toEqual(['a', 'b', 'c']);
  });

  it('adds candidates two hops away at the second weight, never the candidate itself', () => {
    const chain: Record<string, string[]> = { p: ['q'], q: ['p', 'r'], r: ['q'] };
    const hop = (id: string, v: (to: string) => void) => {
      for (const to of chain[id] ?? []) v(to);
    };
    const r = withNeighbours(
      [
        { id: 'p', score: 0.4 },
        { id: 'q', score: 0 },
        { id: 'r', score: 1 },
      ],
      hop,
      [0.5, 0.25],
    );
    expect(r.find((x) => x.id === 'p')?.score).toBeCloseTo(0.4 + 0.25 * 1, 9);
    expect(r.find((x) => x.id === 'q')?.score).toBeCloseTo(0.5 * (0.4 + 1), 9);
  });
});

describe('expansion scores', () => {
  it('every edge type passes on less than the score it starts from', () => {
    for (const t of EDGE_TYPES) {
      expect(EDGE_WEIGHT[t]).toBeGreaterThan(0);
      expect(expansionScore(1, t)).toBeLessThan(1);
    }
    expect(expansionScore(0.5, 'CAUSES')).toBeGreaterThan(expansionScore(0.5, 'MENTIONS'));
  });
});
