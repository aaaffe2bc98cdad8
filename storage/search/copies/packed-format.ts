// A space's copy as packed bytes: what its copy file holds (copy-files.ts), searched where it lies
// (packed-search.ts) instead of being read into objects first. A copy read into the objects of
// text-mirror.ts and vector-mirror.ts cost ~5 ms and thousands of objects a load; with 2,000 users searched
// at random most searches loaded one, and the heap they churned, with the buffers their vectors took,
// made V8's full collections several times busier. A segment is a handful of typed arrays over one block
// of bytes: opening one allocates no memory beyond the views.
//
// A file is a run of segments, each 8-byte aligned: a load's rows in one, each later append in another
// (and runs of appends merged back into one, copy-files.ts). A segment holds, row by row, the prefilter's
// cells, the row's token count and each vector column (its length, norm, and its cells dense or as
// (position, value) pairs by vector-mirror.ts's rule); the distinct strings of its spaces, kinds and
// categories once; its ids; and its full text as postings: each distinct token (sorted by its UTF-8 bytes,
// for a binary search) with the rows holding it and how often. No text: the tokens are what BM25 scores.
import { dot, keptSparse, nonZeroCells, type MirrorRow } from './vector-mirror.ts';
import type { TextRow } from './text-mirror.ts';

/** A row as the index writes it: prefilter columns, text and vectors. */
export type SpaceRow = MirrorRow & TextRow;

const MAGIC = 0x31435053; // "SPC1"
const HEADER_BYTES = 64;

/** What a segment holds, in its header (u32 each): the layout follows from these alone. */
interface Counts {
  rows: number;
  terms: number;
  postings: number;
  idBytes: number;
  termBytes: number;
  dictBytes: number;
  dictEntries: number;
  vectorPairs: number;
  vectorDense: number;
  wordPairs: number;
  wordDense: number;
}

const COUNT_FIELDS: readonly (keyof Counts)[] = [
  'rows',
  'terms',
  'postings',
  'idBytes',
  'termBytes',
  'dictBytes',
  'dictEntries',
  'vectorPairs',
  'vectorDense',
  'wordPairs',
  'wordDense',
];

/** One vector column of a segment. */
export interface PackedColumn {
  /** Each row's vector length (-1: none). */
  length: Int32Array;
  norm: Float64Array;
  /** Each row's pairs, or -1 when it is dense. */
  cells: Int32Array;
  /** Each row's first cell, among the pairs or in `dense`. */
  at: Int32Array;
  values: Float32Array;
  positions: Uint16Array;
  dense: Float32Array;
}

/** A segment's views over its bytes. */
export interface Segment {
  rows: number;
  seq: Float64Array;
  knownAt: Float64Array;
  assertedAt: Float64Array;
  validFrom: Float64Array;
  validTo: Float64Array;
  /** Each row's token count. */
  lengths: Int32Array;
  /** Each row's space, kind and category as an entry of `dict` (category -1: null). */
  space: Int32Array;
  kind: Int32Array;
  category: Int32Array;
  dictOffsets: Int32Array;
  dict: Buffer;
  idOffsets: Int32Array;
  ids: Buffer;
  termOffsets: Int32Array;
  terms: Buffer;
  /** Term t's postings are postingRows/postingTf [postingStart[t], postingStart[t + 1]), rows ascending. */
  postingStart: Int32Array;
  postingRows: Int32Array;
  postingTf: Int32Array;
  vector: PackedColumn;
  wvec: PackedColumn;
}

const align8 = (n: number): number => (n + 7) & ~7;

