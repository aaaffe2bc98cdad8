import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kuzu from 'kuzu';
import { afterAll, describe, expect, it } from 'vitest';
import { tableRows } from './table-rows.ts';
import { copyFrom, CSV_OPTIONS, ddlOf, IDENT, SPACE, toCsv } from './tables.ts';

const dir = mkdtempSync(join(tmpdir(), 'copy-from-'));
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

/** `body` on a new store in `file` (Kuzu's default buffer pool unless given), closed after. */
async function withStore(file: string, body: (c: kuzu.Connection) => Promise<void>, poolBytes?: number): Promise<void> {
  const db = new kuzu.Database(join(dir, file), poolBytes);
  const c = new kuzu.Connection(db);
  try {
    await body(c);
  } finally {
    await c.close();
    await db.close();
  }
}

const idents = (from: number, to: number) =>
  tableRows(
    IDENT,
    Array.from({ length: to - from }, (_, i) => ({ tenant: 't', id: `id${from + i}` })),
  );

describe('copying rows whose keys the store may hold', () => {
  it('creates the new keys once, the first of a repeated key in the file, and leaves stored rows as they were', () =>
    withStore('a.kuzu', async (c) => {
      await rows(c, ddlOf(SPACE.table));
      const space = (name: string, tenant: string, at: number) => ({ space: name, tenant, first_captured_at: at, tseq: at });
      const file = join(dir, 'space.csv');
      const load = async (list: ReturnType<typeof space>[]): Promise<void> => {
        const part = tableRows(SPACE, list);
        writeFileSync(file, toCsv(part));
        await rows(c, copyFrom(part, file));
      };
      await load([space('s1', 'first', 1)]);
      await load([space('s1', 'second', 2), space('s2', 'second', 3), space('s2', 'third', 4), space('a "quoted" name', 'x', 5)]);
      const stored = await rows(c, 'MATCH (x:Space) RETURN x.name AS name, x.tenant AS tenant, x.first_captured_at AS at ORDER BY x.name');
      // Text cells are stored JSON-encoded (csvCell).
      expect(stored).toEqual([
        { name: JSON.stringify('a "quoted" name'), tenant: JSON.stringify('x'), at: 5 },
        { name: JSON.stringify('s1'), tenant: JSON.stringify('first'), at: 1 },
        { name: JSON.stringify('s2'), tenant: JSON.stringify('second'), at: 3 },
      ]);
    }));

  it('loads a table whose key column is named key', () =>
    withStore('b.kuzu', async (c) => {
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
        await rows(c, copyFrom(part, file));
      }
      expect(await rows(c, 'MATCH (x:Ident) RETURN count(*) AS n')).toEqual([{ n: 3 }]);
    }));

  // A MERGE of the file's rows joined them with a hash table of every key of the table: with 2.4M Ident keys
  // and the server's 256 MB buffer pool, a copy of 1,000 rows failed ("the buffer pool is full"), every retry
  // too, and the write journal grew while nothing more reached the store. Here the same at a smaller scale:
  // 300,000 stored keys in a 32 MB buffer pool, which the MERGE also failed in.
  it('copies a few rows into a table of many keys within a small buffer pool', () =>
    withStore(
      'c.kuzu',
      async (c) => {
        await rows(c, ddlOf(IDENT.table));
        const file = join(dir, 'many.csv');
        for (let at = 0; at < 300_000; at += 50_000) {
          writeFileSync(file, toCsv(idents(at, at + 50_000)));
          await rows(c, `COPY ${IDENT.table} FROM '${file}' (${CSV_OPTIONS})`);
        }
        // Half of them stored already.
        const part = idents(299_500, 300_500);
        writeFileSync(file, toCsv(part));
        await rows(c, copyFrom(part, file));
        expect(await rows(c, 'MATCH (x:Ident) RETURN count(*) AS n')).toEqual([{ n: 300_500 }]);
      },
      32 * 1024 * 1024,
    ));
});
