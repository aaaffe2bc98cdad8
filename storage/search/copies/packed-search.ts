// Search of a space's copy in its packed segments (packed-format.ts), with the answers a copy of the same
// rows in memory gives to the last bit (space-copies.ts: BM25 with the statistics of the rows known at the
// read's as_of, text-mirror.ts; cosine by a flat scan, vector-mirror.ts). The formulas, the prefilter's
// time rule and the orders are those modules' own functions; what is here is only how the rows are found
// in the segments. The segments' rows are numbered end to end, in seq order as a copy holds them.
import type { Hit, RowFilter } from '../index-row.ts';
import { byScore, idf, insertSorted, termScore } from './text-mirror.ts';
import { admitsTimes, dot, idSets, sparseDot } from './vector-mirror.ts';
import { dictEntry, idOf, termIndex, type PackedColumn, type Segment } from './packed-format.ts';

const f32 = Math.fround;

/** A search's running scores by row, reused from one search to the next (each leaves it zeroed). */
let acc = new Float64Array(0);

/** The filter's strings as each segment's entries (-2: none of its rows has it), resolved once a search. */
interface Wanted {
  space: number;
  kind: number;
  category: number;
}

function wanted(s: Segment, f: RowFilter): Wanted {
  const entries = s.dictOffsets.length - 1;
  const find = (value: string | undefined): number => {
    if (value === undefined) return -3;
    for (let i = 0; i < entries; i++) if (dictEntry(s, i) === value) return i;
    return -2;
  };
  return { space: find(f.space), kind: find(f.kind), category: find(f.category) };
}

/** admits() of vector-mirror.ts for row `i` of a segment. */
function admitted(s: Segment, i: number, f: RowFilter, w: Wanted, only?: ReadonlySet<string>, excluded?: ReadonlySet<string>): boolean {
  if (!admitsTimes(s.knownAt[i]!, s.assertedAt[i]!, s.validFrom[i]!, s.validTo[i]!, f)) return false;
  if (w.space !== -3 && s.space[i] !== w.space) return false;
  if (w.kind !== -3 && s.kind[i] !== w.kind) return false;
  if (w.category !== -3 && s.category[i] !== w.category) return false;
  if (!excluded && !only) return true;
  const id = idOf(s, i);
  return !excluded?.has(id) && (!only || only.has(id));
}

/** The segment holding row `row` of the run (numbered end to end), and the row's place in it. */
function locate(segments: readonly Segment[], row: number): [Segment, number] {
  let at = row;
  for (const s of segments) {
    if (at < s.rows) return [s, at];
    at -= s.rows;
  }
  throw new Error(`row ${row} is past the segments' rows`);
}