/** Byte offsets of each section, from the counts: the writer and the reader share them. */
function layout(c: Counts) {
  let at = HEADER_BYTES;
  const take = (bytes: number): number => {
    const start = at;
    at += bytes;
    return start;
  };
  const n = c.rows;
  // Widest cells first, so that every section is aligned to its own cell size.
  const f64 = { seq: take(8 * n), knownAt: take(8 * n), assertedAt: take(8 * n), validFrom: take(8 * n), validTo: take(8 * n) };
  const norms = { vector: take(8 * n), wvec: take(8 * n) };
  const i32 = {
    lengths: take(4 * n),
    space: take(4 * n),
    kind: take(4 * n),
    category: take(4 * n),
    dictOffsets: take(4 * (c.dictEntries + 1)),
    idOffsets: take(4 * (n + 1)),
    termOffsets: take(4 * (c.terms + 1)),
    postingStart: take(4 * (c.terms + 1)),
    postingRows: take(4 * c.postings),
    postingTf: take(4 * c.postings),
  };
  const column = (pairs: number, dense: number, norm: number) => ({
    norm,
    length: take(4 * n),
    cells: take(4 * n),
    at: take(4 * n),
    values: 0,
    dense: 0,
    positions: 0,
    pairs,
    denseCells: dense,
  });
  const vector = column(c.vectorPairs, c.vectorDense, norms.vector);
  const wvec = column(c.wordPairs, c.wordDense, norms.wvec);
  for (const col of [vector, wvec]) {
    col.values = take(4 * col.pairs);
    col.dense = take(4 * col.denseCells);
  }
  for (const col of [vector, wvec]) col.positions = take(2 * col.pairs);
  const bytes = { dict: take(c.dictBytes), ids: take(c.idBytes), terms: take(c.termBytes) };
  return { f64, i32, vector, wvec, bytes, end: align8(at) };
}

/** A vector column's cells, laid out by vector-mirror.ts's rule (pairs when they take less memory). */
function columnCells(vectors: readonly (Float32Array | undefined)[]) {
  const length = vectors.map((v) => (v ? v.length : -1));
  const norm = vectors.map((v) => (v ? Math.sqrt(dot(v, 0, v)) : 0));
  const cells: number[] = [];
  const at: number[] = [];
  const values: number[] = [];
  const positions: number[] = [];
  const dense: Float32Array[] = [];
  let denseCells = 0;
  for (const v of vectors) {
    const nonZero = v ? nonZeroCells(v) : 0;
    if (!v || (keptSparse(nonZero, v.length) && v.length <= 65_536)) {
      at.push(values.length);
      cells.push(nonZero);
      for (let i = 0; v && i < v.length; i++) {
        if (v[i] === 0) continue;
        values.push(v[i]!);
        positions.push(i);
      }
    } else {
      at.push(denseCells);
      cells.push(-1);
      dense.push(v);
      denseCells += v.length;
    }
  }
  return { length, norm, cells, at, values, positions, dense, denseCells };
}

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

/** Strings end to end, and where each starts (one more offset than strings: the end). */
function blob(strings: readonly Buffer[]): { bytes: Buffer; offsets: number[] } {
  const offsets = [0];
  for (const s of strings) offsets.push(offsets[offsets.length - 1]! + s.length);
  return { bytes: Buffer.concat(strings), offsets };
}

/**
 * One segment of `rows` (seq ascending, none twice) with each row's tokens (same order). Vectors are kept
 * to the last bit, so that a search of the segment scores as a copy of the same rows in memory.
 */
