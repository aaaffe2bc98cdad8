import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterEach, describe, expect, it } from 'vitest';
import { indexSchema, rowsToArrow } from './arrow-rows.ts';
import { appendArrow } from './lance-append.ts';
import type { IndexRow } from '../index-row.ts';
import { indexRow } from '../../../test/helpers/rows.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const row = (i: number): IndexRow => indexRow(i);

describe('appendArrow', () => {
  it('appends the rows LanceDB reads back, natively and through Table.add alike', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lance-append-'));
    dirs.push(dir);
    const schema = indexSchema(4, 2);
    const db = await lancedb.connect(dir);
    const table = await db.createEmptyTable('t', schema);
    await appendArrow(table, rowsToArrow(schema, [row(1), row(2)]));
    // Without the native field (another LanceDB version) the public add is used.
    const added: unknown[] = [];
    const plain = { add: async (data: unknown) => added.push(data) } as unknown as lancedb.Table;
    await appendArrow(plain, rowsToArrow(schema, [row(3)]));
    expect(added).toHaveLength(1);
    await appendArrow(table, rowsToArrow(schema, [row(3)]));
    const rows = (await table.query().toArray()) as {
      id: string;
      category: string | null;
      text: string;
      vector: { toArray(): Float32Array };
    }[];
    expect(rows.map((r) => [r.id, r.category, r.text])).toEqual([
      ['n1', 'c', 'row 1 é'],
      ['n2', null, 'row 2 é'],
      ['n3', 'c', 'row 3 é'],
    ]);
    expect([...rows[2]!.vector.toArray()]).toEqual([...row(3).vector]);
    table.close();
    db.close();
  });
});
