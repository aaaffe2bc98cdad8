// The vector columns of a tenant's small table, held in memory and scanned in JS. Below HNSW_MIN_ROWS
// LanceDB answers a nearest-vector query by a flat scan too, but each query costs ~1 ms of planning plus
// reading and decoding the whole column from the table's files (~3 ms at 600 rows × 384 dimensions,
// ~11 ms at 6,000), and a search asks two of them (the embedder's and the word vectors). The same scan over
// vectors already in memory takes a fraction of that. The answers are LanceDB's: the same prefilter
// (wherePredicate, in JS), cosine distance rounded to float32, rows with a zero vector left out, ties in
// write order. Tables with a vector index are searched by LanceDB; mirrors beyond a byte budget are dropped,
// least recently used first, and reloaded from the table when next searched.
import type { Table as ArrowTable, Vector as ArrowVector } from 'apache-arrow';
import type { Hit, RowFilter } from '../index-row.ts';
import { loopTurn } from '../../loop-turns.ts';

/** The columns of one row the mirror keeps: the prefilter's and the two vector columns. */
export interface MirrorRow {
  id: string;
  seq: number;
  space: string;
  kind: string;
  category: string | null;
  known_at: number;
  asserted_at: number;
  valid_from: number;
  valid_to: number;
  vector: Float32Array;
  wvec?: Float32Array | undefined;
}

/** A row's prefilter columns (its vectors live in the mirror's flat buffers). */
type Scalars = Omit<MirrorRow, 'vector' | 'wvec'>;

/** Dot product, four lanes at a time (about twice as fast as one in V8). */
export function dot(a: Float32Array, at: number, q: Float32Array): number {
  const d = q.length;
  let s0 = 0,
    s1 = 0,
    s2 = 0,
    s3 = 0,
    i = 0;
  for (; i + 3 < d; i += 4) {
    s0 += a[at + i]! * q[i]!;
    s1 += a[at + i + 1]! * q[i + 1]!;
    s2 += a[at + i + 2]! * q[i + 2]!;
    s3 += a[at + i + 3]! * q[i + 3]!;
  }
  for (; i < d; i++) s0 += a[at + i]! * q[i]!;
  return s0 + s1 + s2 + s3;
}

/**
 * The size a full buffer grows to: an eighth more, at least 16. A space's copy is read whole into buffers
 * of its size, and a searched space then takes a write or two: doubling held up to twice each copy's
 * vectors (200 spaces of 50 rows with one write each: ~39 MB of vectors for ~19.5 MB of rows, against the
 * copies' 64 MB budget), so fewer copies fit and more were dropped and read again.
 */
const grown = (n: number): number => n + Math.max(16, n >> 3);

/** `old`'s cells in a buffer of at least `length` (`old` itself when it is long enough). */
function atLeast<T extends Float32Array | Float64Array | Uint16Array | Int32Array>(old: T, length: number, make: (n: number) => T): T {
  if (length <= old.length) return old;
  const next = make(length);
  next.set(old);
  return next;
}

/** Bytes a cell of a row stored sparse takes: its value (float32) and its position (uint16). */
const SPARSE_CELL_BYTES = 6;

export function nonZeroCells(v: Float32Array): number {
  let n = 0;
  for (let i = 0; i < v.length; i++) if (v[i] !== 0) n++;
  return n;
}

/** Whether a row of `cells` non-zero cells out of `dimension` takes less memory as pairs. */
export const keptSparse = (cells: number, dimension: number): boolean => cells * SPARSE_CELL_BYTES < dimension * 4;

/**
 * One vector column: each row's vector and its norm. A row with few non-zero cells is kept as (position,
 * value) pairs: the local embedder hashes a short memory's words, bigrams and trigrams into ~40–120 of its
 * 384 buckets, so most of its vector is zeros (1,536 bytes dense, ~250–700 as pairs), and the copies'
 * budget holds about twice the rows. A denser row (a remote model's) is kept whole. Both give the same
 * distance to the last bit: the sparse dot adds the same products into the same four lanes in the same
 * order, leaving out only products with zero, which change no sum.
 */
class Column {
  #dense = new Float32Array(0);
  #denseRows = 0;
  #values = new Float32Array(0);
  #positions = new Uint16Array(0);
  #sparseCells = 0;
  /** Row i's first cell: in the dense buffer (a multiple of the dimension) or among the pairs. */
  #at = new Int32Array(0);
  /** Row i's pairs, or -1 when it is kept dense. */
  #cells = new Int32Array(0);
  #norms = new Float64Array(0);
  #rows = 0;
  dimension = -1;

