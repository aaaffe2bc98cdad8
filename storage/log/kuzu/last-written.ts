// The store's latest capture instant and sequence numbers, read on every open without scanning whole
// columns, which grow with the ledger (docs/storage.md, "Start-up reads"). Each maximum is asked of the
// engine above a floor remembered from the last read (`last-written.json` beside the store): Kuzu skips
// every column chunk whose zone map lies below the floor, so what is read is the rows written since.
//
// The answer is exact whatever the file holds: a column's maximum above a floor is its maximum when a row
// reaches the floor, and when none does (a floor from a copied file, rows since deleted, a damaged file)
// the whole column is read. A floor is never taken as a value, so a wrong file cannot move the clock.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BATCH, DECLARATION, EDGE, INVALIDATION, NODE, VERDICT } from './tables.ts';

export const LAST_WRITTEN_FILE = 'last-written.json';

/** The columns whose maxima make up the store's latest: each table's clock, its tseq and (all but Batch) its seq. */
const COLUMNS: readonly { table: string; clock: string; seq: boolean }[] = [
  { table: BATCH.table, clock: 'captured_at', seq: false },
  { table: NODE.table, clock: 'captured_at', seq: true },
  { table: EDGE.table, clock: 'captured_at', seq: true },
  { table: DECLARATION.table, clock: 'declared_at', seq: true },
  { table: VERDICT.table, clock: 'decided_at', seq: true },
  { table: INVALIDATION.table, clock: 'invalidated_at', seq: true },
];

export interface LastWritten {
  instant: number;
  seq: number;
  tseq: number;
}

/** Floors by `<table>.<column>`. */
export type Floors = Record<string, number>;

/** The floors the last read left, or none when the file is missing or is not what this writes. */
export function readFloors(dir: string): Floors {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(join(dir, LAST_WRITTEN_FILE), 'utf8'));
  } catch {
    return {};
  }
  const floors: Floors = {};
  if (parsed && typeof parsed === 'object')
    for (const [key, value] of Object.entries(parsed)) if (Number.isSafeInteger(value)) floors[key] = value as number;
  return floors;
}

/** Saved through a rename: a stop while writing leaves the previous file, which is only slower to use. */
export function saveFloors(dir: string, floors: Floors): void {
  const path = join(dir, LAST_WRITTEN_FILE);
  writeFileSync(`${path}.tmp`, JSON.stringify(floors));
  renameSync(`${path}.tmp`, path);
}

/**
 * The latest written, each column's maximum asked above its floor first; `max` runs one query and returns
 * its `m` (null for no row). Returns the maxima found as the next floors too.
 */
export async function lastWritten(
  max: (statement: string) => Promise<number | null>,
  floors: Floors,
): Promise<{ last: LastWritten; floors: Floors }> {
  const last: LastWritten = { instant: 0, seq: 0, tseq: 0 };
  const found: Floors = {};
  for (const { table, clock, seq } of COLUMNS) {
    const columns: [string, keyof LastWritten][] = [
      [clock, 'instant'],
      ['tseq', 'tseq'],
    ];
    if (seq) columns.push(['seq', 'seq']);
    for (const [column, into] of columns) {
      const key = `${table}.${column}`;
      const floor = floors[key];
      const whole = `MATCH (x:${table}) RETURN max(x.${column}) AS m`;
      const top =
        (floor === undefined ? null : await max(`MATCH (x:${table}) WHERE x.${column} >= ${floor} RETURN max(x.${column}) AS m`)) ??
        (await max(whole));
      if (top === null) continue;
      found[key] = top;
      last[into] = Math.max(last[into], top);
    }
  }
  return { last, floors: found };
}
