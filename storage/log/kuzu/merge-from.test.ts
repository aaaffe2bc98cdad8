import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kuzu from 'kuzu';
import { afterAll, describe, expect, it } from 'vitest';
import { tableRows } from './table-rows.ts';
import { CSV_OPTIONS, ddlOf, IDENT, mergeFrom, SPACE, toCsv } from './tables.ts';

const dir = mkdtempSync(join(tmpdir(), 'merge-from-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A statement's rows, its results closed (a result left open when its database closes crashed the process). */
async function rows(c: kuzu.Connection, query: string): Promise<Record<string, unknown>[]> {
  const answer = await c.query(query);
  const results = Array.isArray(answer) ? answer : [answer];
  try {
    return await results[0]!.getAll();
  } finally {
    for (const r of results) r.close();
  }
}

describe('loading rows whose keys the store may hold', () => {
  it('creates the new keys once, the first of a repeated key in the file, and leaves stored rows as they were', async () => {
    const db = new kuzu.Database(join(dir, 'a.kuzu'));
    const c = new kuzu.Connection(db);
    try {
      await rows(c, ddlOf(SPACE.table));
      const space = (name: string, tenant: string, at: number) => ({ space: name, tenant, first_captured_at: at, tseq: at });
      const file = join(dir, 'space.csv');
      const load = async (list: ReturnType<typeof space>[]): Promise<void> => {
        const part = tableRows(SPACE, list);
        writeFileSync(file, toCsv(part));
        await rows(c, mergeFrom(part, file, CSV_OPTIONS));
      };
      await load([space('s1', 'first', 1)]);
      await load([space('s1', 'second', 2), space('s2', 'second', 3), space('s2', 'third', 4), space('a "quoted" name', 'x', 5)]);
      const stored = await rows(c, 'MATCH (x:Space) RETURN x.name AS name, x.tenant AS tenant, x.first_captured_at AS at ORDER BY x.name');
      // Text cells are stored JSON-encoded, as COPY stores them (csvCell).
      expect(stored).toEqual([
        { name: JSON.stringify('a "quoted" name'), tenant: JSON.stringify('x'), at: 5 },
        { name: JSON.stringify('s1'), tenant: JSON.stringify('first'), at: 1 },
        { name: JSON.stringify('s2'), tenant: JSON.stringify('second'), at: 3 },
      ]);
    } finally {
      await c.close();
      await db.close();
    }
  });

  it('loads a table whose key column is named key', async () => {
    const db = new kuzu.Database(join(dir, 'b.kuzu'));
    const c = new kuzu.Connection(db);
    try {
      await rows(c, ddlOf(IDENT.table));
      const file = join(dir, 'ident.csv');
      for (const ids of [
        ['a', 'b'],
        ['b', 'c', 'c'],
      ]) {
        const part = tableRows(
          IDENT,
          ids.map((id) => ({ tenant: 't', id })),
        );
        writeFileSync(file, toCsv(part));
        await rows(c, mergeFrom(part, file, CSV_OPTIONS));
      }
      expect(await rows(c, 'MATCH (x:Ident) RETURN count(*) AS n')).toEqual([{ n: 3 }]);
    } finally {
      await c.close();
      await db.close();
    }
  });
});
