// A stop during the index builds of a large table (minutes of HNSW at millions of rows) leaves some indexes
// built and others not. The next start builds the rest without waiting for a write, and counting the table
// indexed because `vector` is must not leave it without the others: without the `space` bitmap, a space's
// first search read the whole column (~100 ms at 2.8M rows against ~2 ms).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, describe, expect, it } from 'vitest';
import { indexRow } from '../../../test/helpers/rows.ts';
import { Ledger } from '../../log/ledger.ts';
import { LocalEmbedder } from '../embed/local-embedder.ts';
import { WordVectors } from '../embed/word-vectors.ts';
import { SearchIndex } from '../search-index.ts';
import { LanceIndex } from './lance-index.ts';

const dir = mkdtempSync(join(tmpdir(), 'index-repair-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ALL = ['category', 'kind', 'known_at', 'space', 'text', 'vector', 'wvec'];

/** The columns indexed in the one table under `at`; `drop` removes those columns' indexes first. */
async function indexedColumns(at: string, drop: string[] = []): Promise<string[]> {
  const db = await lancedb.connect(at);
  const [table] = await Promise.all((await db.tableNames()).map((t) => db.openTable(t)));
  for (const column of drop) await table!.dropIndex(`${column}_idx`);
  const columns = (await table!.listIndices()).flatMap((i) => i.columns).sort();
  table!.close();
  db.close();
  return columns;
}

describe('indexes a stop cut short', () => {
  it('are built by the next maintenance, although the vector index exists', async () => {
    const at = join(dir, 'tables');
    let index = await LanceIndex.open(at, 4, 2, 0, 0, 0, { indexRows: 300 });
    await index.add(
      't',
      Array.from({ length: 400 }, (_, k) => indexRow(k + 1)),
    );
    await index.maintain('t');
    await index.close();
    // As a stop during the word vectors' build leaves it: `vector` built, the rest not.
    expect(await indexedColumns(at, ['wvec', 'known_at', 'space', 'kind', 'category'])).toEqual(['text', 'vector']);

    index = await LanceIndex.open(at, 4, 2, 0, 0, 0, { indexRows: 300 });
    expect(await index.tenantsMissingIndexes()).toEqual(['t']);
    await index.maintain('t');
    expect(await index.tenantsMissingIndexes()).toEqual([]);
    await index.close();
    expect(await indexedColumns(at)).toEqual(ALL);
  }, 60_000);

  it('are built once the search index has caught up with the store, with no write', async () => {
    const ledger = await Ledger.open(join(dir, 'data'));
    const at = join(dir, 'search');
    const open = () => SearchIndex.open(at, new LocalEmbedder(), ledger, WordVectors.load(), undefined, { indexRows: 300 });
    let index = await open();
    await ledger.write('t', {
      space: 's',
      nodes: Array.from({ length: 400 }, (_, k) => ({ id: `n${k}`, kind: 'claim', statement: `Harbour crane ${k} broke down` })),
      edges: [],
    });
    await index.caughtUp('t');
    await index.settled();
    await index.close();
    expect(await indexedColumns(join(at, 'tables'), ['wvec', 'space'])).toEqual(['category', 'kind', 'known_at', 'text', 'vector']);

    index = await open();
    await index.idle();
    await index.close();
    await ledger.close();
    expect(await indexedColumns(join(at, 'tables'))).toEqual(ALL);
  }, 60_000);
});
