// The in-memory vector scan must answer as LanceDB's own flat scan does: the same rows, in the same order,
// for every prefilter. Two indexes hold the same rows, one with the mirror switched off (budget 0).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Field, FixedSizeList, Float32, makeData, Table, Vector, type Data } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rng } from '../../../evals/lib/rng.ts';
import { plainCells, randomCells } from '../../../test/helpers/random-rows.ts';
import { LanceIndex } from '../lance/lance-index.ts';
import type { IndexRow, RowFilter } from '../index-row.ts';
import { admits, dot, floatRows, sparseDot, TenantVectors, VectorMirrors } from './vector-mirror.ts';

const D = 8;
const W = 4;
let dir: string;
let plain: LanceIndex;
let mirrored: LanceIndex;
/** The same corpora on every run. */
const rand = rng(7);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
// Continuous values: distinct vectors practically never tie, while LanceDB's float32 arithmetic and this
// scan's could order a near-tie of distinct vectors differently. Equal vectors tie exactly in both.
const vec = (d: number): Float32Array => Float32Array.from({ length: d }, () => rand() - 0.5);

const halfZero = (v: Float32Array): Float32Array => v.map((x, i) => (i % 2 === (v.length & 1) ? 0 : x));

function rows(from: number, n: number): IndexRow[] {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    // Every seventh row has the same word vector (ties), every eleventh a zero vector (never a neighbour),
    // every third half zeros (kept as pairs, as the local embedder's short rows are).
    const vector = i % 11 === 3 ? new Float32Array(D) : i % 3 === 0 ? halfZero(vec(D)) : vec(D);
    return {
      ...randomCells(rand, `n${i % 40}`, i + 1), // several versions of one node
      text: `row ${i}`,
      vector,
      wvec: i % 7 === 0 ? new Float32Array([1, 0, 0, 1]) : vec(W),
    };
  });
}

/** A mirrored row visible from instant 1 to 9, for the hand-made cases. */
const mirrorRow = (id: string, seq: number, vector: Float32Array) => ({ ...plainCells(id, seq), vector });

function filter(): RowFilter {
  const f: RowFilter = { asOf: 1000 + Math.floor(rand() * 110) };
  if (rand() < 0.3) f.allKnown = true;
  else if (rand() < 0.2) f.hidden = true;
  if (rand() < 0.3) f.validAt = pick([1080, 1000 + Math.floor(rand() * 100)]); // 1080: a valid_to, the boundary
  if (rand() < 0.3) f.space = pick(['a', 'b']);
  if (rand() < 0.2) f.kind = pick(['claim', 'turn']);
  if (rand() < 0.2) f.category = pick(['x', 'y']);
  if (rand() < 0.2) f.asserted = { from: 1020, to: 1060 };
  if (rand() < 0.2) f.excludeIds = ['n1', 'n2', 'n3', "n'4"];
  if (rand() < 0.1) f.onlyIds = rand() < 0.3 ? [] : ['n5', 'n6', 'n7', 'n8'];
  return f;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vector-mirror-'));
  plain = await LanceIndex.open(join(dir, 'plain'), D, W, 0, undefined, 0);
  mirrored = await LanceIndex.open(join(dir, 'mirrored'), D, W, 1 << 20, undefined, 0);
  const first = rows(0, 150);
  await plain.add('t', first);
  await mirrored.add('t', first);
});

