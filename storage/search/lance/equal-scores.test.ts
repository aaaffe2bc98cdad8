// A search's candidates are a function of the rows, not of how LanceDB's table and indexes were built: two
// indexes holding the same rows, one written a few rows at a time (its full-text index and HNSW graph grown
// by maintenance between writes), one written at once in another order and optimized, answer the same,
// with groups of hundreds of equal scores at the cut (near-identical statements) settled by seq. In-memory
// copies are switched off and the vector index starts at 300 rows, so LanceDB answers every query.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rng } from '../../../evals/lib/rng.ts';
import { plainCells } from '../../../test/helpers/random-rows.ts';
import { byNearness, closedCut, inScoreOrder, newestAtCut, type Fetch } from './closed-cut.ts';
import type { Hit, IndexRow, RowFilter } from '../index-row.ts';
import { LanceIndex } from './lance-index.ts';
import { byScore } from '../copies/text-mirror.ts';

const ROWS = 1_800;
const D = 8;
const REGIONS = ['Assam', 'Darjeeling', 'Uji'];
/** A handful of distinct vectors: rows sharing one tie exactly. */
const rand = rng(22);
const VECTORS = Array.from({ length: 5 }, () => Float32Array.from({ length: D }, () => rand() - 0.5));

/** Row i: seqs with gaps (other tenants' rows between), three spaces, texts and vectors from a few variants. */
function row(i: number): IndexRow {
  return {
    ...plainCells(`n${i}`, 3 * i + 7),
    space: `s${i % 3}`,
    text: `the ${REGIONS[i % REGIONS.length]} tea harvest sold at ${10 + (i % 4)} dollars a kilo`,
    vector: VECTORS[i % VECTORS.length]!,
  };
}
const all = Array.from({ length: ROWS }, (_, i) => row(i));

let dir: string;
let grown: LanceIndex;
let bulk: LanceIndex;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'equal-scores-'));
  const open = (name: string) => LanceIndex.open(join(dir, name), D, 0, 0, 0, 0, { indexRows: 300 });
  grown = await open('grown');
  bulk = await open('bulk');
  // Appended in writes of 1 to 97 rows, maintenance after each (the full-text index grows in deltas, the
  // HNSW graph is built at 300 rows and takes the rest as they come).
  for (let at = 0; at < ROWS;) {
    const n = 1 + Math.floor(rand() * 97);
    await grown.add('t', all.slice(at, at + n));
    await grown.maintain('t');
    at += n;
  }
  // Written in two large parts, the later rows first, then optimized once.
  await bulk.add('t', all.slice(ROWS / 2));
  await bulk.add('t', all.slice(0, ROWS / 2));
  await bulk.maintain('t', 'force');
  await grown.maintain('t', 'force');
}, 120_000);

afterAll(async () => {
  await grown.close();
  await bulk.close();
  rmSync(dir, { recursive: true, force: true });
});

const seqs = (hits: readonly Hit[]): number[] => hits.map((h) => h.seq);

const filters: RowFilter[] = [
  { asOf: 5, allKnown: true },
  { asOf: 5 },
  { asOf: 5, space: 's1' },
  { asOf: 5, excludeIds: ['n1796', 'n1793'] },
];

