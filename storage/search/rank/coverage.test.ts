// Query-term coverage on a small hand-made ledger: the words of a block count fully, those of the blocks
// it is read with count half, and a block naming every part of the question outranks one that repeats a
// single word; a word related to a query word (by the word vectors) counts in part, unless the query word
// is a name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempLedger, type TempLedger } from '../../../test/helpers/temp-ledger.ts';
import type { Ledger } from '../../log/ledger.ts';
import { wvec } from '../../../test/helpers/word-vectors-file.ts';
import { CONTEXT_COVERAGE, coverage, queryStems, RELATED_FLOOR, relatedQuery, withCoverage } from './coverage.ts';
import { WordVectors } from '../embed/word-vectors.ts';

let temp: TempLedger;
let ledger: Ledger;

beforeAll(async () => {
  temp = await tempLedger('coverage');
  ledger = temp.ledger;
  // Resident, as a read without a space makes it: the test reads the tenant's view.
  await ledger.load('t');
  await ledger.write('t', {
    space: 's',
    nodes: [
      { id: 'q', kind: 'turn', statement: 'Caroline: Did you take the pottery class with your kids?' },
      { id: 'a', kind: 'turn', statement: 'Melanie: Yes, we loved it.' },
      { id: 'p', kind: 'turn', statement: 'Melanie: Pottery, pottery, pottery all day.' },
      { id: 'all', kind: 'turn', statement: 'Melanie: The kids and I took a pottery class.' },
      { id: 'sub', kind: 'turn', statement: 'Classrooms of potters, taken by kidsplay.' },
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

  it('counts whole words only: a query stem inside a longer word of the block is not found', () => {
    const view = ledger.view('t');
    // "class", "pott", "take", "kids" each begin a word of the block; none is one of its words.
    expect(coverage(view, node('sub'), query)).toBe(0);
    // Asked twice, the kept stems give the same answer.
    expect(coverage(view, node('sub'), queryStems('classrooms kidsplay', even))).toBe(1);
    expect(coverage(view, node('sub'), query)).toBe(0);
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

describe('related words', () => {
  // "drew" is close to "drawing" (cosine 0.88); "caroline" is close to "melanie" (0.95), as names are.
  const vectors = WordVectors.parse(
    wvec([
      ['drawing', [127, 0, 0]],
      ['drew', [110, 60, 0]],
      ['melanie', [0, 127, 0]],
      ['caroline', [0, 120, 40]],
      ['weather', [0, 0, 127]],
    ]),
  );
  const question = 'What did Melanie say about the drawing?';

  beforeAll(async () => {
    await ledger.load('related');
    await ledger.write('related', {
      space: 's',
      nodes: [
        { id: 'drew', kind: 'turn', statement: 'Caroline: I drew it last week.' },
        { id: 'other', kind: 'turn', statement: 'Caroline: Nice weather today.' },
      ],
      edges: [],
    });
  });

  const version = (id: string) => ledger.view('related').versionsOf(id)[0]!;

  it('counts a related word for a query word the block lacks, scaled from the floor up', () => {
    const q = queryStems(question, even);
    const cos = 110 / Math.hypot(110, 60);
    expect(coverage(ledger.view('related'), version('drew'), q)).toBe(0);
    expect(coverage(ledger.view('related'), version('drew'), q, relatedQuery(question, vectors))).toBeCloseTo(
      (cos - RELATED_FLOOR) / (1 - RELATED_FLOOR) / q.size,
    );
  });

  it('gives a name no credit for another name', () => {
    const q = queryStems(question, even);
    expect(coverage(ledger.view('related'), version('other'), q, relatedQuery(question, vectors))).toBe(0);
  });

  it('lifts the block saying it in other words above one that led on nothing the question asks', () => {
    const fused = [
      { id: 'other', score: 0.5 },
      { id: 'drew', score: 0.45 },
    ];
    const rank = (words: WordVectors | null) =>
      withCoverage(fused, ledger.view('related'), version, question, even, 10, words).map((r) => r.id);
    expect(rank(null)).toEqual(['other', 'drew']);
    expect(rank(vectors)).toEqual(['drew', 'other']);
  });
});