  /** Makes room for `vectors` exactly, so that a copy read whole is held in buffers of its size. */
  reserve(vectors: readonly (Float32Array | undefined)[]): void {
    if (this.dimension < 0) this.dimension = vectors.find((v) => v !== undefined)?.length ?? -1;
    const d = this.dimension;
    let cells = 0;
    let dense = 0;
    for (const v of vectors) {
      if (!v || v.length !== d) continue;
      const n = nonZeroCells(v);
      if (keptSparse(n, d)) cells += n;
      else dense++;
    }
    this.#rowsFor(this.#rows + vectors.length);
    this.#pairsFor(this.#sparseCells + cells);
    this.#denseFor(this.#denseRows + dense);
  }

  #rowsFor(rows: number): void {
    if (rows <= this.#norms.length) return;
    this.#norms = atLeast(this.#norms, rows, (n) => new Float64Array(n));
    this.#at = atLeast(this.#at, rows, (n) => new Int32Array(n));
    this.#cells = atLeast(this.#cells, rows, (n) => new Int32Array(n));
  }

  #pairsFor(cells: number): void {
    this.#values = atLeast(this.#values, cells, (n) => new Float32Array(n));
    this.#positions = atLeast(this.#positions, cells, (n) => new Uint16Array(n));
  }

  #denseFor(rows: number): void {
    this.#dense = atLeast(this.#dense, rows * Math.max(0, this.dimension), (n) => new Float32Array(n));
  }

  /** Appends the next row's vector. */
  push(v: Float32Array | undefined): void {
    if (this.dimension < 0 && v) this.dimension = v.length;
    const d = Math.max(0, this.dimension);
    const row = this.#rows++;
    if (row >= this.#norms.length) this.#rowsFor(grown(row + 1));
    // A vector of another length (none in practice: the index pads) is kept as a zero vector: never a neighbour.
    if (!v || v.length !== d) {
      this.#norms[row] = 0;
      this.#cells[row] = 0;
      return;
    }
    this.#norms[row] = Math.sqrt(dot(v, 0, v));
    const nonZero = nonZeroCells(v);
    if (keptSparse(nonZero, d)) {
      if (this.#sparseCells + nonZero > this.#values.length) this.#pairsFor(grown(this.#sparseCells + nonZero));
      this.#at[row] = this.#sparseCells;
      this.#cells[row] = nonZero;
      for (let i = 0; i < d; i++) {
        if (v[i] === 0) continue;
        this.#values[this.#sparseCells] = v[i]!;
        this.#positions[this.#sparseCells++] = i;
      }
    } else {
      if ((this.#denseRows + 1) * d > this.#dense.length) this.#denseFor(grown(this.#denseRows + 1));
      this.#at[row] = this.#denseRows * d;
      this.#cells[row] = -1;
      this.#dense.set(v, this.#denseRows++ * d);
    }
  }

  /** Cosine distance from `q` (of norm `qn`) to row `row`, rounded to float32 as LanceDB reports it; NaN for a zero vector. */
  distance(row: number, q: Float32Array, qn: number): number {
    const rn = this.#norms[row] ?? 0;
    if (rn === 0 || q.length !== this.dimension) return Number.NaN;
    const cells = this.#cells[row]!;
    const product = cells < 0 ? dot(this.#dense, this.#at[row]!, q) : sparseDot(this.#values, this.#positions, this.#at[row]!, cells, q);
    return Math.fround(1 - product / (qn * rn));
  }

  get bytes(): number {
    return (
      this.#dense.byteLength +
      this.#values.byteLength +
      this.#positions.byteLength +
      this.#at.byteLength +
      this.#cells.byteLength +
      this.#norms.byteLength
    );
  }
}

/**
 * dot() of a row kept as (position, value) pairs, positions ascending: each product goes to the lane dot()
 * adds it to (position mod 4, or the first lane past the last whole group of four), in the same order.
 */
export function sparseDot(values: Float32Array, positions: Uint16Array, at: number, cells: number, q: Float32Array): number {
  const whole = q.length - (q.length % 4);
  let s0 = 0,
    s1 = 0,
    s2 = 0,
    s3 = 0;
  for (let k = at, end = at + cells; k < end; k++) {
    const i = positions[k]!;
    const p = values[k]! * q[i]!;
    if (i >= whole) s0 += p;
    else {
      const lane = i & 3;
      if (lane === 0) s0 += p;
      else if (lane === 1) s1 += p;
      else if (lane === 2) s2 += p;
      else s3 += p;
    }
  }
  return s0 + s1 + s2 + s3;
}

/** The time half of admits(): a row's known_at, asserted_at, valid_from and valid_to against the filter. */
export function admitsTimes(knownAt: number, assertedAt: number, validFrom: number, validTo: number, f: RowFilter): boolean {
  const asOf = Math.trunc(f.asOf);
  if (f.hidden) {
    if (!(knownAt > asOf)) return false;
  } else if (!f.allKnown && !(knownAt <= asOf)) return false;
  if (f.validAt !== undefined) {
    const v = Math.trunc(f.validAt);
    if (!(assertedAt <= v && validFrom <= v && validTo > v)) return false;
  }
  return f.asserted === undefined || (assertedAt >= Math.trunc(f.asserted.from) && assertedAt < Math.trunc(f.asserted.to));
}

/** The filter's ids as sets, for admits(): those a row must be among (`only`), and those it must not be. */
export function idSets(f: RowFilter): { only?: Set<string>; excluded?: Set<string> } {
  return {
    ...(f.onlyIds !== undefined ? { only: new Set(f.onlyIds) } : {}),
    ...(f.excludeIds !== undefined && f.excludeIds.length > 0 ? { excluded: new Set(f.excludeIds) } : {}),
  };
}

/** Whether the row passes the prefilter `wherePredicate(f)` writes in SQL (lance-index.ts); keep the two in step. */
export function admits(
  r: Omit<MirrorRow, 'vector' | 'wvec'>,
  f: RowFilter,
  only?: ReadonlySet<string>,
  excluded?: ReadonlySet<string>,
): boolean {
  if (!admitsTimes(r.known_at, r.asserted_at, r.valid_from, r.valid_to, f)) return false;
  if (f.space !== undefined && r.space !== f.space) return false;
  if (f.kind !== undefined && r.kind !== f.kind) return false;
  if (f.category !== undefined && r.category !== f.category) return false;
  if (excluded?.has(r.id)) return false;
  if (only && !only.has(r.id)) return false;
  return true;
}

/** One tenant's rows, in write (seq) order. */
export class TenantVectors {
  readonly #rows: Scalars[] = [];
  readonly #vector = new Column();
  readonly #wvec = new Column();
  #maxSeq = Number.NEGATIVE_INFINITY;

  /** Appends rows written after those held (a row at or below the highest seq held is already here). */
  append(rows: readonly MirrorRow[]): void {
    const fresh = rows.filter((r) => r.seq > this.#maxSeq);
    // A copy read whole is sized to its rows; later appends grow the buffers an eighth at a time.
    if (this.#rows.length === 0) {
      this.#vector.reserve(fresh.map((r) => r.vector));
      this.#wvec.reserve(fresh.map((r) => r.wvec));
    }
    for (const r of fresh) {
      if (r.seq <= this.#maxSeq) continue;
      this.#maxSeq = r.seq;
      this.#vector.push(r.vector);
      this.#wvec.push(r.wvec);
      this.#rows.push(cellsOf(r));
    }
  }

  get size(): number {
    return this.#rows.length;
  }

  /** Approximate memory held. */
  get bytes(): number {
    return this.#vector.bytes + this.#wvec.bytes + 200 * this.#rows.length;
  }

  /** The `limit` nearest rows by cosine among those `f` admits, as LanceDB's flat search returns them. */
  nearest(query: Float32Array, f: RowFilter, limit: number, column: 'vector' | 'wvec'): Hit[] {
    const scan = this.#scan(query, f, limit, column);
    scan?.through(this.#rows.length);
    return scan?.hits() ?? [];
  }

  /**
   * The same answer, the scan cut into stretches of `chunk` rows with a turn of the event loop between
   * them: a whole tenant's mirror (up to 20k rows × 384 dimensions, ~5–10 ms) would otherwise hold the loop
   * for the whole scan while lists, gets and writes wait. Rows appended meanwhile are left out: they were
   * committed after the read began, so its as_of cannot see them.
   */
  async nearestInTurns(query: Float32Array, f: RowFilter, limit: number, column: 'vector' | 'wvec', chunk = SCAN_CHUNK): Promise<Hit[]> {
    const scan = this.#scan(query, f, limit, column);
    if (!scan) return [];
    const end = this.#rows.length;
    for (let at = 0; at < end;) {
      at = Math.min(end, at + chunk);
      scan.through(at);
      if (at < end) await loopTurn();
    }
    return scan.hits();
  }

  /** A scan keeping the best `limit` rows, advanced by `through(i)` up to row i; null when nothing can match. */
  #scan(query: Float32Array, f: RowFilter, limit: number, column: 'vector' | 'wvec'): { through(end: number): void; hits(): Hit[] } | null {
    const qn = Math.sqrt(dot(query, 0, query));
    if (qn === 0 || limit <= 0) return null;
    const vectors = column === 'vector' ? this.#vector : this.#wvec;
    const { only, excluded } = idSets(f);
    // The best `limit` so far, nearest first; a later row enters only if strictly nearer (ties keep write order).
    const top: { row: Scalars; distance: number }[] = [];
    let i = 0;
    return {
      through: (end) => {
        for (; i < end; i++) {
          const distance = vectors.distance(i, query, qn);
          if (Number.isNaN(distance)) continue;
          if (top.length >= limit && distance >= top[top.length - 1]!.distance) continue;
          const r = this.#rows[i]!;
          if (!admits(r, f, only, excluded)) continue;
          let at = top.length;
          while (at > 0 && top[at - 1]!.distance > distance) at--;
          top.splice(at, 0, { row: r, distance });
          if (top.length > limit) top.pop();
        }
      },
      hits: () => top.map(({ row, distance }) => ({ id: row.id, seq: row.seq, score: 1 - distance })),
    };
  }
}

/** Rows scanned between turns of the event loop by nearestInTurns: ~1 ms at 384 dimensions. */
const SCAN_CHUNK = 2048;

/** Mirrors of many tenants within a byte budget, least recently used dropped first. */
export class VectorMirrors {
  readonly #budget: number;
  readonly #maxRows: number;
  readonly #mirrors = new Map<string, Promise<TenantVectors | null>>();
  readonly #held = new Map<string, TenantVectors>();

  /** `maxRows`: a tenant's mirror is dropped once it holds more (its table gets a vector index then). */
  constructor(budgetBytes: number, maxRows = Number.POSITIVE_INFINITY) {
    this.#budget = budgetBytes;
    this.#maxRows = maxRows;
  }

  /** Whether a mirror of `rows` rows of `bytesPerRow` each would be kept: ask before loading one. */
  fits(rows: number, bytesPerRow: number): boolean {
    return rows <= this.#maxRows && rows * bytesPerRow <= this.#budget;
  }

  /**
   * The tenant's mirror, loaded by `load` (rows in any order) when absent; null when it would not fit the
   * budget or `load` declines (null): nothing is kept then, and the next call asks `load` again.
   */
  get(tenant: string, load: () => Promise<MirrorRow[] | null>): Promise<TenantVectors | null> {
    const cached = this.#mirrors.get(tenant);
    if (cached) {
      // Most recently used last, for eviction.
      this.#mirrors.delete(tenant);
      this.#mirrors.set(tenant, cached);
      return cached;
    }
    if (this.#budget <= 0) return Promise.resolve(null);
    const loading = load().then((rows) => {
      if (rows === null) {
        this.#mirrors.delete(tenant);
        return null;
      }
      const m = new TenantVectors();
      m.append([...rows].sort((a, b) => a.seq - b.seq));
      if (m.bytes > this.#budget) {
        this.#mirrors.delete(tenant);
        return null;
      }
      this.#held.set(tenant, m);
      this.#evict();
      return m;
    });
    loading.catch(() => this.#mirrors.delete(tenant));
    this.#mirrors.set(tenant, loading);
    return loading;
  }

  /** Appends rows just written to the table, if the tenant is mirrored (waits for a load in progress). */
  async append(tenant: string, rows: readonly MirrorRow[]): Promise<void> {
    const m = await this.#mirrors.get(tenant)?.catch(() => null);
    if (!m || this.#held.get(tenant) !== m) return;
    m.append(rows);
    if (m.size > this.#maxRows) this.drop(tenant);
    this.#evict();
  }

  /** Forgets a tenant (its table got a vector index, or was dropped). */
  drop(tenant?: string): void {
    if (tenant === undefined) {
      this.#mirrors.clear();
      this.#held.clear();
    } else {
      this.#mirrors.delete(tenant);
      this.#held.delete(tenant);
    }
  }

  /** Bytes the held mirrors take (diagnosis). */
  heldBytes(): number {
    let total = 0;
    for (const m of this.#held.values()) total += m.bytes;
    return total;
  }

  #evict(): void {
    let total = 0;
    for (const m of this.#held.values()) total += m.bytes;
    for (const tenant of this.#mirrors.keys()) {
      if (total <= this.#budget) break;
      const m = this.#held.get(tenant);
      if (!m) continue;
      total -= m.bytes;
      this.drop(tenant);
    }
  }
}

/** A row's id, seq and prefilter columns: what both in-memory copies (vectors, full text) read first. */
export type FilterCells = Omit<MirrorRow, 'vector' | 'wvec'>;

/**
 * A row's prefilter cells alone, in a new object. The rows a copy is given also carry their text and
 * vectors, and an indexed row's vector is a view of its whole embedding batch: a row object kept as given
 * held every vector of the batch it came in (measured in a soak: ~114 MB of batches held by space copies
 * estimated at 63 MB).
 */
export const cellsOf = (r: FilterCells): FilterCells => ({
  id: r.id,
  seq: r.seq,
  space: r.space,
  kind: r.kind,
  category: r.category,
  known_at: r.known_at,
  asserted_at: r.asserted_at,
  valid_from: r.valid_from,
  valid_to: r.valid_to,
});

/** The columns FilterCells come from. */
export const FILTER_COLUMNS = ['id', 'seq', 'space', 'kind', 'category', 'known_at', 'asserted_at', 'valid_from', 'valid_to'];

/** Row i's FilterCells, from a table read with FILTER_COLUMNS (and others). */
export function filterCells(data: ArrowTable): (i: number) => FilterCells {
  const [id, seq, space, kind, category, knownAt, assertedAt, validFrom, validTo] = FILTER_COLUMNS.map((name) => data.getChild(name));
  return (i) => ({
    id: String(id?.get(i)),
    seq: Number(seq?.get(i)),
    space: String(space?.get(i)),
    kind: String(kind?.get(i)),
    category: (category?.get(i) as string | null | undefined) ?? null,
    known_at: Number(knownAt?.get(i)),
    asserted_at: Number(assertedAt?.get(i)),
    valid_from: Number(validFrom?.get(i)),
    valid_to: Number(validTo?.get(i)),
  });
}

/** Row i's cell of a FixedSizeList column read through Arrow's accessors: a copy of its floats, or undefined. */
function floatsOf(column: ArrowVector | null, i: number): Float32Array | undefined {
  const v: unknown = column?.get(i);
  return v && typeof v === 'object' && 'toArray' in v ? Float32Array.from((v as { toArray(): ArrayLike<number> }).toArray()) : undefined;
}

/**
 * Row i's floats of a FixedSizeList<Float32> column, rows asked in order: a view of its batch's buffer, not
 * a copy (VectorMirror.push copies what it keeps, so nothing holds the batch), or undefined for a null
 * cell. Arrow's own `get` builds a Vector and a sliced Data per cell and `Float32Array.from` copies it:
 * with the filter cells, ~8% of the server's CPU while 300k-row spaces' copies loaded under load.
 */
export function floatRows(column: ArrowVector | null): (i: number) => Float32Array | undefined {
  if (!column) return () => undefined;
  const chunks = column.data;
  let chunk = 0;
  let start = 0;
  return (i) => {
    if (i < start) [chunk, start] = [0, 0];
    while (chunk < chunks.length && i >= start + chunks[chunk]!.length) start += chunks[chunk++]!.length;
    const data = chunks[chunk];
    if (!data) return undefined;
    const local = i - start;
    if (!data.getValid(local)) return undefined;
    const stride = data.stride;
    // Arrow keeps a child's values cut to its own rows (as its getters read them): row `local` is at local × stride.
    const values: unknown = data.children[0]?.values;
    if (!(values instanceof Float32Array) || values.length < (local + 1) * stride) return floatsOf(column, i);
    return values.subarray(local * stride, (local + 1) * stride);
  };
}

/** The mirror's rows from a table read with FILTER_COLUMNS and `vector` (and `wvec` when the table has it). */
export function mirrorRows(data: ArrowTable, dimension: number): MirrorRow[] {
  const cells = filterCells(data);
  const vector = floatRows(data.getChild('vector'));
  const wvec = floatRows(data.getChild('wvec'));
  const rows: MirrorRow[] = [];
  for (let i = 0; i < data.numRows; i++) rows.push({ ...cells(i), vector: vector(i) ?? new Float32Array(dimension), wvec: wvec(i) });
  return rows;
}