export function encodeSegment(rows: readonly MirrorRow[], tokens: readonly (readonly string[])[]): Buffer {
  const n = rows.length;
  const dictIndex = new Map<string, number>();
  const entry = (s: string): number => {
    let i = dictIndex.get(s);
    if (i === undefined) dictIndex.set(s, (i = dictIndex.size));
    return i;
  };
  const space = rows.map((r) => entry(r.space));
  const kind = rows.map((r) => entry(r.kind));
  const category = rows.map((r) => (r.category === null ? -1 : entry(r.category)));
  const dict = blob([...dictIndex.keys()].map(utf8));
  const ids = blob(rows.map((r) => utf8(r.id)));

  const postings = new Map<string, { rows: number[]; tf: number[] }>();
  const lengths = rows.map((_, i) => tokens[i]?.length ?? 0);
  rows.forEach((_, i) => {
    const tf = new Map<string, number>();
    for (const t of tokens[i] ?? []) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const [t, count] of tf) {
      const p = postings.get(t) ?? { rows: [], tf: [] };
      p.rows.push(i);
      p.tf.push(count);
      postings.set(t, p);
    }
  });
  const sorted = [...postings.keys()].map((t) => ({ t, bytes: utf8(t) })).sort((a, b) => Buffer.compare(a.bytes, b.bytes));
  const terms = blob(sorted.map((s) => s.bytes));
  const postingStart = [0];
  const postingRows: number[] = [];
  const postingTf: number[] = [];
  for (const { t } of sorted) {
    const p = postings.get(t)!;
    postingRows.push(...p.rows);
    postingTf.push(...p.tf);
    postingStart.push(postingRows.length);
  }

  const vector = columnCells(rows.map((r) => r.vector));
  const wvec = columnCells(rows.map((r) => r.wvec));
  const counts: Counts = {
    rows: n,
    terms: sorted.length,
    postings: postingRows.length,
    idBytes: ids.bytes.length,
    termBytes: terms.bytes.length,
    dictBytes: dict.bytes.length,
    dictEntries: dictIndex.size,
    vectorPairs: vector.values.length,
    vectorDense: vector.denseCells,
    wordPairs: wvec.values.length,
    wordDense: wvec.denseCells,
  };
  const l = layout(counts);
  const out = Buffer.alloc(l.end);
  const header = new Uint32Array(out.buffer, out.byteOffset, HEADER_BYTES / 4);
  header[0] = MAGIC;
  header[1] = l.end;
  COUNT_FIELDS.forEach((f, i) => (header[2 + i] = counts[f]));
  const put = <T extends Float64Array | Int32Array | Float32Array | Uint16Array>(
    make: new (buffer: ArrayBufferLike, offset: number, length: number) => T,
    offset: number,
    values: ArrayLike<number>,
  ): void => new make(out.buffer, out.byteOffset + offset, values.length).set(values);
  const cells = [
    [l.f64.seq, 'seq'],
    [l.f64.knownAt, 'known_at'],
    [l.f64.assertedAt, 'asserted_at'],
    [l.f64.validFrom, 'valid_from'],
    [l.f64.validTo, 'valid_to'],
  ] as const;
  for (const [offset, cell] of cells)
    put(
      Float64Array,
      offset,
      rows.map((r) => r[cell]),
    );
  put(Int32Array, l.i32.lengths, lengths);
  put(Int32Array, l.i32.space, space);
  put(Int32Array, l.i32.kind, kind);
  put(Int32Array, l.i32.category, category);
  put(Int32Array, l.i32.dictOffsets, dict.offsets);
  put(Int32Array, l.i32.idOffsets, ids.offsets);
  put(Int32Array, l.i32.termOffsets, terms.offsets);
  put(Int32Array, l.i32.postingStart, postingStart);
  put(Int32Array, l.i32.postingRows, postingRows);
  put(Int32Array, l.i32.postingTf, postingTf);
  for (const [cells, at] of [
    [vector, l.vector],
    [wvec, l.wvec],
  ] as const) {
    put(Float64Array, at.norm, cells.norm);
    put(Int32Array, at.length, cells.length);
    put(Int32Array, at.cells, cells.cells);
    put(Int32Array, at.at, cells.at);
    put(Float32Array, at.values, cells.values);
    put(Uint16Array, at.positions, cells.positions);
    let d = at.dense;
    for (const v of cells.dense) {
      put(Float32Array, d, v);
      d += 4 * v.length;
    }
  }
  dict.bytes.copy(out, l.bytes.dict);
  ids.bytes.copy(out, l.bytes.ids);
  terms.bytes.copy(out, l.bytes.terms);
  return out;
}

/**
 * The segments in `bytes` (its first `length`), as views over it; null when they are not segments this
 * module wrote whole. `bytes` must start 8-byte aligned in its buffer (copy-files.ts reads into one).
 */
