// Small commit groups through prepared statements: one `CREATE (:Table {col: $col, ...})` per table,
// prepared once on the writer connection and executed once per row. A CSV-staged COPY has a fixed price
// per statement (file write, parse, scan) of tens of milliseconds on this machine, while one prepared
// row costs ~0.45 ms; a one-node-one-edge write paid ~50 ms for what bare Kuzu does in ~1 ms.
//
// Rows are bound one by one, never as an `UNWIND $rows` list: the engine types a list of JS objects from
// its first element, and measured here a later row's integer in a DOUBLE field was stored as the raw bits
// (2 came back as 1e-323), a null in the first row failed the statement ("vector with ANY type"). Scalar
// parameters are cast by the engine to the column's type, checked for INT64, DOUBLE and NULL.
//
// This file declares the few methods it needs of the engine (like Kysely's dialect ports) instead of
// importing it: every import of `kuzu` stays in kuzu-graph.ts.

/** A cell as the ledger hands it over: text, an integer (microseconds, seq), a float, or absent. */
export type Cell = string | number | null;
export type Scalar = 'text' | 'int' | 'float' | 'json';

/** The part of a table spec this path needs; kuzu-graph.ts's TableSpec is one. */
export interface PreparedTable<Row> {
  table: string;
  columns: readonly { name: string; type: Scalar; get: (row: Row) => Cell }[];
}

/** A parameter value as the engine binds it. A JS number that is a safe integer binds as INT64. */
export type Param = string | number | null;

/** The subset of a Kuzu connection this path uses. */
export interface PreparingConnection<Stmt> {
  prepare(statement: string): Promise<Stmt>;
  execute(statement: Stmt, params: Record<string, Param>): Promise<unknown>;
}

/**
 * The value a cell is stored as, exactly as the COPY path stores it (see csvCell in kuzu-graph.ts):
 * text is JSON-encoded, so an empty string (`""`) stays distinct from NULL and NUL or newlines never reach
 * the engine raw; numbers are stored as they are.
 */
export function paramOf(value: Cell, type: Scalar): Param {
  if (value === null) return null;
  if (type === 'text' || type === 'json') return JSON.stringify(value);
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new TypeError(`non-finite number in a ${type} column`);
  // A non-integer or an integer past 2^53 would bind as DOUBLE and be rounded into the INT64 column.
  if (type === 'int' && !Number.isSafeInteger(value)) throw new TypeError(`not a safe integer in an int column: ${value}`);
  return value;
}

/**
 * One table's rows as a write path sees them: the column names and types, and each row's cells in
 * column order. Built by tableRows, so the row type is checked where the spec meets its rows.
 */
export interface TableRows {
  table: string;
  columns: readonly { name: string; type: Scalar }[];
  count: number;
  cells(): Iterable<Cell[]>;
}

export function tableRows<R>(spec: PreparedTable<R>, rows: readonly R[]): TableRows {
  return {
    table: spec.table,
    columns: spec.columns,
    count: rows.length,
    *cells() {
      for (const row of rows) yield spec.columns.map((c) => c.get(row));
    },
  };
}

export function createStatement(part: Pick<TableRows, 'table' | 'columns'>): string {
  return `CREATE (:${part.table} {${part.columns.map((c) => `${c.name}: $${c.name}`).join(', ')}})`;
}

/** Prepared CREATE statements per table, made on first use on one connection. */
export class PreparedInserts<Stmt> {
  readonly #conn: PreparingConnection<Stmt>;
  readonly #close: (result: unknown) => void;
  readonly #statements = new Map<string, Stmt>();

  /** `close` releases an execution's result at once (see kuzu-graph.ts: results left to the GC crash). */
  constructor(conn: PreparingConnection<Stmt>, close: (result: unknown) => void) {
    this.#conn = conn;
    this.#close = close;
  }

  /** Prepares what `parts` needs; call it outside a transaction so a failed prepare leaves nothing open. */
  async ready(parts: readonly TableRows[]): Promise<void> {
    for (const part of parts) {
      if (part.count === 0 || this.#statements.has(part.table)) continue;
      this.#statements.set(part.table, await this.#conn.prepare(createStatement(part)));
    }
  }

  /** Inserts every row, one execution each; the caller owns the transaction around it. */
  async insert(parts: readonly TableRows[]): Promise<void> {
    for (const part of parts) {
      if (part.count === 0) continue;
      const stmt = this.#statements.get(part.table);
      if (stmt === undefined) throw new Error(`no prepared insert for ${part.table}: call ready() first`);
      for (const cells of part.cells()) {
        const params: Record<string, Param> = {};
        part.columns.forEach((c, i) => {
          params[c.name] = paramOf(cells[i] ?? null, c.type);
        });
        this.#close(await this.#conn.execute(stmt, params));
      }
    }
  }
}
