// One line of a space's copy file per row (copy-files.ts): its prefilter cells and text as JSON, its
// vectors as the base64 of their float32 bytes, so that a row read back scores to the last bit as the row
// written. The local embedder's vectors are mostly zeros (~40–120 of 384 cells), so a sparse one is written
// as its positions and values, ~4× shorter.
import type { TextRow } from './text-mirror.ts';
import { keptSparse, nonZeroCells, type MirrorRow } from './vector-mirror.ts';

/** A row as the index writes it: prefilter columns, text and vectors. */
export type SpaceRow = MirrorRow & TextRow;

interface Line {
  i: string;
  s: number;
  p: string;
  k: string;
  c: string | null;
  ka: number;
  aa: number;
  vf: number;
  vt: number;
  t: string;
  /** Dense vector bytes, or the values of a sparse one. */
  v: string;
  /** A sparse vector's length and its cells' positions (uint16). */
  vn?: number;
  vp?: string;
  w?: string;
  /** The text's tokens, when known as the row was written. */
  tk?: string[];
}

const bytesOf = (a: Float32Array | Uint16Array): string => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');

function float32s(b64: string): Float32Array {
  const bytes = Buffer.from(b64, 'base64');
  // A copy: the buffer's offset need not be a multiple of four.
  const out = new Float32Array(bytes.byteLength / 4);
  new Uint8Array(out.buffer).set(bytes);
  return out;
}

function uint16s(b64: string): Uint16Array {
  const bytes = Buffer.from(b64, 'base64');
  const out = new Uint16Array(bytes.byteLength / 2);
  new Uint8Array(out.buffer).set(bytes);
  return out;
}

/** A vector kept as pairs in a copy (keptSparse) is written as pairs; positions are uint16. */
function vectorCells(v: Float32Array): Pick<Line, 'v' | 'vn' | 'vp'> {
  const nonZero = nonZeroCells(v);
  if (!keptSparse(nonZero, v.length) || v.length > 65_536) return { v: bytesOf(v) };
  const positions = new Uint16Array(nonZero);
  const values = new Float32Array(nonZero);
  for (let i = 0, n = 0; i < v.length; i++) {
    if (v[i] === 0) continue;
    positions[n] = i;
    values[n++] = v[i]!;
  }
  return { v: bytesOf(values), vn: v.length, vp: bytesOf(positions) };
}

/**
 * The rows (with their tokens, when given) as lines of a copy file, each ended by a newline. Bytes, not one
 * string: a space's lines together (~180 KB for 150 rows) would be a string in V8's old space, and a load
 * every few milliseconds of those made the server's garbage collection several times busier.
 */
export function encodeRows(rows: readonly SpaceRow[], tokens?: readonly (readonly string[] | undefined)[]): Buffer {
  const lines: Buffer[] = [];
  for (const [n, r] of rows.entries()) {
    const tk = tokens?.[n];
    const line: Line = {
      i: r.id,
      s: r.seq,
      p: r.space,
      k: r.kind,
      c: r.category,
      ka: r.known_at,
      aa: r.asserted_at,
      vf: r.valid_from,
      vt: r.valid_to,
      t: r.text,
      ...vectorCells(r.vector),
      ...(r.wvec ? { w: bytesOf(r.wvec) } : {}),
      ...(tk ? { tk: [...tk] } : {}),
    };
    lines.push(Buffer.from(`${JSON.stringify(line)}\n`));
  }
  return Buffer.concat(lines);
}

const isNumber = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n);

function rowOf(line: Line): SpaceRow {
  const cells = float32s(line.v);
  let vector = cells;
  if (line.vp !== undefined && line.vn !== undefined) {
    const positions = uint16s(line.vp);
    vector = new Float32Array(line.vn);
    positions.forEach((p, n) => (vector[p] = cells[n]!));
  }
  return {
    id: line.i,
    seq: line.s,
    space: line.p,
    kind: line.k,
    category: line.c,
    known_at: line.ka,
    asserted_at: line.aa,
    valid_from: line.vf,
    valid_to: line.vt,
    text: line.t,
    vector,
    wvec: line.w === undefined ? undefined : float32s(line.w),
  };
}

/**
 * The rows of a copy file and their tokens where it holds them, in seq order, a row seen twice (a load and
 * an append that raced) kept once; null when a line is not one this module wrote (the file is then read
 * from the table instead).
 */
export function decodeRows(bytes: Buffer): { rows: SpaceRow[]; tokens: (readonly string[] | undefined)[] } | null {
  const rows: SpaceRow[] = [];
  const tokens: (readonly string[] | undefined)[] = [];
  let last = Number.NEGATIVE_INFINITY;
  for (let at = 0; at < bytes.length;) {
    const end = bytes.indexOf(10, at);
    const raw = bytes.toString('utf8', at, end < 0 ? bytes.length : end);
    at = end < 0 ? bytes.length : end + 1;
    if (raw === '') continue;
    let line: Line;
    try {
      line = JSON.parse(raw) as Line;
    } catch {
      return null;
    }
    const cells = [line.s, line.ka, line.aa, line.vf, line.vt];
    if (!cells.every(isNumber) || typeof line.i !== 'string' || typeof line.t !== 'string' || typeof line.v !== 'string') return null;
    if (line.tk !== undefined && !(Array.isArray(line.tk) && line.tk.every((t) => typeof t === 'string'))) return null;
    if (line.s <= last) continue;
    last = line.s;
    rows.push(rowOf(line));
    tokens.push(line.tk);
  }
  return { rows, tokens };
}
