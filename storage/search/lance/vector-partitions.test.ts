// A vector index over a large table is built in IVF partitions, one graph each, so its build's CPU a row
// and peak memory stop growing with one graph over the whole table; a small table keeps one graph.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { indexRow, unitVectors as vectors } from '../../../test/helpers/rows.ts';
import { HNSW_PARTITION_ROWS, hnswPartitions, LanceIndex } from './lance-index.ts';

const dir = mkdtempSync(join(tmpdir(), 'vector-partitions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

describe('vector index partitions', () => {
  it('grow with the rows from one partition per HNSW_PARTITION_ROWS', () => {
    expect(hnswPartitions(20_000)).toBe(1);
    expect(hnswPartitions(HNSW_PARTITION_ROWS)).toBe(1);
    expect(hnswPartitions(HNSW_PARTITION_ROWS + 1)).toBe(2);
    expect(hnswPartitions(2_400_000)).toBe(74);
    expect(hnswPartitions(402, 100)).toBe(5);
  });

  async function built(partitionRows: number | undefined): Promise<{ partitions: (number | undefined)[]; first: string[] }> {
    const hnsw = vi.spyOn(lancedb.Index, 'hnswSq');
    const at = join(dir, `p${partitionRows ?? 'default'}`);
    const index = await LanceIndex.open(at, 8, 4, 0, 0, 0, {
      indexRows: 300,
      exactRows: 0,
      // Built here, where the spy sees LanceDB asked (work-apart.test.ts covers the child process).
      workApart: false,
      ...(partitionRows === undefined ? {} : { partitionRows }),
    });
    const vs = vectors(402, 8, 7);
    const ws = vectors(402, 4, 11);
    for (let a = 0; a < 402; a += 134)
      await index.add(
        't',
        vs.slice(a, a + 134).map((vector, k) => indexRow(a + k, { vector, wvec: ws[a + k]! })),
      );
    await index.maintain('t', 'force');
    const partitions = hnsw.mock.calls.map(([options]) => options?.numPartitions);
    // The index answers (exactRows 0): each probed row's own vector finds it among its 3 nearest. Not
    // first: the index quantizes the vectors and trains its partitions on a random sample, so a close
    // neighbour outranked the row itself in one CI run (n201 for n57).
    const first: string[] = [];
    for (const i of [0, 57, 200, 401]) {
      const ids = (await index.nearest('t', vs[i]!, { asOf: 9e15 }, 3)).map((hit) => hit.id);
      first.push(ids.includes(`n${i}`) ? `n${i}` : `not found: ${ids.join(', ')}`);
    }
    await index.close();
    return { partitions, first };
  }

  it('are asked of LanceDB for both vector columns, and the index still finds each row', async () => {
    expect(await built(100)).toEqual({ partitions: [5, 5], first: ['n0', 'n57', 'n200', 'n401'] });
  }, 60_000);

  it('stay one graph for a table under HNSW_PARTITION_ROWS', async () => {
    expect(await built(undefined)).toEqual({ partitions: [1, 1], first: ['n0', 'n57', 'n200', 'n401'] });
  }, 60_000);
});
