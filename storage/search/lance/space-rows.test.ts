// A space's rows are read in two steps (row ids through the prefilter, then the rows by id): the answer is
// exactly the space's rows with their vectors, across fragments and after a delete and a compaction, or
// without them past a number of rows; a take that no longer names the space's rows falls back to one
// filtered query.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterEach, describe, expect, it } from 'vitest';
import { indexSchema, rowsToArrow } from './arrow-rows.ts';
import type { IndexRow } from '../index-row.ts';
import { indexRow } from '../../../test/helpers/rows.ts';
import { spaceRowsOf } from './lance-index.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const row = (i: number): IndexRow => indexRow(i, { space: `s${i % 3}`, category: null });

const COLUMNS = { vectors: ['seq', 'vector'], text: ['seq'] };

const seqsAndVectors = ({ data: t }: Awaited<ReturnType<typeof spaceRowsOf>>): [number, number[]][] =>
  Array.from({ length: t.numRows }, (_, i) => [
    Number(t.getChild('seq')?.get(i)),
    [...(t.getChild('vector')?.get(i) as { toArray(): Float32Array }).toArray()],
  ]);

async function emptyTable(): Promise<{ db: lancedb.Connection; table: lancedb.Table; schema: ReturnType<typeof indexSchema> }> {
  const dir = mkdtempSync(join(tmpdir(), 'space-rows-'));
  dirs.push(dir);
  const schema = indexSchema(4, 2);
  const db = await lancedb.connect(dir);
  return { db, table: await db.createEmptyTable('t', schema), schema };
}

describe("a space's rows in two steps", () => {
  it("are the space's rows with their vectors, before and after a delete and a compaction", async () => {
    const { db, table, schema } = await emptyTable();
    // Several fragments: one per add.
    for (let f = 0; f < 4; f++)
      await table.add(
        rowsToArrow(
          schema,
          Array.from({ length: 30 }, (_, i) => row(f * 30 + i + 1)),
        ),
      );
    const expected = (drop: (i: number) => boolean): [number, number[]][] =>
      Array.from({ length: 120 }, (_, i) => i + 1)
        .filter((i) => i % 3 === 1 && !drop(i))
        .map((i) => [i, [...row(i).vector]]);
    const read = async (): Promise<[number, number[]][]> =>
      seqsAndVectors(await spaceRowsOf(table, 's1', "space = 's1'", COLUMNS, 1000)).sort((a, b) => a[0] - b[0]);
    expect(await read()).toEqual(expected(() => false));
    await table.delete('seq < 40');
    await table.optimize();
    expect(await read()).toEqual(expected((i) => i < 40));
    // An empty space answers no rows.
    expect((await spaceRowsOf(table, 'none', "space = 'none'", COLUMNS, 1000)).data.numRows).toBe(0);
    // More rows than asked with vectors: the text selection, without them (a copy of full text only).
    const many = await spaceRowsOf(table, 's1', "space = 's1'", COLUMNS, 1000, 10);
    expect(many.vectors).toBe(false);
    expect(many.data.getChild('vector')).toBeNull();
    expect(many.data.numRows).toBe(expected((i) => i < 40).length);
    const few = await spaceRowsOf(table, 's1', "space = 's1'", COLUMNS, 1000, 40);
    expect(few.vectors).toBe(true);
    expect(seqsAndVectors(few).length).toBe(expected((i) => i < 40).length);
    table.close();
    db.close();
  });

  it("falls back to one query when the rows taken are not the space's", async () => {
    const { db, table, schema } = await emptyTable();
    await table.add(
      rowsToArrow(
        schema,
        Array.from({ length: 30 }, (_, i) => row(i + 1)),
      ),
    );
    // A table whose take answers another space's rows, as stale row ids would after a compaction.
    let takes = 0;
    const stale = new Proxy(table, {
      get(target, prop, receiver) {
        if (prop === 'takeRowIds')
          return () => {
            takes++;
            return target.query().where("space = 's2'").select(['seq', 'vector', 'space']);
          };
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const rows = seqsAndVectors(await spaceRowsOf(stale, 's1', "space = 's1'", COLUMNS, 1000));
    expect(takes).toBe(1);
    expect(rows.map(([seq]) => seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => 3 * i + 1));
    table.close();
    db.close();
  });
});
