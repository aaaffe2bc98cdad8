// The index tables' Arrow schema, and index rows turned into an Arrow table for LanceDB. Columns are built
// as Arrow buffers directly (no per-value builders): ~4× faster than from objects.
import {
  Field,
  FixedSizeList,
  Float32,
  Float64,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table as ArrowTable,
  Utf8,
  type Data,
} from 'apache-arrow';
import type { IndexRow } from '../index-row.ts';

/** The columns of a tenant's table; `wvec` only when the index has word vectors (`wordDimension` > 0). */
export function indexSchema(dimension: number, wordDimension: number): Schema {
  const instant = (name: string): Field => new Field(name, new Float64(), false);
  return new Schema([
    new Field('id', new Utf8(), false),
    new Field('seq', new Float64(), false),
    new Field('space', new Utf8(), false),
    new Field('kind', new Utf8(), false),
    new Field('category', new Utf8(), true),
    instant('known_at'),
    instant('asserted_at'),
    instant('valid_from'),
    instant('valid_to'),
    new Field('text', new Utf8(), false),
    new Field('vector', new FixedSizeList(dimension, new Field('item', new Float32(), true)), false),
    ...(wordDimension > 0 ? [new Field('wvec', new FixedSizeList(wordDimension, new Field('item', new Float32(), true)), false)] : []),
  ]);
}

/** One vector column as one flat buffer: the embedder's own when the rows are consecutive views into it. */
function flatVectors(rows: readonly IndexRow[], d: number, pick: (r: IndexRow) => Float32Array | undefined): Float32Array {
  const first = rows[0] ? pick(rows[0]) : undefined;
  let joined = first !== undefined;
  for (let i = 1; joined && i < rows.length; i++) joined = follows(pick(rows[i - 1]!), pick(rows[i]!), d);
  if (first && joined && first.length === d) return new Float32Array(first.buffer, first.byteOffset, rows.length * d);
  const flat = new Float32Array(rows.length * d);
  rows.forEach((r, i) => {
    const v = pick(r);
    if (v) flat.set(v, i * d);
  });
  return flat;
}

/** Whether `b` lies right after `a` (both `d` long) in the same buffer. */
const follows = (a: Float32Array | undefined, b: Float32Array | undefined, d: number): boolean =>
  a !== undefined && b !== undefined && a.length === d && b.length === d && a.buffer === b.buffer && b.byteOffset === a.byteOffset + d * 4;

/** Record batches at most per table: rows in more runs than this (vectors each in its own buffer) are copied into one. */
const MAX_RUNS = 8;

/**
 * The rows as a table of `schema` (indexSchema's), vector lengths taken from it: one record batch per run
 * of rows whose vectors lie end to end in one buffer (a large batch's two halves, embedded on two threads,
 * are two runs), so each batch's vector columns are views of the embedders' buffers, not copies.
 */
export function rowsToArrow(schema: Schema, rows: readonly IndexRow[]): ArrowTable {
  const lists: [number, (r: IndexRow) => Float32Array | undefined][] = [[10, (r) => r.vector]];
  if (schema.fields.length > 11) lists.push([11, (r) => r.wvec]);
  const sizes = lists.map(([field]) => (schema.fields[field]!.type as FixedSizeList<Float32>).listSize);
  const ends: number[] = [];
  for (let i = 1; i <= rows.length; i++) {
    let joined = i < rows.length;
    for (let c = 0; joined && c < lists.length; c++) {
      const pick = lists[c]![1];
      joined = follows(pick(rows[i - 1]!), pick(rows[i]!), sizes[c]!);
    }
    if (joined) continue;
    ends.push(i);
    if (ends.length > MAX_RUNS) return new ArrowTable([rowsToBatch(schema, rows)]);
  }
  let start = 0;
  const batches: RecordBatch[] = [];
  for (const end of ends) {
    batches.push(rowsToBatch(schema, rows.slice(start, end)));
    start = end;
  }
  return new ArrowTable(schema, batches);
}

/** The rows as one record batch of `schema`. */
function rowsToBatch(schema: Schema, rows: readonly IndexRow[]): RecordBatch {
  const n = rows.length;
  // Plain loops: Float64Array.from(rows, pick) walks the rows through the iterator protocol.
  const f64 = (pick: (r: IndexRow) => number) => {
    const data = new Float64Array(n);
    for (let i = 0; i < n; i++) data[i] = pick(rows[i]!);
    return makeData({ type: new Float64(), length: n, data });
  };
  const list = (field: number, pick: (r: IndexRow) => Float32Array | undefined) => {
    const type = schema.fields[field]!.type as FixedSizeList<Float32>;
    const d = type.listSize;
    return makeData({
      type,
      length: n,
      nullCount: 0,
      child: makeData({ type: new Float32(), length: n * d, data: flatVectors(rows, d, pick) }),
    });
  };
  const children = [
    utf8(rows, (r) => r.id),
    f64((r) => r.seq),
    utf8(rows, (r) => r.space),
    utf8(rows, (r) => r.kind),
    utf8(rows, (r) => r.category),
    f64((r) => r.known_at),
    f64((r) => r.asserted_at),
    f64((r) => r.valid_from),
    f64((r) => r.valid_to),
    utf8(rows, (r) => r.text),
    list(10, (r) => r.vector),
    ...(schema.fields.length > 11 ? [list(11, (r) => r.wvec)] : []),
  ];
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: n, nullCount: 0, children }));
}

/**
 * A Utf8 column: one values buffer and an offsets array; null makes a null slot. A column of ASCII text
 * (the usual one) is encoded by one call over the joined values, its offsets being the values' lengths,
 * instead of two calls into the encoder for every value.
 */
function utf8<T>(rows: readonly T[], pick: (r: T) => string | null): Data<Utf8> {
  const n = rows.length;
  const values: (string | null)[] = new Array<string | null>(n);
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const v = pick(rows[i]!);
    values[i] = v;
    if (v === null) nulls++;
  }
  const offsets = new Int32Array(n + 1);
  const validity = nulls > 0 ? new Uint8Array((n + 7) >> 3) : undefined;
  if (validity) for (let i = 0; i < n; i++) if (values[i] !== null) validity[i >> 3]! |= 1 << (i & 7);
  // join writes null as ''. Every code unit above 0x7f takes at least two bytes, so equal lengths mean ASCII.
  const joined = values.join('');
  const ascii = Buffer.from(joined, 'utf8');
  if (ascii.length === joined.length) {
    for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i]! + (values[i]?.length ?? 0);
    return utf8Data(n, nulls, validity, offsets, ascii);
  }
  // Not ASCII: each value encoded alone (a lone surrogate at the end of one value must not pair with the next).
  let bytes = 0;
  for (const v of values) if (v !== null) bytes += Buffer.byteLength(v, 'utf8');
  const data = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v !== null && v !== undefined) at += data.write(v, at, 'utf8');
    offsets[i + 1] = at;
  }
  return utf8Data(n, nulls, validity, offsets, data);
}

const utf8Data = (n: number, nulls: number, validity: Uint8Array | undefined, offsets: Int32Array, data: Buffer): Data<Utf8> =>
  makeData({
    type: new Utf8(),
    length: n,
    nullCount: nulls,
    nullBitmap: validity,
    valueOffsets: offsets,
    data: new Uint8Array(data.buffer, data.byteOffset, data.length),
  });
