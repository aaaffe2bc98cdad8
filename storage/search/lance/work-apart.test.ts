// A large table's vector index builds and optimizes run in a child process: the server's handle then
// finds the child's work committed, rows appended meanwhile are still found, and work that fails or is
// ended says so.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { indexRow, unitVectors as vectors } from '../../../test/helpers/rows.ts';
import { LanceIndex } from './lance-index.ts';
import { WorkApartRunner } from './work-apart.ts';

const dir = mkdtempSync(join(tmpdir(), 'work-apart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe("a large table's heavy maintenance in a child process", () => {
  it('builds vector indexes into the table the server holds, and rows appended meanwhile are found', async () => {
    const at = join(dir, 'apart');
    // The children's temporary files land in the index's own folder, not in the server's TMPDIR.
    const serverTmp = mkdtempSync(join(dir, 'server-tmp-'));
    vi.stubEnv('TMPDIR', serverTmp);
    const index = await LanceIndex.open(at, 8, 4, 0, 0, 0, { indexRows: 300, exactRows: 0 });
    const vs = vectors(450, 8, 7);
    const ws = vectors(450, 4, 11);
    for (let a = 0; a < 402; a += 134)
      await index.add(
        't',
        vs.slice(a, a + 134).map((vector, k) => indexRow(a + k, { vector, wvec: ws[a + k]! })),
      );
    const hnsw = vi.spyOn(lancedb.Index, 'hnswSq');
    const build = WorkApartRunner.prototype.vectorIndex;
    const columns: string[] = [];
    let appended = false;
    vi.spyOn(WorkApartRunner.prototype, 'vectorIndex').mockImplementation(async function (this: WorkApartRunner, work) {
      columns.push(work.column);
      const done = build.call(this, work);
      if (!appended) {
        appended = true;
        await index.add(
          't',
          vs.slice(402).map((vector, k) => indexRow(402 + k, { vector, wvec: ws[402 + k]! })),
        );
      }
      return done;
    });
    await index.maintain('t', 'force');
    expect(columns).toEqual(['vector', 'wvec']);
    expect(hnsw).not.toHaveBeenCalled();
    // The handle searches use sees both, although the index was committed by another process.
    expect(await index.indexedColumns('t')).toEqual(expect.arrayContaining(['vector', 'wvec']));
    const db = await lancedb.connect(at);
    const names = await db.tableNames();
    const table = await db.openTable(names[0]!);
    const indexed = (await table.listIndices()).flatMap((i) => i.columns);
    expect(indexed).toEqual(expect.arrayContaining(['vector', 'wvec']));
    expect(await table.countRows()).toBe(450);
    table.close();
    db.close();
    const found: string[] = [];
    for (const i of [0, 200, 401, 420, 449]) {
      const ids = (await index.nearest('t', vs[i]!, { asOf: 9e15 }, 3)).map((hit) => hit.id);
      found.push(ids.includes(`n${i}`) ? `n${i}` : `not found: ${ids.join(', ')}`);
    }
    expect(found).toEqual(['n0', 'n200', 'n401', 'n420', 'n449']);
    await index.close();
    // LanceDB shuffled the rows through files in the child's TMPDIR and left them there; each child's
    // folder went with the child. (The server's own LanceDB keeps an empty folder there while it runs.)
    const files = readdirSync(serverTmp, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
    expect(files.map((entry) => entry.name)).toEqual([]);
    expect(readdirSync(join(dir, 'work-apart'))).toEqual([]);
  }, 60_000);

  it('optimizes: the full-text index covers every row, and the search answers from it', async () => {
    const index = await LanceIndex.open(join(dir, 'optimize'), 4, 2, 0, 0, 0, { indexRows: 1e9, spacedRows: 100 });
    const rows = (from: number, n: number) => Array.from({ length: n }, (_, k) => indexRow(from + k));
    await index.add('t', rows(1, 120));
    await index.maintain('t', 'force');
    for (let a = 0; a < 5; a++) await index.add('t', rows(121 + a * 3, 3));
    expect(await index.unindexedTextRows('t')).toBe(15);
    const optimize = vi.spyOn(WorkApartRunner.prototype, 'optimize');
    await index.maintain('t', 'force');
    expect(optimize).toHaveBeenCalledTimes(1);
    const counts = await optimize.mock.results[0]!.value;
    expect(counts.fragmentsRemoved).toBeGreaterThan(1);
    // Read through the server's handle: the child's commit is seen there.
    expect(await index.unindexedTextRows('t')).toBe(0);
    expect(await index.countRows('t')).toBe(135);
    const found = await index.fullText('t', ['row', '130'], { asOf: 1e9 }, 5);
    expect(found.map((h) => h.seq)).toContain(130);
    await index.close();
  }, 60_000);

  it("remove the temporary folders a killed server's children left, and no running server's", async () => {
    const scratch = join(dir, 'scratch');
    const left = (pid: number) => {
      const folder = join(scratch, `${pid}-t_00-abc`, '.tmpX');
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, 'shuffle_data.lance'), 'x');
      return `${pid}-t_00-abc`;
    };
    const dead = 2 ** 22 + 1; // above Linux's largest pid
    left(dead);
    const mine = left(process.pid);
    mkdirSync(join(scratch, 'not-a-pid'));
    new WorkApartRunner(scratch);
    expect(readdirSync(scratch)).toEqual([mine]);
  });

  it('say why when they fail, and end on a close', async () => {
    const runner = new WorkApartRunner(join(dir, 'scratch-fail'));
    const work = {
      kind: 'vector index' as const,
      dir: join(dir, 'none'),
      table: 't_00',
      column: 'vector',
      numPartitions: 1,
      efConstruction: 150,
    };
    await expect(runner.vectorIndex(work)).rejects.toThrow(/the vector index of t_00 was not built: its process exited with 1: .+/);
    await expect(runner.optimize({ kind: 'optimize', dir: join(dir, 'none'), table: 't_00', cleanupOlderThan: 0 })).rejects.toThrow(
      /t_00 was not optimized: its process exited with 1: .+/,
    );
    const running = runner.vectorIndex(work);
    await runner.end();
    await expect(running).rejects.toThrow(/was ended by SIGKILL/);
    expect(readdirSync(join(dir, 'scratch-fail'))).toEqual([]);
  }, 30_000);
});