export function openSegments(bytes: Buffer, length = bytes.length): Segment[] | null {
  if (bytes.byteOffset % 8 !== 0) throw new Error('packed segments are read from an 8-byte aligned buffer');
  const segments: Segment[] = [];
  for (let at = 0; at < length;) {
    if (length - at < HEADER_BYTES) return null;
    const header = new Uint32Array(bytes.buffer, bytes.byteOffset + at, HEADER_BYTES / 4);
    const size = header[1]!;
    if (header[0] !== MAGIC || size % 8 !== 0 || size < HEADER_BYTES || at + size > length) return null;
    const counts = Object.fromEntries(COUNT_FIELDS.map((f, i) => [f, header[2 + i]!])) as unknown as Counts;
    const l = layout(counts);
    if (l.end !== size) return null;
    const segment = view(bytes, at, counts, l);
    if (!consistent(segment, counts)) return null;
    segments.push(segment);
    at += size;
  }
  return segments;
}

/** Whether `offsets` start at 0, never fall, and end at `end`: each entry's slice lies in its block. */
function spans(offsets: Int32Array, end: number): boolean {
  if (offsets[0] !== 0 || offsets[offsets.length - 1] !== end) return false;
  for (let i = 1; i < offsets.length; i++) if (offsets[i]! < offsets[i - 1]!) return false;
  return true;
}

/** Whether every index inside `values` is in [low, high). */
function within(values: Int32Array, low: number, high: number): boolean {
  for (let i = 0; i < values.length; i++) if (values[i]! < low || values[i]! >= high) return false;
  return true;
}

/** Whether each row's cells of a vector column lie among the column's pairs or dense cells. */
function cellsWithin(c: PackedColumn): boolean {
  for (let i = 0; i < c.length.length; i++) {
    const length = c.length[i]!;
    if (length < 0) continue;
    const cells = c.cells[i]!;
    const at = c.at[i]!;
    const [count, room] = cells < 0 ? [length, c.dense.length] : [cells, c.values.length];
    if (at < 0 || at + count > room) return false;
  }
  return true;
}

/**
 * Whether every offset and index inside a segment points inside it: a file damaged on disk behind a valid
 * header is refused (removed, and the copy read from the table) instead of misleading a search. Costs a
 * pass over the offsets and postings, small beside reading the file.
 */
function consistent(s: Segment, c: Counts): boolean {
  return (
    spans(s.idOffsets, c.idBytes) &&
    spans(s.termOffsets, c.termBytes) &&
    spans(s.dictOffsets, c.dictBytes) &&
    spans(s.postingStart, c.postings) &&
    within(s.postingRows, 0, c.rows) &&
    within(s.space, 0, c.dictEntries) &&
    within(s.kind, 0, c.dictEntries) &&
    within(s.category, -1, c.dictEntries) &&
    cellsWithin(s.vector) &&
    cellsWithin(s.wvec)
  );
}