/** SpaceCopy.fullText over the segments: TenantText's search under `known` statistics, every row indexed. */
export function packedFullText(segments: readonly Segment[], query: readonly string[], f: RowFilter, limit: number): Hit[] {
  let total = 0;
  let maxKnown = Number.NEGATIVE_INFINITY;
  for (const s of segments) {
    total += s.rows;
    for (let i = 0; i < s.rows; i++) maxKnown = Math.max(maxKnown, s.knownAt[i]!);
  }
  if (limit <= 0 || query.length === 0 || total === 0) return [];
  const asOf = Math.trunc(f.asOf);
  const knownBy = f.allKnown || f.hidden || asOf >= maxKnown ? undefined : asOf;
  let docs = 0;
  let tokens = 0;
  for (const s of segments) {
    for (let i = 0; i < s.rows; i++) {
      if (knownBy !== undefined && !(s.knownAt[i]! <= knownBy)) continue;
      tokens += s.lengths[i]!;
      if (s.lengths[i]! > 0) docs++;
    }
  }
  if (knownBy !== undefined && docs === 0) return [];
  const avg = f32(tokens / docs);
  if (acc.length < total) acc = new Float64Array(Math.max(total, 2 * acc.length));
  const touched: number[] = [];
  for (const token of query) {
    const term = Buffer.from(token, 'utf8');
    const found = segments.map((s) => termIndex(s, term));
    let withToken = 0;
    segments.forEach((s, n) => {
      const t = found[n]!;
      if (t < 0) return;
      for (let k = s.postingStart[t]!; k < s.postingStart[t + 1]!; k++)
        if (knownBy === undefined || s.knownAt[s.postingRows[k]!]! <= knownBy) withToken++;
    });
    const w = withToken === 0 ? 0 : idf(withToken, docs);
    if (w === 0) continue;
    let base = 0;
    segments.forEach((s, n) => {
      const t = found[n]!;
      for (let k = t < 0 ? 0 : s.postingStart[t]!, end = t < 0 ? 0 : s.postingStart[t + 1]!; k < end; k++) {
        const local = s.postingRows[k]!;
        const row = base + local;
        const before = acc[row]!;
        if (before === 0) touched.push(row);
        acc[row] = f32(before + termScore(w, s.postingTf[k]!, s.lengths[local]!, avg));
      }
      base += s.rows;
    });
  }
  const { only, excluded } = idSets(f);
  const wants = new Map<Segment, Wanted>();
  const best: Hit[] = [];
  for (const row of touched) {
    const score = acc[row]!;
    acc[row] = 0;
    if (score <= 0) continue;
    const [s, i] = locate(segments, row);
    const seq = s.seq[i]!;
    const worst = best[limit - 1];
    if (worst && byScore({ score, seq }, worst) >= 0) continue;
    let w = wants.get(s);
    if (!w) wants.set(s, (w = wanted(s, f)));
    if (!admitted(s, i, f, w, only, excluded)) continue;
    insertSorted(best, { id: idOf(s, i), seq, score }, limit);
  }
  return best;
}

/** The run's vector dimension: the first row's with a vector, as a copy's column takes it (-1: none). */
function dimensionOf(segments: readonly Segment[], column: 'vector' | 'wvec'): number {
  for (const s of segments) for (let i = 0; i < s.rows; i++) if (s[column].length[i]! >= 0) return s[column].length[i]!;
  return -1;
}

/** Cosine distance from `q` to row `i`, as vector-mirror.ts's Column.distance gives it; NaN when the row has none. */
function distance(c: PackedColumn, i: number, q: Float32Array, qn: number, dimension: number): number {
  const rn = c.norm[i]!;
  if (c.length[i] !== dimension || rn === 0 || q.length !== dimension) return Number.NaN;
  const cells = c.cells[i]!;
  const product = cells < 0 ? dot(c.dense, c.at[i]!, q) : sparseDot(c.values, c.positions, c.at[i]!, cells, q);
  return Math.fround(1 - product / (qn * rn));
}

/** SpaceCopy.nearest over the segments: TenantVectors' flat scan, equal distances oldest first. */
export function packedNearest(
  segments: readonly Segment[],
  query: Float32Array,
  f: RowFilter,
  limit: number,
  column: 'vector' | 'wvec',
): Hit[] {
  const qn = Math.sqrt(dot(query, 0, query));
  if (qn === 0 || limit <= 0) return [];
  const dimension = dimensionOf(segments, column);
  const { only, excluded } = idSets(f);
  const top: { s: Segment; i: number; distance: number }[] = [];
  for (const s of segments) {
    const c = s[column];
    let w: Wanted | undefined;
    for (let i = 0; i < s.rows; i++) {
      const d = distance(c, i, query, qn, dimension);
      if (Number.isNaN(d)) continue;
      if (top.length >= limit && d >= top[top.length - 1]!.distance) continue;
      w ??= wanted(s, f);
      if (!admitted(s, i, f, w, only, excluded)) continue;
      let at = top.length;
      while (at > 0 && top[at - 1]!.distance > d) at--;
      top.splice(at, 0, { s, i, distance: d });
      if (top.length > limit) top.pop();
    }
  }
  return top.map(({ s, i, distance: d }) => ({ id: idOf(s, i), seq: s.seq[i]!, score: 1 - d }));
}