afterAll(async () => {
  await plain.close();
  await mirrored.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('vector mirror', () => {
  it('returns what LanceDB returns, for random prefilters, on both vector columns, before and after more writes', async () => {
    const compare = async (): Promise<number> => {
      let nonEmpty = 0;
      for (let q = 0; q < 60; q++) {
        const f = filter();
        const column = q % 2 === 0 ? 'vector' : 'wvec';
        const query = column === 'vector' ? vec(D) : vec(W);
        const limit = pick([1, 5, 40]);
        const want = await plain.nearest('t', query, f, limit, column);
        const got = await mirrored.nearest('t', query, f, limit, column);
        expect(got.map((h) => [h.id, h.seq])).toEqual(want.map((h) => [h.id, h.seq]));
        got.forEach((h, i) => expect(h.score).toBeCloseTo(want[i]!.score, 5));
        if (want.length > 0) nonEmpty++;
      }
      return nonEmpty;
    };
    expect(await compare()).toBeGreaterThan(20);
    // Rows written after the mirror was filled are appended to it.
    const more = rows(150, 60);
    await plain.add('t', more);
    await mirrored.add('t', more);
    expect(await compare()).toBeGreaterThan(20);
  });

  it('a zero query finds nothing; ties keep write order; a row at or below the highest seq held is not added twice', () => {
    const m = new TenantVectors();
    const row = (id: string, seq: number, v: number[]) => mirrorRow(id, seq, Float32Array.from(v));
    m.append([row('a', 1, [1, 0]), row('z', 2, [0, 0]), row('b', 3, [2, 0]), row('c', 4, [0, 1])]);
    m.append([row('b', 3, [2, 0])]);
    expect(m.size).toBe(4);
    expect(m.nearest(new Float32Array([0, 0]), { asOf: 5 }, 10, 'vector')).toEqual([]);
    expect(m.nearest(new Float32Array([1, 0]), { asOf: 5 }, 10, 'vector').map((h) => h.id)).toEqual(['a', 'b', 'c']);
    expect(m.nearest(new Float32Array([1, 0]), { asOf: 5 }, 1, 'vector').map((h) => h.id)).toEqual(['a']);
    expect(admits(row('a', 1, [1, 0]), { asOf: 0 })).toBe(false);
    expect(admits(row('a', 1, [1, 0]), { asOf: 0, hidden: true })).toBe(true);
  });

  it('the scan in turns answers as the scan in one piece, whatever the stretch, and leaves out rows appended meanwhile', async () => {
    const m = new TenantVectors();
    m.append(Array.from({ length: 50 }, (_, i) => mirrorRow(`r${i}`, i + 1, vec(D))));
    for (let k = 0; k < 20; k++) {
      const q = vec(D);
      const f = { asOf: 5 };
      const whole = m.nearest(q, f, 7, 'vector');
      expect(whole).toHaveLength(7);
      for (const chunk of [1, 3, 16, 49, 50, 64]) expect(await m.nearestInTurns(q, f, 7, 'vector', chunk)).toEqual(whole);
    }
    const q = vec(D);
    const before = m.nearest(q, { asOf: 5 }, 60, 'vector');
    const pending = m.nearestInTurns(q, { asOf: 5 }, 60, 'vector', 10);
    m.append([mirrorRow('late', 51, q)]); // the nearest possible row, written while the scan yields
    expect(await pending).toEqual(before);
  });

  it("LanceDB's caches are the bounded session's (its connect drops a session passed beside the options)", async () => {
    await plain.nearest('t', vec(D), { asOf: 2000 }, 5);
    // Unused, the session holds nothing (152 bytes, 0 items measured); in use, the table's metadata and index pages.
    expect(plain.memory().lanceCacheItems).toBeGreaterThan(0);
  });

  it('a copy read whole and then written to grows by an eighth, not twice its size', () => {
    const m = new TenantVectors();
    const at = (seq: number) => mirrorRow(`n${seq}`, seq, vec(384)); // the local embedder's dimension
    m.append(Array.from({ length: 400 }, (_, i) => at(i + 1)));
    const whole = m.bytes;
    m.append([at(401)]);
    // 401 rows in buffers of 451 (401 + 401/8): ~11% more bytes, where doubling made it ~89%.
    expect(m.size).toBe(401);
    expect(m.bytes / whole).toBeGreaterThan(1.05);
    expect(m.bytes / whole).toBeLessThan(1.2);
  });

  it('a row with few non-zero cells is kept as pairs, in less than half the memory, at the same distance to the last bit', () => {
    // dot() as written, over whole rows: the reference every distance must equal exactly.
    const dense = (a: Float32Array, b: Float32Array): number => {
      const s = [0, 0, 0, 0];
      const whole = a.length - (a.length % 4);
      for (let i = 0; i < whole; i++) s[i % 4]! += a[i]! * b[i]!;
      for (let i = whole; i < a.length; i++) s[0]! += a[i]! * b[i]!;
      return s[0]! + s[1]! + s[2]! + s[3]!;
    };
    // 384 dimensions with ~60 non-zero cells, as the local embedder gives a short memory; 387 puts cells
    // past the last whole group of four; every fifth row is dense (a remote model's).
    for (const d of [384, 387]) {
      const row = (i: number): Float32Array => {
        if (i % 5 === 0) return vec(d);
        const v = new Float32Array(d);
        for (let k = 0; k < 60; k++) v[Math.floor(rand() * d)] = rand() - 0.5;
        return v;
      };
      const vectors = Array.from({ length: 300 }, (_, i) => row(i));
      const m = new TenantVectors();
      m.append(vectors.slice(0, 200).map((v, i) => mirrorRow(`r${i}`, i + 1, v)));
      m.append(vectors.slice(200).map((v, i) => mirrorRow(`r${200 + i}`, 201 + i, v))); // grown, not reserved
      if (d === 384) {
        const sparse = new TenantVectors();
        sparse.append(vectors.filter((_, i) => i % 5 !== 0).map((v, i) => mirrorRow(`s${i}`, i + 1, v)));
        const whole = new TenantVectors();
        whole.append(Array.from({ length: 240 }, (_, i) => mirrorRow(`w${i}`, i + 1, vec(d))));
        expect(sparse.bytes).toBeLessThan(whole.bytes / 2); // ~0.32 with 60 cells of 384
      }
      for (let k = 0; k < 10; k++) {
        const q = k % 2 === 0 ? vec(d) : row(1);
        const qn = Math.sqrt(dense(q, q));
        const hits = m.nearest(q, { asOf: 5 }, 300, 'vector');
        expect(hits).toHaveLength(300);
        for (const h of hits) {
          const v = vectors[Number(h.id.slice(1))]!;
          expect(h.score).toBe(1 - Math.fround(1 - dense(v, q) / (qn * Math.sqrt(dense(v, v)))));
        }
      }
    }
  });

  it("the dot product of a row kept as pairs is the whole row's, in double precision", () => {
    for (const d of [384, 387]) {
      for (let k = 0; k < 50; k++) {
        const v = new Float32Array(d);
        for (let c = 0; c < 40; c++) v[Math.floor(rand() * d)] = rand() - 0.5;
        for (let i = d - (d % 4); i < d; i++) v[i] = rand() - 0.5; // past the last group of four
        const positions = Uint16Array.from([...v.keys()].filter((i) => v[i] !== 0));
        const values = Float32Array.from(positions, (i) => v[i]!);
        const q = vec(d);
        expect(sparseDot(values, positions, 0, positions.length, q)).toBe(dot(v, 0, q));
      }
    }
  });

  it('keeps mirrors within the byte budget, dropping the least recently used', async () => {
    const one = (seq: number) => mirrorRow(`n${seq}`, seq, new Float32Array(100).fill(1));
    // The budget holds two tenants of one row, not three.
    const probe = new TenantVectors();
    probe.append([one(1)]);
    const mirrors = new VectorMirrors(Math.floor(2.5 * probe.bytes));
    let loads = 0;
    const load = async () => {
      loads++;
      return [one(1)];
    };
    await mirrors.get('a', load);
    await mirrors.get('b', load);
    await mirrors.get('a', load); // a used last: b goes first
    await mirrors.get('c', load);
    expect(loads).toBe(3);
    await mirrors.get('a', load);
    expect(loads).toBe(3);
    await mirrors.get('b', load);
    expect(loads).toBe(4);
    // Too large alone: not kept.
    expect(await new VectorMirrors(probe.bytes - 1).get('x', load)).toBeNull();
    // Past maxRows (its table gets a vector index) a mirror is dropped; a declined load keeps nothing.
    const capped = new VectorMirrors(1 << 20, 1);
    expect((await capped.get('a', load))?.size).toBe(1);
    await capped.append('a', [one(2)]);
    expect(await capped.get('a', async () => null)).toBeNull();
    expect(capped.fits(1, 10)).toBe(true);
    expect(capped.fits(2, 10)).toBe(false);
    expect((await capped.get('a', load))?.size).toBe(1);
  });
});

describe('floatRows', () => {
  // Arrow's own accessor, as the mirror read its vectors before: a copy of the cell, or undefined for null.
  const viaGet = (column: Vector, i: number): number[] | undefined => {
    const v: unknown = column.get(i);
    return v && typeof v === 'object' && 'toArray' in v ? Array.from((v as { toArray(): ArrayLike<number> }).toArray()) : undefined;
  };
  const batch = (rows: (number[] | null)[]): Data<FixedSizeList<Float32>> => {
    const flat = Float32Array.from(rows.flatMap((r) => r ?? Array.from({ length: D }, () => 0)));
    const nullBitmap = new Uint8Array(Math.ceil(rows.length / 8));
    rows.forEach((r, i) => r && (nullBitmap[i >> 3]! |= 1 << (i % 8)));
    const type = new FixedSizeList(D, new Field('item', new Float32(), true));
    const child = makeData({ type: new Float32(), length: flat.length, data: flat });
    return makeData({ type, length: rows.length, nullCount: rows.filter((r) => !r).length, nullBitmap, child });
  };

  it("reads each row's floats as Arrow's accessor does, across batches, nulls and a sliced column", () => {
    const cells = (n: number): (number[] | null)[] => Array.from({ length: n }, (_, i) => (i % 5 === 3 ? null : Array.from(vec(D))));
    const column = new Vector([batch(cells(7)), batch(cells(1)), batch(cells(12))]);
    const table = new Table({ vector: column });
    for (const c of [table.getChild('vector')!, column.slice(3), column.slice(6, 15)]) {
      expect(c.data.length).toBeGreaterThan(1);
      const read = floatRows(c);
      for (let i = 0; i < c.length; i++) {
        const got = read(i);
        expect(got && Array.from(got)).toEqual(viaGet(c, i));
      }
      expect(Array.from(read(0) ?? [])).toEqual(viaGet(c, 0) ?? []); // asked again from the start
    }
    expect(floatRows(null)(0)).toBeUndefined();
  });
});