function view(bytes: Buffer, base: number, c: Counts, l: ReturnType<typeof layout>): Segment {
  const start = bytes.byteOffset + base;
  const n = c.rows;
  const f64 = (offset: number, len = n): Float64Array => new Float64Array(bytes.buffer, start + offset, len);
  const i32 = (offset: number, len = n): Int32Array => new Int32Array(bytes.buffer, start + offset, len);
  const raw = (offset: number, len: number): Buffer => bytes.subarray(base + offset, base + offset + len);
  const column = (at: typeof l.vector): PackedColumn => ({
    length: i32(at.length),
    norm: f64(at.norm),
    cells: i32(at.cells),
    at: i32(at.at),
    values: new Float32Array(bytes.buffer, start + at.values, at.pairs),
    positions: new Uint16Array(bytes.buffer, start + at.positions, at.pairs),
    dense: new Float32Array(bytes.buffer, start + at.dense, at.denseCells),
  });
  return {
    rows: n,
    seq: f64(l.f64.seq),
    knownAt: f64(l.f64.knownAt),
    assertedAt: f64(l.f64.assertedAt),
    validFrom: f64(l.f64.validFrom),
    validTo: f64(l.f64.validTo),
    lengths: i32(l.i32.lengths),
    space: i32(l.i32.space),
    kind: i32(l.i32.kind),
    category: i32(l.i32.category),
    dictOffsets: i32(l.i32.dictOffsets, c.dictEntries + 1),
    dict: raw(l.bytes.dict, c.dictBytes),
    idOffsets: i32(l.i32.idOffsets, n + 1),
    ids: raw(l.bytes.ids, c.idBytes),
    termOffsets: i32(l.i32.termOffsets, c.terms + 1),
    terms: raw(l.bytes.terms, c.termBytes),
    postingStart: i32(l.i32.postingStart, c.terms + 1),
    postingRows: i32(l.i32.postingRows, c.postings),
    postingTf: i32(l.i32.postingTf, c.postings),
    vector: column(l.vector),
    wvec: column(l.wvec),
  };
}

/** Entry `i` of a segment's strings (its spaces, kinds and categories). */
export const dictEntry = (s: Segment, i: number): string => s.dict.toString('utf8', s.dictOffsets[i]!, s.dictOffsets[i + 1]!);

/** Row `i`'s id. */
export const idOf = (s: Segment, i: number): string => s.ids.toString('utf8', s.idOffsets[i]!, s.idOffsets[i + 1]!);

/** The term's index in the segment's sorted terms, or -1. */
export function termIndex(s: Segment, term: Buffer): number {
  let lo = 0;
  let hi = s.termOffsets.length - 2;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const cmp = s.terms.compare(term, 0, term.length, s.termOffsets[mid]!, s.termOffsets[mid + 1]!);
    if (cmp === 0) return mid;
    if (cmp < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

function vectorOf(c: PackedColumn, i: number): Float32Array | undefined {
  const length = c.length[i]!;
  if (length < 0) return undefined;
  const cells = c.cells[i]!;
  if (cells < 0) return c.dense.slice(c.at[i]!, c.at[i]! + length);
  const v = new Float32Array(length);
  for (let k = c.at[i]!; k < c.at[i]! + cells; k++) v[c.positions[k]!] = c.values[k]!;
  return v;
}

/**
 * The segments' rows back (their text empty) with tokens that score as theirs (each token as often as the
 * row held it, in another order): to write a run of segments again as one.
 */
export function decodeSegments(segments: readonly Segment[]): { rows: MirrorRow[]; tokens: string[][] } {
  const rows: MirrorRow[] = [];
  const tokens: string[][] = [];
  for (const s of segments) {
    const own: string[][] = Array.from({ length: s.rows }, () => []);
    for (let t = 0; t + 1 < s.termOffsets.length; t++) {
      const term = s.terms.toString('utf8', s.termOffsets[t]!, s.termOffsets[t + 1]!);
      for (let k = s.postingStart[t]!; k < s.postingStart[t + 1]!; k++)
        for (let n = 0; n < s.postingTf[k]!; n++) own[s.postingRows[k]!]!.push(term);
    }
    for (let i = 0; i < s.rows; i++) {
      const category = s.category[i]!;
      rows.push({
        id: idOf(s, i),
        seq: s.seq[i]!,
        space: dictEntry(s, s.space[i]!),
        kind: dictEntry(s, s.kind[i]!),
        category: category < 0 ? null : dictEntry(s, category),
        known_at: s.knownAt[i]!,
        asserted_at: s.assertedAt[i]!,
        valid_from: s.validFrom[i]!,
        valid_to: s.validTo[i]!,
        vector: vectorOf(s.vector, i) ?? new Float32Array(0),
        wvec: vectorOf(s.wvec, i),
      });
      tokens.push(own[i]!);
    }
  }
  return { rows, tokens };
}
