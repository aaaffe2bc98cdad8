// An optimize removes the table's versions older than the index keeps (LanceDB's default keeps them, and
// the files they alone reference, 7 days), and every row stays.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, describe, expect, it } from 'vitest';
import { indexRow } from '../../../test/helpers/rows.ts';
import { KEEP_VERSIONS_MS, LanceIndex } from './lance-index.ts';

const dir = mkdtempSync(join(tmpdir(), 'version-cleanup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Ten appends, then a forced optimize; the versions and rows the tenant's table holds afterwards. */
async function afterOptimize(name: string, keepVersionsMs: number): Promise<{ versions: number; rows: number }> {
  const at = join(dir, name);
  const index = await LanceIndex.open(at, 4, 2, 0, 0, 0, { keepVersionsMs });
  for (let a = 0; a < 10; a++) await index.add('t', [indexRow(2 * a + 1), indexRow(2 * a + 2)]);
  await index.maintain('t', 'force');
  await index.close();
  const db = await lancedb.connect(at);
  const [table] = await Promise.all((await db.tableNames()).map((t) => db.openTable(t)));
  const out = { versions: (await table!.listVersions()).length, rows: await table!.countRows() };
  table!.close();
  db.close();
  return out;
}

describe('versions an optimize leaves', () => {
  it('are those younger than the index keeps, and every row stays', async () => {
    expect(KEEP_VERSIONS_MS).toBeLessThanOrEqual(3_600_000);
    const kept = await afterOptimize('kept', 3_600_000);
    const cleaned = await afterOptimize('cleaned', 0);
    expect(kept.rows).toBe(20);
    expect(cleaned.rows).toBe(20);
    expect(kept.versions).toBeGreaterThan(10);
    expect(cleaned.versions).toBeLessThan(kept.versions);
    expect(cleaned.versions).toBeLessThanOrEqual(3);
  });
});
