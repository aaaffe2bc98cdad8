// CONTRACT: search never ranks a superseded direct hit above a hit that supersedes it, for every pair
// not on a SUPERSEDES cycle, whatever the scores and however the edges are drawn.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NodeVersion } from '../../types.ts';
import { successorsFirst, type SearchResult } from '../search.ts';

const hit = (id: string, score: number): SearchResult => ({
  node: { id } as NodeVersion,
  score,
  match: 'direct',
  depth: 0,
  path: [id],
  via: null,
});

function ranked(scores: Record<string, number>, edges: [string, string][]): string[] {
  const direct = Object.entries(scores).map(([id, s]) => hit(id, s));
  // [successor, superseded]: successor SUPERSEDES superseded.
  successorsFirst(direct, (id) => edges.filter(([, old]) => old === id).map(([s]) => s));
  return direct.map((d) => d.node.id);
}

describe('successorsFirst', () => {
  it('puts y after p when p sits on a cycle with q (p SUPERSEDES y, p SUPERSEDES q, q SUPERSEDES p)', () => {
    const order = ranked({ y: 1, p: 1, q: 1 }, [
      ['p', 'y'],
      ['p', 'q'],
      ['q', 'p'],
    ]);
    expect(order.indexOf('y')).toBeGreaterThan(order.indexOf('p'));
  });

  it('holds for every pair not on a cycle, on any graph and any scores', () => {
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: ids.length, maxLength: ids.length }),
        fc.array(fc.tuple(fc.constantFrom(...ids), fc.constantFrom(...ids)), { maxLength: 12 }),
        (scores, drawn) => {
          const edges = drawn.filter(([s, o]) => s !== o);
          const order = ranked(Object.fromEntries(ids.map((id, i) => [id, scores[i]!])), edges);
          const reaches = (from: string, to: string): boolean => {
            const seen = new Set<string>();
            const stack = [from];
            for (let at = stack.pop(); at !== undefined; at = stack.pop())
              for (const [s, o] of edges)
                if (o === at && !seen.has(s)) {
                  if (s === to) return true;
                  seen.add(s);
                  stack.push(s);
                }
            return false;
          };
          for (const [successor, old] of edges) {
            const cycle = reaches(old, successor) && reaches(successor, old);
            if (!cycle) expect(order.indexOf(old), `${successor} supersedes ${old}`).toBeGreaterThan(order.indexOf(successor));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
