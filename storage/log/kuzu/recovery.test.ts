// The journal's recovery without the engine: its probe of stored keys is a set here.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cellRows, type Cell, type Scalar } from './table-rows.ts';
import type { JournalRecord } from './write-journal.ts';
import { landed, renumbered, storedPrefix } from './recovery.ts';

const dir = mkdtempSync(join(tmpdir(), 'recovery-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Rows of `table` under two named, typed columns. */
const rowsOf =
  (table: string, [first, second]: [[string, Scalar], [string, Scalar]]) =>
  (rows: Cell[][]) =>
    cellRows({ table, columns: [first, second].map(([name, type]) => ({ name, type })) }, rows);
const blocks = rowsOf('Block', [
  ['seq', 'int'],
  ['id', 'text'],
]);
const holds = rowsOf('HoldsBlock', [
  ['space_key', 'text'],
  ['row_seq', 'int'],
]);
const record = (seq: number): JournalRecord => ({ tables: [{ table: 'Block', rows: [[seq, `"n${seq}"`]] }] });

describe('journal recovery', () => {
  it('renumbers rows above every number used, past a gap that grows with each recovery, Holds rows following theirs', async () => {
    const parts = [
      blocks([
        [12, 'b'],
        [11, 'a'],
      ]),
      holds([
        ['s', 11],
        ['s', 12],
        ['t', 99],
      ]),
    ];
    const first = await renumbered(parts, dir, 20);
    expect(readFileSync(join(dir, 'recoveries'), 'utf8')).toBe('1');
    expect(first.lowest).toBe(11);
    // In the order of their old numbers, above max(20, 12) + 1,000,000.
    expect([...first.parts[0]!.cells()]).toEqual([
      [1_000_021, 'a'],
      [1_000_022, 'b'],
    ]);
    // A Holds row points at its row's new number; one whose row is not in the journal keeps its own.
    expect([...first.parts[1]!.cells()]).toEqual([
      ['s', 1_000_021],
      ['s', 1_000_022],
      ['t', 99],
    ]);
    const second = await renumbered(parts, dir, 20);
    expect(readFileSync(join(dir, 'recoveries'), 'utf8')).toBe('2');
    expect([...second.parts[0]!.cells()].map((r) => r[0])).toEqual([2_000_021, 2_000_022]);
    expect((await renumbered([blocks([])], dir, 5)).lowest).toBeNull();
  });

  it('finds the stored prefix of the journal, and whether a failed commit landed, by primary-key probes', async () => {
    const stored = new Set([1, 2, 3]);
    const probes: Cell[] = [];
    const probe = async (table: string, key: Cell) => {
      probes.push(key);
      return table === 'Block' && stored.has(Number(key));
    };
    expect(await storedPrefix([1, 2, 3, 4, 5, 6, 7, 8].map(record), probe)).toBe(3);
    expect(probes.length).toBeLessThanOrEqual(4); // a binary search, not one probe a record
    expect(await storedPrefix([4, 5].map(record), probe)).toBe(0);
    expect(await landed([blocks([[2, 'x']])], probe)).toBe(true);
    expect(await landed([blocks([[9, 'x']])], probe)).toBe(false);
    expect(await landed([blocks([[2, 'x']])], () => Promise.reject(new Error('engine gone')))).toBe(false);
  });
});
