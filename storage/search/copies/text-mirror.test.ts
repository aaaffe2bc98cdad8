// The in-memory full text must answer as LanceDB's BM25 query does: the same rows, in the same order
// (equal scores newest first in both), scores equal up to float rounding, for every prefilter, with rows
// in the index and rows appended since its last update. Only where scores are within float rounding of
// each other (LanceDB may tie or swap them) may the order differ. Two indexes get the same writes and
// updates, one with the copies switched off.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rng } from '../../../evals/lib/rng.ts';
import { plainCells, randomCells } from '../../../test/helpers/random-rows.ts';
import { LanceIndex } from '../lance/lance-index.ts';
import type { Hit, IndexRow, RowFilter } from '../index-row.ts';
import { CUT_SLACK, TenantText, TokenCache } from './text-mirror.ts';

let dir: string;
let plain: LanceIndex;
let mirrored: LanceIndex;
/** The same corpora on every run. */
const rand = rng(11);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

// Stems shared by inflections, stop words (the tokenizer's, removed after stemming), case, punctuation,
// accents folded to ASCII, digits, apostrophes and a token too long to index.
const WORDS = (
  'run running runs runner ran paint painted painting paints painter happy happiness happily hike hiking hiked ' +
  'the a and of to in is it was this that these there their they with will not no or on as at be but by for if into such ' +
  'other so about same can t s me my we our just very ' +
  'Caroline caroline CAROLINE Melanie melanie LGBTQ lgbtq support group adoption agency pottery class camping beach ' +
  'café cafe naïve naive École ecole 2023 3rd x2 100 ' +
  "don't it's I'm Caroline's sunset, sunrise. (garden) \"book\" well-being self-care — !? " +
  'supercalifragilisticexpialidociousnessandmore'
).split(' ');
const QUERY_WORDS = WORDS.filter((w) => /^[a-z0-9]+$/i.test(w));
const text = (): string => Array.from({ length: 1 + Math.floor(rand() * 40) }, () => pick(WORDS)).join(pick([' ', ' ', '  ', '\n']));
// A few texts repeat, so equal scores occur.
const REPEATED = ['Caroline went hiking at the beach', 'painting class painting', 'the and of'];

function rows(from: number, n: number): IndexRow[] {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return {
      ...randomCells(rand, `n${i % 150}`, i + 1), // several versions of one node
      text: rand() < 0.05 ? pick(REPEATED) : text(),
      vector: new Float32Array([1, 0, 0, 0]),
    };
  });
}

function filter(): RowFilter {
  const f: RowFilter = { asOf: 1000 + Math.floor(rand() * 120), allKnown: rand() < 0.4 };
  if (rand() < 0.3) f.validAt = 1000 + Math.floor(rand() * 100);
  if (rand() < 0.3) f.space = pick(['a', 'b']);
  if (rand() < 0.2) f.kind = pick(['claim', 'turn']);
  if (rand() < 0.2) f.category = pick(['x', 'y']);
  if (rand() < 0.2) f.asserted = { from: 1020, to: 1070 };
  if (rand() < 0.2) f.excludeIds = ['n1', 'n2', 'n3', 'n40'];
  if (rand() < 0.1) f.onlyIds = ['n4', 'n5', 'n6', 'n7', 'n8', 'n9'];
  if (rand() < 0.1) f.hidden = true;
  return f;
}

const query = (): string[] => Array.from({ length: 1 + Math.floor(rand() * 4) }, () => pick(QUERY_WORDS).toLowerCase());

/** Two different scores this close may be equal, or the other way round, in LanceDB's float32 arithmetic. */
const withinRounding = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-5 * Math.max(1, a, b);

/**
 * The same scores place by place; the same row at each place except where LanceDB's score there is within
 * rounding of another it returned, or of the last one (which of such rows come first, or make the cut, is
 * float rounding or LanceDB's arbitrary pick). Returns whether the lists are identical.
 */
