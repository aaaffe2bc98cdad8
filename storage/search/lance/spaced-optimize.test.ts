// A large table nobody searches at LanceDB is not optimized at every pause in writes (each optimize
// rewrites the whole table below LanceDB's 1M-row compaction target); a full-text search that reaches it
// makes the next pause optimize it, and a small table is optimized at every pause as before.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { indexRow } from '../../../test/helpers/rows.ts';
import { LanceIndex } from './lance-index.ts';

const dir = mkdtempSync(join(tmpdir(), 'spaced-optimize-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rows = (from: number, n: number) => Array.from({ length: n }, (_, k) => indexRow(from + k));

async function appendsOf(index: LanceIndex, tenant: string, from: number): Promise<void> {
  for (let a = 0; a < 5; a++) await index.add(tenant, rows(from + a * 3, 3));
}

/**
 * An index whose table `t` holds 120 optimized rows and five appends of 3 rows after them. No in-memory
 * full text (textMirrorRows 0), no vector index: only the spacing is under test.
 */
async function withAppends(name: string, spacedRows: number): Promise<LanceIndex> {
  const index = await LanceIndex.open(join(dir, name), 4, 2, 0, 0, 0, { indexRows: 1e9, spacedRows });
  await index.add('t', rows(1, 120));
  await index.maintain('t', 'force');
  await appendsOf(index, 't', 121);
  return index;
}

describe('optimizes of a large table', () => {
  it('wait while nobody searches it at LanceDB, and follow the first search that does', async () => {
    const index = await withAppends('large', 100);
    expect(await index.maintain('t', 'pause')).toBe('spaced');
    expect(await index.wantsSettle('t')).toBe(false);
    const found = await index.fullText('t', ['row', '130'], { asOf: 1e9 }, 5);
    expect(found.map((h) => h.seq)).toContain(130); // the unindexed rows are flat-scanned meanwhile
    expect(await index.wantsSettle('t')).toBe(true);
    expect(await index.maintain('t', 'pause')).toBe('settled');
    expect(await index.wantsSettle('t')).toBe(false);
    await appendsOf(index, 't', 200);
    expect(await index.maintain('t', 'force')).toBe('settled');
    await index.close();
  }, 60_000);

  it('are not spaced below the size', async () => {
    const index = await withAppends('small', 1_000);
    expect(await index.maintain('t', 'pause')).toBe('settled');
    await index.close();
  }, 60_000);
});
