// A commit group as the graph engine stores it: per table, the column names and types and each row's
// cells in column order. Both ways rows reach Kuzu (a journal copied in later, or a COPY at once) and the
// journal's records are built from these, so a row is turned into cells in one place.

/** A cell as the ledger hands it over: text, an integer (microseconds, seq), a float, or absent. */
export type Cell = string | number | null;
export type Scalar = 'text' | 'int' | 'float' | 'json';

/** The part of a table spec the write path needs; kuzu-graph.ts's TableSpec is one. */
export interface RowTable<Row> {
  table: string;
  columns: readonly { name: string; type: Scalar; get: (row: Row) => Cell }[];
}

/**
 * One table's rows as a write path sees them. Built by tableRows, so the row type is checked where the
 * spec meets its rows.
 */
export interface TableRows {
  table: string;
  columns: readonly { name: string; type: Scalar }[];
  count: number;
  cells(): Iterable<Cell[]>;
}

export function tableRows<R>(spec: RowTable<R>, rows: readonly R[]): TableRows {
  return {
    table: spec.table,
    columns: spec.columns,
    count: rows.length,
    *cells() {
      for (const row of rows) yield spec.columns.map((c) => c.get(row));
    },
  };
}

/** Rows already turned into cells (a journal record's) under a table's columns. */
export function cellRows(table: Pick<TableRows, 'table' | 'columns'>, rows: readonly Cell[][]): TableRows {
  return { table: table.table, columns: table.columns, count: rows.length, cells: () => rows };
}

/**
 * Refuses a cell the engine would store as something else: a non-finite number, or in an INT64 column a
 * fraction or an integer past 2^53 (it would be rounded). Checked before a row is journaled or staged, so
 * a bad row fails its own write, never a later copy of the journal.
 */
export function checkCell(value: Cell, type: Scalar): void {
  if (value === null || type === 'text' || type === 'json') return;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new TypeError(`non-finite number in a ${type} column`);
  if (type === 'int' && !Number.isSafeInteger(value)) throw new TypeError(`not a safe integer in an int column: ${value}`);
}
