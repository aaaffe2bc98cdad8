import { describe, expect, it } from 'vitest';
import { indexSchema, rowsToArrow } from './arrow-rows.ts';
import type { IndexRow } from '../index-row.ts';

const row = (i: number, vector: Float32Array, wvec: Float32Array): IndexRow => ({
  id: `n${i}`,
  seq: i,
  space: 's',
  kind: 'claim',
  category: null,
  known_at: i,
  asserted_at: 0,
  valid_from: 0,
  valid_to: 1,
  text: `t${i}`,
  vector,
  wvec,
});
const views = (flat: Float32Array, d: number): Float32Array[] =>
  Array.from({ length: flat.length / d }, (_, i) => flat.subarray(i * d, (i + 1) * d));

describe('rowsToArrow', () => {
  it('makes one batch per run of rows whose vectors share a buffer, without copying them', () => {
    const schema = indexSchema(2, 1);
    const [a, b] = [Float32Array.from([1, 2, 3, 4]), Float32Array.from([5, 6, 7, 8, 9, 10])];
    const [wa, wb] = [Float32Array.from([-1, -2]), Float32Array.from([-3, -4, -5])];
    const rows = [...views(a, 2), ...views(b, 2)].map((v, i) => row(i, v, [...views(wa, 1), ...views(wb, 1)][i]!));
    const table = rowsToArrow(schema, rows);
    expect(table.batches.map((x) => x.numRows)).toEqual([2, 3]);
    expect(table.getChild('vector')!.data[1]!.children[0]!.values.buffer).toBe(b.buffer);
    expect(table.toArray().map((r) => [r.id, [...r.vector.toArray()], [...r.wvec.toArray()]])).toEqual(
      rows.map((r) => [r.id, [...r.vector], [...r.wvec!]]),
    );
  });

  it('encodes text columns value by value as UTF-8, ASCII or not, nulls as null slots', () => {
    const schema = indexSchema(2, 1);
    for (const texts of [
      ['plain', '', 'ascii only, 123'],
      ['é', 'a\ud800', '\udc00b', '漢字 🎉', ''],
    ]) {
      const [vectors, wvecs] = [views(new Float32Array(texts.length * 2).fill(1), 2), views(new Float32Array(texts.length).fill(1), 1)];
      const rows = texts.map((text, i) => ({ ...row(i, vectors[i]!, wvecs[i]!), text, category: i % 2 === 0 ? null : `c${text}` }));
      const table = rowsToArrow(schema, rows);
      expect(table.batches).toHaveLength(1);
      const column = table.getChild('text')!.data[0]!;
      const encoded = texts.map((t) => Buffer.from(t, 'utf8'));
      expect([...column.valueOffsets]).toEqual(encoded.reduce((o, e) => [...o, o.at(-1)! + e.length], [0]));
      expect(Buffer.from(column.values.subarray(0, column.valueOffsets[texts.length]))).toEqual(Buffer.concat(encoded));
      expect(table.toArray().map((r) => [r.text, r.category])).toEqual(
        rows.map((r, i) => [encoded[i]!.toString('utf8'), r.category === null ? null : Buffer.from(r.category, 'utf8').toString('utf8')]),
      );
    }
  });

  it('copies vectors each in its own buffer into one batch', () => {
    const rows = Array.from({ length: 20 }, (_, i) => row(i, Float32Array.from([i, -i]), Float32Array.from([i])));
    const table = rowsToArrow(indexSchema(2, 1), rows);
    expect(table.batches).toHaveLength(1);
    expect(table.toArray().map((r) => [...r.vector.toArray()])).toEqual(rows.map((r) => [...r.vector]));
  });
});