function expectSame(got: Hit[], want: Hit[], what: string): boolean {
  expect(got.length, what).toBe(want.length);
  got.forEach((h, i) => expect(withinRounding(h.score, want[i]!.score), what).toBe(true));
  const last = want.at(-1)?.score;
  want.forEach((w, i) => {
    const ambiguous =
      want.some((o, j) => j !== i && withinRounding(o.score, w.score)) || (last !== undefined && withinRounding(last, w.score));
    if (!ambiguous) expect(`${got[i]!.id}@${got[i]!.seq}`, what).toBe(`${w.id}@${w.seq}`);
  });
  return got.every((h, i) => h.id === want[i]!.id && h.seq === want[i]!.seq);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'text-mirror-'));
  // Space copies off in both (space-copies.test.ts compares those): here the tenant's copy is compared.
  plain = await LanceIndex.open(join(dir, 'plain'), 4, 0, 0, 0, 0);
  mirrored = await LanceIndex.open(join(dir, 'mirrored'), 4, 0, 0, undefined, 0);
});

afterAll(async () => {
  await plain.close();
  await mirrored.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('full-text copy against LanceDB', () => {
  it('gives LanceDB’s hits, order and scores with indexed and unindexed rows and any prefilter', async () => {
    let written = 0;
    let compared = 0;
    let identical = 0;
    for (const [tenant, batches] of [
      ['t1', [30, 25, 40, 60, 20, 35]],
      ['t2', [5, 120, 15]],
    ] as const) {
      for (const [b, n] of batches.entries()) {
        const batch = rows(written, n);
        written += n;
        await plain.add(tenant, batch);
        await mirrored.add(tenant, batch);
        // Every other batch brings the index up to date; the rest stay unindexed and are scanned flat.
        if (b % 2 === 1) {
          await plain.maintain(tenant, 'force');
          await mirrored.maintain(tenant, 'force');
        }
        for (let q = 0; q < 40; q++) {
          const terms = query();
          const f = filter();
          const limit = pick([1, 5, 10, 40]);
          const want = await plain.fullText(tenant, terms, f, limit);
          const got = await mirrored.fullText(tenant, terms, f, limit);
          if (expectSame(got, want, `${tenant} batch ${b}: ${terms.join(' ')} ${JSON.stringify(f)} limit ${limit}`)) identical++;
          compared++;
        }
      }
    }
    const answers = mirrored.textAnswers();
    // The copy answers every one, and nearly all row for row as LanceDB did.
    expect(answers).toEqual({ copy: compared, lance: 0, space: 0, whole: 0 });
    expect(identical).toBeGreaterThan(compared * 0.9);
    expect(plain.textAnswers().copy).toBe(0);
  });
});

describe('index upkeep with a copy', () => {
  it('leaves rows unindexed for a searched table its copy answers, and keeps answering from the copy', async () => {
    const tenant = 'upkeep';
    const first = rows(10_000, 30);
    await plain.add(tenant, first);
    await mirrored.add(tenant, first);
    const f: RowFilter = { asOf: 2000, allKnown: true };
    expectSame(await mirrored.fullText(tenant, ['painting'], f, 10), await plain.fullText(tenant, ['painting'], f, 10), 'before');
    const more = rows(10_030, 60); // past the 50 unindexed rows a searched table is allowed
    await plain.add(tenant, more);
    await mirrored.add(tenant, more);
    await plain.maintain(tenant);
    await mirrored.maintain(tenant);
    expect(await plain.unindexedTextRows(tenant)).toBe(0);
    expect(await mirrored.unindexedTextRows(tenant)).toBe(60);
    const before = mirrored.textAnswers().copy;
    const terms = ['painting', 'caroline'];
    await mirrored.fullText(tenant, terms, f, 10);
    expect(mirrored.textAnswers().copy).toBe(before + 1);
  });
});

describe('TokenCache', () => {
  it('asks for unknown chunks in one call and splits the answer at the markers', async () => {
    const calls: string[] = [];
    const tokenize = async (t: string): Promise<string[]> => {
      calls.push(t);
      return t
        .split(/\s+/)
        .flatMap((c) => c.toLowerCase().match(/[a-z0-9]+/g) ?? [])
        .filter((w) => w !== 'the');
    };
    const cache = new TokenCache();
    expect(await cache.tokens(['The cat-dog  sat', 'the'], tokenize)).toEqual([['cat', 'dog', 'sat'], []]);
    expect(calls).toHaveLength(1);
    expect(await cache.tokens(['sat cat-dog'], tokenize)).toEqual([['sat', 'cat', 'dog']]);
    expect(calls).toHaveLength(1);
    // A chunk holding the marker is asked alone.
    expect(await cache.tokens([`x${TokenCache.MARKER}`], tokenize)).toEqual([[`x${TokenCache.MARKER}`]]);
    expect(calls.at(-1)).toBe(`x${TokenCache.MARKER}`);
  });

  it('starts over when full, and still answers every chunk of the call that filled it', async () => {
    const tokenize = async (t: string): Promise<string[]> => t.split(/\s+/).filter((w) => w !== '');
    const cache = new TokenCache(3);
    expect(await cache.tokens(['a b'], tokenize)).toEqual([['a', 'b']]);
    expect(await cache.tokens(['c d e'], tokenize)).toEqual([['c', 'd', 'e']]);
    expect(await cache.tokens(['a c'], tokenize)).toEqual([['a', 'c']]);
  });
});

describe('TenantText', () => {
  const row = (seq: number, id: string) => ({ ...plainCells(id, seq), text: '' });
  it('orders equal scores newest first, and scores a hair apart by its own arithmetic', () => {
    const t = new TenantText();
    t.append([row(1, 'a'), row(2, 'b'), row(3, 'c')], [['cat', 'dog'], ['cat', 'dog'], ['cat']]);
    t.setIndexed(3);
    const f: RowFilter = { asOf: 5 };
    expect(t.search(['cat'], f, 3)?.map((h) => h.id)).toEqual(['c', 'b', 'a']);
    expect(t.search(['cat'], f, 2)?.map((h) => h.id)).toEqual(['c', 'b']);
    expect(t.search(['dog'], f, 1)?.map((h) => h.id)).toEqual(['b']);
    // Lengths 100,000 and 100,001: scores a hair apart, which LanceDB's arithmetic need not keep apart.
    const near = new TenantText();
    near.append(
      [row(1, 'a'), row(2, 'b')],
      [
        ['cat', ...Array<string>(99_999).fill('x')],
        ['cat', ...Array<string>(100_000).fill('y')],
      ],
    );
    near.setIndexed(2);
    expect(near.search(['cat'], f, 2).map((h) => h.id)).toEqual(['a', 'b']);
  });

  it('keeps the best rows of thousands of matches as a full sort would, ties included', () => {
    const t = new TenantText();
    const n = 3000;
    const r = rng(5);
    // Few distinct lengths and words, so many rows share a score; versions of one node share nothing else.
    t.append(
      Array.from({ length: n }, (_, i) => row(i + 1, `r${i % 700}`)),
      Array.from({ length: n }, () => Array.from({ length: 1 + Math.floor(r() * 4) }, () => pick(['cat', 'dog', 'eel', 'owl']))),
    );
    for (const indexed of [n - 200, n]) {
      t.setIndexed(indexed);
      for (const q of [['cat'], ['cat', 'dog'], ['owl', 'eel', 'dog'], ['yak']]) {
        const all = t.search(q, { asOf: 5 }, n);
        expect(all).toEqual([...all].sort((a, b) => b.score - a.score || b.seq - a.seq));
        for (const k of [1, 10, 45, 200]) expect(t.search(q, { asOf: 5 }, k)).toEqual(all.slice(0, k));
        // Leaving rows out changes the statistics of unindexed rows (as in LanceDB's flat scan), not of indexed ones.
        if (indexed === n)
          expect(t.search(q, { asOf: 5, excludeIds: ['r1', 'r2'] }, 45)).toEqual(
            all.filter((h) => h.id !== 'r1' && h.id !== 'r2').slice(0, 45),
          );
      }
    }
  });

  it('keeps the newest of a tie at the cut wider than the rows LanceDB is asked for beyond it', () => {
    const t = new TenantText();
    const n = 3 + CUT_SLACK;
    t.append(
      Array.from({ length: n }, (_, i) => row(i + 1, `r${i}`)),
      Array.from({ length: n }, () => ['cat']),
    );
    t.setIndexed(n);
    expect(t.search(['cat'], { asOf: 5 }, 2).map((h) => h.seq)).toEqual([n, n - 1]);
    expect(t.search(['cat'], { asOf: 5 }, 3)?.map((h) => h.seq)).toEqual([n, n - 1, n - 2]);
  });
});
