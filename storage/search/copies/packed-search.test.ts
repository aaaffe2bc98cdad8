// A space's copy searched in its packed segments answers as the same rows' copy in memory, to the last bit:
// BM25 under the statistics of the rows known at the read's as_of, cosine by a flat scan, every prefilter.
import { describe, expect, it } from 'vitest';
import { rng } from '../../../evals/lib/rng.ts';
import type { Hit, RowFilter } from '../index-row.ts';
import { decodeSegments, encodeSegment, openSegments, type Segment, type SpaceRow } from './packed-format.ts';
import { packedFullText, packedNearest } from './packed-search.ts';
import { SpaceCopy } from './space-copies.ts';

const rand = rng(7);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const WORDS = 'harbour crane storm ship berth cargo delay strike été über naïve 港 a of'.split(' ');

function vector(d: number): Float32Array {
  const v = new Float32Array(d);
  const style = rand();
  if (style < 0.05) return v; // all zeros: no distance
  for (let i = 0; i < d; i++) if (style < 0.35 || rand() < 0.15) v[i] = rand() - 0.5;
  return v;
}

function rowsOf(n: number): { rows: SpaceRow[]; tokens: string[][] } {
  const rows: SpaceRow[] = [];
  const tokens: string[][] = [];
  for (let k = 0; k < n; k++) {
    const words = rand() < 0.05 ? [] : Array.from({ length: 1 + Math.floor(rand() * 10) }, () => pick(WORDS));
    rows.push({
      id: `n${Math.floor(rand() * n * 0.7)}`,
      seq: 10 * (k + 1) + Math.floor(rand() * 5),
      space: 's',
      kind: pick(['claim', 'turn', 'entity']),
      category: pick([null, 'work', 'home']),
      known_at: 1000 + Math.floor(rand() * 200),
      asserted_at: 900 + Math.floor(rand() * 300),
      valid_from: 900 + Math.floor(rand() * 300),
      valid_to: rand() < 0.7 ? Number.MAX_SAFE_INTEGER : 1100 + Math.floor(rand() * 200),
      text: words.join(' '),
      vector: vector(rand() < 0.02 ? 8 : 16), // now and then a row of another length: no distance either
      wvec: rand() < 0.3 ? undefined : vector(5),
    });
    tokens.push(words);
  }
  return { rows, tokens };
}

/** The rows cut into segments at random places, in one 8-byte aligned buffer as a file is read. */
function packed(rows: readonly SpaceRow[], tokens: readonly string[][], cuts: number): Buffer {
  const at = [0, ...Array.from({ length: cuts }, () => Math.floor(rand() * rows.length)).sort((a, b) => a - b), rows.length];
  const parts = at.slice(1).map((end, i) => encodeSegment(rows.slice(at[i], end), tokens.slice(at[i], end)));
  const whole = Buffer.concat(parts);
  const aligned = Buffer.allocUnsafeSlow(whole.length);
  whole.copy(aligned);
  return aligned;
}

function filter(rows: readonly SpaceRow[]): RowFilter {
  const f: RowFilter = { asOf: pick([1000, 1050, 1120, 1199, 5000]) + 0.7 };
  if (rand() < 0.15) f.allKnown = true;
  else if (rand() < 0.1) f.hidden = true;
  if (rand() < 0.3) f.validAt = 1000 + Math.floor(rand() * 300);
  if (rand() < 0.2) f.kind = pick(['claim', 'turn', 'nothing']);
  if (rand() < 0.2) f.category = pick(['work', 'home', 'nothing']);
  if (rand() < 0.5) f.space = pick(['s', 's', 'other']);
  if (rand() < 0.1) f.asserted = { from: 950, to: 1100 };
  if (rand() < 0.2) f.excludeIds = Array.from({ length: 5 }, () => pick(rows).id);
  if (rand() < 0.1) f.onlyIds = Array.from({ length: 20 }, () => pick(rows).id);
  return f;
}

const exact = (hits: readonly Hit[]): string[] => hits.map((h) => `${h.id}@${h.seq}:${h.score}`);

