// Query-term coverage on a small hand-made ledger: the words of a block count fully, those of the blocks
// it is read with count half, and a block naming every part of the question outranks one that repeats a
// single word.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempLedger, type TempLedger } from '../../test/helpers/temp-ledger.ts';
import type { Ledger } from '../ledger.ts';
import { CONTEXT_COVERAGE, coverage, queryStems, withCoverage } from './coverage.ts';

let temp: TempLedger;
let ledger: Ledger;

beforeAll(async () => {
  temp = await tempLedger('coverage');
  ledger = temp.ledger;
  await ledger.write('t', {
    space: 's',
    nodes: [
      { id: 'q', kind: 'turn', statement: 'Caroline: Did you take the pottery class with your kids?' },
      { id: 'a', kind: 'turn', statement: 'Melanie: Yes, we loved it.' },
      { id: 'p', kind: 'turn', statement: 'Melanie: Pottery, pottery, pottery all day.' },
      { id: 'all', kind: 'turn', statement: 'Melanie: The kids and I took a pottery class.' },
    ],
    edges: [{ source_id: 'q', target_id: 'a', edge_type: 'CONCURRENT_SIGNAL' }],
  });
});

afterAll(() => temp.remove());

const even = (): number => 1;
const node = (id: string) => ledger.view('t').versionsOf(id)[0]!;

describe('query-term coverage', () => {
  const query = queryStems('Which pottery class did Melanie take with her kids?', even);

  it('stems the query words and drops function words', () => {
    expect([...query.keys()].sort()).toEqual(['class', 'kids', 'melanie', 'pottery', 'take']);
  });

  it('counts a block’s own words fully and its linked context at a lower share', () => {
    const view = ledger.view('t');
    expect(coverage(view, node('all'), query)).toBeCloseTo(4 / 5);
    // "melanie" is its own; "pottery", "class", "take", "kids" come from the turn it answers.
    expect(coverage(view, node('a'), query)).toBeCloseTo((1 + 4 * CONTEXT_COVERAGE) / 5);
    expect(coverage(view, node('p'), query)).toBeCloseTo(2 / 5);
  });

  it('weighs rare words above common ones', () => {
    const rare = queryStems('pottery class', (w) => (w === 'pottery' ? 1 : 0.1));
    expect(coverage(ledger.view('t'), node('p'), rare)).toBeCloseTo(1 / 1.1);
  });

  it('lifts the block covering every part of the question above one that led on a single word', () => {
    const view = ledger.view('t');
    const fused = [
      { id: 'p', score: 0.5 },
      { id: 'all', score: 0.45 },
      { id: 'gone', score: 2 },
    ];
    const ranked = withCoverage(
      fused,
      view,
      (id) => (id === 'gone' ? null : node(id)),
      'Which pottery class did Melanie take with her kids?',
      even,
      10,
    );
    expect(ranked.map((r) => r.id)).toEqual(['gone', 'all', 'p']);
    expect(ranked[0]!.score).toBe(2);
  });
});