describe('equal scores at the cut', () => {
  it('full text: both indexes answer alike, the tie at the cut settled newest first', async () => {
    let tiesAtCut = 0;
    for (const terms of [['darjeeling', 'tea'], ['sold', '12', 'dollars'], ['harvest'], ['uji', '13']])
      for (const f of filters)
        for (const limit of [1, 10, 40]) {
          const a = await grown.fullText('t', terms, f, limit);
          const b = await bulk.fullText('t', terms, f, limit);
          expect(seqs(b), `${terms.join(' ')} ${JSON.stringify(f)} ${limit}`).toEqual(seqs(a));
          b.forEach((h, i) => expect(h.score).toBeCloseTo(a[i]!.score, 5));
          expect(a).toHaveLength(limit);
          expect(inScoreOrder(a, true)).toEqual(a);
          // The rows after the cut that score as the last kept are all older than it.
          const longer = await bulk.fullText('t', terms, f, limit + 200);
          const last = a.at(-1)!;
          const tiedAfter = longer.slice(limit).filter((h) => h.score === last.score);
          if (tiedAfter.length > 16) tiesAtCut++;
          expect(longer.slice(limit).filter((h) => Math.abs(h.score - last.score) < 1e-9 * last.score).length).toBe(tiedAfter.length);
          for (const h of tiedAfter) expect(h.seq).toBeLessThan(last.seq);
        }
    // Most cases cut through a tie larger than the rows LanceDB was asked for beyond the limit.
    expect(tiesAtCut).toBeGreaterThan(30);
  });

  it('vectors: both indexes answer alike and exactly, the tie at the cut settled oldest first', async () => {
    const cosine = (a: Float32Array, b: Float32Array): number => {
      let d = 0;
      let na = 0;
      let nb = 0;
      for (let i = 0; i < D; i++) {
        d += a[i]! * b[i]!;
        na += a[i]! * a[i]!;
        nb += b[i]! * b[i]!;
      }
      return d / Math.sqrt(na * nb);
    };
    for (const [q, query] of [VECTORS[2]!, Float32Array.from({ length: D }, () => rand() - 0.5)].entries())
      for (const f of filters)
        for (const limit of [1, 10, 40, 400]) {
          const a = await grown.nearest('t', query, f, limit);
          const b = await bulk.nearest('t', query, f, limit);
          expect(seqs(b), `query ${q} ${JSON.stringify(f)} ${limit}`).toEqual(seqs(a));
          const want = all
            .filter((r) => (f.space === undefined || r.space === f.space) && !f.excludeIds?.includes(r.id))
            .map((r) => ({ id: r.id, seq: r.seq, score: cosine(r.vector, query) }))
            .sort((x, y) => y.score - x.score || x.seq - y.seq)
            .slice(0, limit);
          expect(a.map((h) => h.seq)).toEqual(want.map((h) => h.seq));
        }
  });
});

/**
 * A stand-in for LanceDB: the best n rows by score (from a seq on), the rows of the group of equal scores
 * at its cut picked by `pick` (oldest, newest or shuffled), and each score off by a unit in the last place
 * of float32 or not, varying from call to call (as LanceDB's are): the answer must not depend on either.
 */
function fakeFetch(rows: readonly Hit[], pick: (tied: Hit[]) => Hit[]): Fetch & { calls: number } {
  const fetch = async (n: number, fromSeq?: number): Promise<Hit[]> => {
    fetch.calls++;
    const admitted = rows.filter((r) => fromSeq === undefined || r.seq >= fromSeq);
    const sorted = [...admitted].sort((a, b) => b.score - a.score);
    const edge = sorted[n - 1];
    if (!edge) return sorted;
    const above = sorted.filter((r) => r.score > edge.score);
    const tied = pick(sorted.filter((r) => r.score === edge.score));
    const noisy = (h: Hit): Hit => ({ ...h, score: h.score * (1 + 1.2e-7 * (((h.seq + fetch.calls) % 3) - 1)) });
    return [...above, ...tied.slice(0, n - above.length)].map(noisy);
  };
  fetch.calls = 0;
  return fetch;
}

describe('settling a tie at the cut (any order of equal scores)', () => {
  const r = rng(5);
  // 20,000 rows, seqs with gaps; a third score 2, the rest score 1, a few above.
  const rows: Hit[] = Array.from({ length: 20_000 }, (_, i) => ({
    id: `n${i}`,
    seq: 10 + 3 * i + Math.floor(r() * 3),
    score: i % 997 === 0 ? 5 : i % 3 === 0 ? 2 : 1,
  }));
  const picks: [string, (t: Hit[]) => Hit[]][] = [
    ['oldest', (t) => [...t].sort((a, b) => a.seq - b.seq)],
    ['newest', (t) => [...t].sort((a, b) => b.seq - a.seq)],
    [
      'shuffled',
      (t) =>
        t
          .map((h) => ({ h, k: r() }))
          .sort((a, b) => a.k - b.k)
          .map((x) => x.h),
    ],
  ];

  it('full text keeps the newest tied rows, in a few probes', async () => {
    const top = Math.max(...rows.map((h) => h.seq));
    for (const limit of [1, 10, 40, 100]) {
      const want = [...rows].sort(byScore).slice(0, limit);
      for (const [name, pick] of picks) {
        const fetch = fakeFetch(rows, pick);
        expect(seqs(await newestAtCut(fetch, limit, async () => top)), `${name} ${limit}`).toEqual(seqs(want));
        expect(fetch.calls).toBeLessThanOrEqual(16);
      }
    }
  });

  it('vectors keep the oldest tied rows, growing the answer until the tie ends', async () => {
    const small = rows.slice(0, 900);
    for (const limit of [1, 10, 40]) {
      const want = [...small].sort(byNearness).slice(0, limit);
      for (const [name, pick] of picks) expect(seqs(await closedCut(fakeFetch(small, pick), limit, false)), name).toEqual(seqs(want));
    }
  });
});
