// The vector indexes are built over a table compacted to one fragment. The first append (the rows the
// full-text index was built on) is covered by other index segments than the appends after it until an
// optimize has indexed those, so compaction keeps it apart; built over both, the next optimize merged them
// under the new indexes and remapped the HNSW indexes, which cost as much as building them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, describe, expect, it } from 'vitest';
import { indexRow } from '../../../test/helpers/rows.ts';
import { LanceIndex } from './lance-index.ts';

const dir = mkdtempSync(join(tmpdir(), 'build-fragments-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The tenant's table as stored now: its fragments, rows and whether a vector index covers it. */
async function stored(at: string): Promise<{ fragments: number; rows: number; vectorIndex: boolean }> {
  const db = await lancedb.connect(at);
  const [table] = await Promise.all((await db.tableNames()).map((t) => db.openTable(t)));
  const stats = await table!.stats();
  const out = {
    fragments: stats.fragmentStats.numFragments,
    rows: stats.numRows,
    vectorIndex: (await table!.listIndices()).some((i) => i.columns.includes('vector')),
  };
  table!.close();
  db.close();
  return out;
}

const rows = (from: number, n: number) => Array.from({ length: n }, (_, k) => indexRow(from + k));

describe('building the vector indexes', () => {
  it('happens on one fragment, and later appends stay fragments of their own', async () => {
    const at = join(dir, 'tables');
    const index = await LanceIndex.open(at, 4, 2, 0, 0, 0, { indexRows: 300 });
    await index.add('t', rows(1, 2));
    for (let a = 0; a < 4; a++) await index.add('t', rows(3 + a * 100, 100));
    expect(await stored(at)).toMatchObject({ fragments: 5, vectorIndex: false });
    await index.maintain('t');
    expect(await stored(at)).toEqual({ fragments: 1, rows: 402, vectorIndex: true });
    await index.add('t', rows(403, 50));
    await index.maintain('t', 'force');
    expect(await stored(at)).toEqual({ fragments: 2, rows: 452, vectorIndex: true });
    await index.close();
  }, 60_000);
});