describe('a packed segment', () => {
  it('reads back to the last bit: cells, ids and strings, sparse and dense vectors, missing word vectors, each token as often', () => {
    const { rows, tokens } = rowsOf(120);
    const back = decodeSegments(openSegments(packed(rows, tokens, 3))!);
    expect(back.rows.length).toBe(rows.length);
    back.rows.forEach((r, i) => {
      const w = rows[i]!;
      expect({ ...r, vector: [...r.vector], wvec: r.wvec && [...r.wvec] }).toEqual({
        ...w,
        text: undefined,
        vector: [...w.vector],
        wvec: w.wvec && [...w.wvec],
      });
      expect([...back.tokens[i]!].sort()).toEqual([...tokens[i]!].sort());
    });
  });

  it('is refused when its bytes are not segments written whole', () => {
    const { rows, tokens } = rowsOf(20);
    const bytes = packed(rows, tokens, 1);
    expect(openSegments(bytes, bytes.length - 8)).toBeNull();
    const garbled = Buffer.allocUnsafeSlow(bytes.length);
    bytes.copy(garbled);
    garbled[0] = 0;
    expect(openSegments(garbled)).toBeNull();
    expect(openSegments(Buffer.alloc(64))).toBeNull();
  });

  it('is refused when an offset or index inside it points outside it, its header intact', () => {
    const { rows, tokens } = rowsOf(40);
    const bytes = packed(rows, tokens, 1);
    // Each damage written through the views of a fresh copy of the bytes; the copy opens before it.
    const damages: ((s: Segment) => void)[] = [
      (s) => (s.idOffsets[s.idOffsets.length - 1] = s.ids.length + 1),
      (s) => (s.termOffsets[1] = s.termOffsets[2]! + 1),
      (s) => (s.dictOffsets[0] = 1),
      (s) => (s.postingStart[s.postingStart.length - 1] = s.postingRows.length + 1),
      (s) => (s.postingRows[0] = s.rows),
      (s) => (s.space[0] = -1),
      (s) => (s.category[0] = 99),
      (s) => (s.vector.at[0] = s.vector.values.length + s.vector.dense.length),
      (s) => (s.wvec.at[s.wvec.length.findIndex((l) => l >= 0)] = -5),
    ];
    for (const damage of damages) {
      const copy = Buffer.allocUnsafeSlow(bytes.length);
      bytes.copy(copy);
      const segments = openSegments(copy)!;
      expect(segments).not.toBeNull();
      damage(segments[segments.length - 1]!);
      expect(openSegments(copy)).toBeNull();
    }
  });
});

describe('a space copy searched in its segments', () => {
  it('answers as the same rows held in memory: full text and both vector columns, under every prefilter', () => {
    let compared = 0;
    let found = 0;
    for (let round = 0; round < 6; round++) {
      const { rows, tokens } = rowsOf(40 + Math.floor(rand() * 200));
      const segments = openSegments(packed(rows, tokens, round % 4))!;
      const copy = new SpaceCopy();
      copy.append(rows, tokens);
      for (let n = 0; n < 80; n++) {
        const f = filter(rows);
        const limit = pick([1, 3, 10, 40]);
        const query = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => pick([...WORDS, 'absent']));
        const text = exact(packedFullText(segments, query, f, limit));
        expect(text, JSON.stringify({ f, query, limit })).toEqual(exact(copy.fullText(query, f, limit)));
        const q = vector(16);
        const near = exact(packedNearest(segments, q, f, limit, 'vector'));
        expect(near).toEqual(exact(copy.nearest(q, f, limit, 'vector')));
        const w = vector(5);
        expect(exact(packedNearest(segments, w, f, limit, 'wvec'))).toEqual(exact(copy.nearest(w, f, limit, 'wvec')));
        compared += 3;
        found += text.length + near.length;
      }
    }
    expect(compared).toBe(6 * 80 * 3);
    // Not a comparison of empty answers.
    expect(found).toBeGreaterThan(1000);
  });
});
