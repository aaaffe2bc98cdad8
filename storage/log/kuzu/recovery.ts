// Recovery of the write journal after a crash, apart from the engine: which records the engine holds
// already, whether a copy whose commit reported a failure landed anyway, and the journal's rows moved to
// numbers no interrupted copy can have used. The engine is asked through `stored` (one primary-key lookup).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cellRows, type Cell, type TableRows } from './table-rows.ts';
import { syncDir, type JournalRecord } from './write-journal.ts';
import { isHolds, isRowTable, keyColumn, specOf } from './tables.ts';

/** Whether the row of `table` whose primary key is `key` is stored in the engine. */
export type StoredProbe = (table: string, key: Cell) => Promise<boolean>;

/** How far past every number used before a recovery renumbers the journal's rows (see renumbered). */
const RENUMBER_GAP = 1_000_000;

/** The primary key of `row`, whose cells are in the order of `columns`, in `table`. */
const keyOf = (table: string, columns: readonly { name: string }[], row: readonly Cell[]): Cell =>
  row[columns.findIndex((c) => c.name === keyColumn({ table }))] ?? null;

/** How many of `records`, from the first, are stored (a binary search on one key of each record). */
export async function storedPrefix(records: readonly JournalRecord[], stored: StoredProbe): Promise<number> {
  const probe = async (r: JournalRecord): Promise<boolean> => {
    const t = r.tables.find((x) => x.rows.length > 0 && isRowTable(x.table));
    const row = t?.rows[0];
    if (!t || !row) return true;
    return stored(t.table, keyOf(t.table, specOf(t.table).columns, row));
  };
  let lo = 0,
    hi = records.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (await probe(records[mid]!)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Whether the transaction that wrote `parts` is stored (false when the engine cannot say). It is atomic,
 * and sequence numbers are never reused, so one row's primary key answers for all.
 */
export async function landed(parts: readonly TableRows[], stored: StoredProbe): Promise<boolean> {
  const part = parts.find((p) => p.count > 0 && isRowTable(p.table));
  const [row] = part ? part.cells() : [];
  if (!part || !row) return false;
  try {
    return await stored(part.table, keyOf(part.table, part.columns, row));
  } catch {
    return false;
  }
}

/**
 * The journal's rows under new sequence numbers, in the same order, above every number used before
 * (`top`, the engine's highest, or a row's own when higher), and the lowest number they had (null: none).
 * Kuzu 0.11.3 keeps the primary-key index entries of a transaction a SIGKILL interrupted: measured
 * here, after a kill during a copy of the journal, the rows were not there but inserting their keys
 * failed with "Found duplicated primary key value" at every later open. A key an interrupted copy may
 * have used is therefore never inserted again: the rows take numbers past a gap that grows with every
 * recovery (counted in `dir`/recoveries, durably, before the copy), so a recovery killed in turn does not
 * reuse its own numbers either. Rows refer to each other by id, never by sequence number.
 */
export async function renumbered(
  parts: readonly TableRows[],
  dir: string,
  top: number,
): Promise<{ parts: TableRows[]; lowest: number | null }> {
  const file = join(dir, 'recoveries');
  const existed = existsSync(file);
  const count = existed ? Number(readFileSync(file, 'utf8')) || 0 : 0;
  writeFileSync(file, String(count + 1), { flush: true });
  if (!existed) syncDir(dir);
  let lowest = Number.POSITIVE_INFINITY;
  const seqAt = parts.map((part) => part.columns.findIndex((c) => c.name === 'seq'));
  const numbered: { part: number; row: Cell[]; at: number; old: number }[] = [];
  parts.forEach((part, i) => {
    const at = seqAt[i] ?? -1;
    if (at < 0) return;
    for (const row of part.cells()) {
      const old = Number(row[at]);
      numbered.push({ part: i, row, at, old });
      top = Math.max(top, old);
      lowest = Math.min(lowest, old);
    }
  });
  const base = top + RENUMBER_GAP * (count + 1);
  numbered.sort((a, b) => a.old - b.old);
  const rows: Cell[][][] = parts.map(() => []);
  const renumber = new Map<number, number>();
  numbered.forEach(({ part, row, at, old }, i) => {
    const copy = [...row];
    copy[at] = base + i + 1;
    renumber.set(old, base + i + 1);
    rows[part]!.push(copy);
  });
  const moved = parts.map((part, i) => {
    // A Holds row points at its row's number, which moved with it (numbers are unique across tables).
    if (isHolds(part.table)) {
      const to = part.columns.findIndex((c) => c.name === 'row_seq');
      return cellRows(
        part,
        [...part.cells()].map((row) => row.map((v, c) => (c === to ? (renumber.get(Number(v)) ?? v) : v))),
      );
    }
    return (seqAt[i] ?? -1) < 0 ? part : cellRows(part, rows[i]!);
  });
  return { parts: moved, lowest: numbered.length > 0 ? lowest : null };
}
